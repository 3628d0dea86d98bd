// What an administrator needs to look into a failure — the error code, the server's own message,
// an internal path — kept out of the accountant's way: a closed disclosure under the translated
// sentence. Its content is marked `translate="no"`: it is quoted as the server wrote it.

import type { Lang } from '../api/types';
import { t } from './i18n';

interface Props {
  lang: Lang;
  /** The stable error code, if there is one. */
  code?: string | null | undefined;
  /** Lines quoted as they came (server messages, paths, notes). */
  lines?: readonly (string | null | undefined)[];
}

export function TechnicalDetails({ lang, code, lines = [] }: Props) {
  const shown = lines.filter((line): line is string => typeof line === 'string' && line.trim() !== '');
  if ((code === null || code === undefined || code === '') && shown.length === 0) return null;
  return (
    <details className="tech-details" data-testid="tech-details">
      <summary>{t(lang, 'tech.summary')}</summary>
      <div translate="no">
        {code ? (
          <p>
            <code data-testid="tech-code">{code}</code>
          </p>
        ) : null}
        {shown.map((line, index) => (
          <p key={index} className="tech-line">
            {line}
          </p>
        ))}
      </div>
    </details>
  );
}
