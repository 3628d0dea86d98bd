// The validator's findings as a list; choosing one moves the editor cursor to it.

import type { Lang, ShownFinding } from '../../api/types';
import { t } from '../../shared/i18n';
import type { FindingsState } from './useValidation';

interface Props {
  state: FindingsState;
  lang: Lang;
  onSelect(finding: ShownFinding): void;
}

function location(finding: ShownFinding, lang: Lang): string {
  if (finding.line === null) return t(lang, 'findings.noLocation');
  if (finding.column === null) return t(lang, 'findings.line', { line: finding.line });
  return t(lang, 'findings.lineColumn', { line: finding.line, column: finding.column });
}

function Empty({ text, tone }: { text: string; tone: 'ok' | 'muted' | 'error' }) {
  return (
    <div className={`empty empty-${tone}`} data-testid="findings-empty">
      {tone === 'ok' ? <span className="empty-check" aria-hidden="true">✓</span> : null}
      <p>{text}</p>
    </div>
  );
}

export function FindingsPanel({ state, lang, onSelect }: Props) {
  let body;
  switch (state.kind) {
    case 'empty-doc':
      body = <Empty text={t(lang, 'findings.emptyDoc')} tone="muted" />;
      break;
    case 'pending':
      body = <Empty text={t(lang, 'findings.pending')} tone="muted" />;
      break;
    case 'failed':
      body = <Empty text={state.message} tone="error" />;
      break;
    case 'done':
      body =
        state.findings.length === 0 ? (
          <Empty text={t(lang, 'findings.none')} tone="ok" />
        ) : (
          <ol className="finding-list" data-testid="findings-list">
            {state.findings.map((finding, index) => (
              <li key={`${finding.code}-${finding.path}-${index}`}>
                <button
                  type="button"
                  className={`finding finding-${finding.severity}`}
                  data-testid="finding"
                  data-multiline=""
                  data-code={finding.code}
                  data-severity={finding.severity}
                  data-line={finding.line ?? ''}
                  title={`${t(lang, 'findings.goTo')} (${finding.code})`}
                  onClick={() => onSelect(finding)}
                >
                  <span className="finding-head">
                    <span className={`severity severity-${finding.severity}`}>
                      {t(lang, finding.severity === 'warning' ? 'findings.warning' : 'findings.error')}
                    </span>
                    <span className="finding-location">{location(finding, lang)}</span>
                  </span>
                  <span className="finding-message">{finding.message}</span>
                  {finding.node_id !== null ? (
                    <span className="finding-meta">
                      {t(lang, 'findings.node')}: <code translate="no">{finding.node_id}</code>
                    </span>
                  ) : null}
                  {finding.hint ? (
                    <span className="finding-hint">
                      {t(lang, 'findings.hint')}: {finding.hint}
                    </span>
                  ) : null}
                </button>
              </li>
            ))}
          </ol>
        );
      break;
  }
  return (
    <aside className="panel findings-panel" data-testid="findings" aria-label={t(lang, 'findings.title')}>
      <header className="panel-header">
        <h2>{t(lang, 'findings.title')}</h2>
        {state.kind === 'done' && state.findings.length > 0 ? (
          <span className="count-badge" data-testid="findings-count">
            {state.findings.length}
          </span>
        ) : null}
      </header>
      <div className="panel-body">{body}</div>
    </aside>
  );
}
