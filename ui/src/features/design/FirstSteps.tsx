// The first screen while there is no plan: the three steps of the design loop (指示を書く →
// 資料を添付 → 自動生成) and example instructions that fill the instruction when clicked. No
// sample plan is pre-filled: a plan shown before the person asked for one reads as theirs,
// validated and ready to register.

import type { Lang } from '../../api/types';
import { t, type MessageKey } from '../../shared/i18n';

interface Props {
  lang: Lang;
  /** Puts an example into the instruction field. */
  onExample(instruction: string): void;
}

const STEPS: [MessageKey, MessageKey][] = [
  ['first.step1', 'first.step1Detail'],
  ['first.step2', 'first.step2Detail'],
  ['first.step3', 'first.step3Detail'],
];

/** The example instructions, in the UI language. */
export const EXAMPLES: MessageKey[] = ['first.example1', 'first.example2', 'first.example3'];

export function FirstSteps({ lang, onExample }: Props) {
  return (
    <section className="first-steps" data-testid="first-steps" aria-label={t(lang, 'first.title')}>
      <h2 className="first-steps-title">{t(lang, 'first.title')}</h2>
      <ol className="first-steps-list">
        {STEPS.map(([title, detail], index) => (
          <li key={title} className="first-step" data-testid="first-step">
            <span className="first-step-number" aria-hidden="true">
              {index + 1}
            </span>
            <span>
              <strong className="first-step-title">{t(lang, title)}</strong>
              <span className="first-step-detail">{t(lang, detail)}</span>
            </span>
          </li>
        ))}
      </ol>
      <p className="first-steps-examples-label">{t(lang, 'first.examples')}</p>
      <div className="first-steps-examples">
        {EXAMPLES.map((key) => (
          <button key={key} type="button" className="example-instruction" data-testid="example-instruction" onClick={() => onExample(t(lang, key))}>
            {t(lang, key)}
          </button>
        ))}
      </div>
      <p className="muted first-steps-yaml">{t(lang, 'first.orYaml')}</p>
    </section>
  );
}
