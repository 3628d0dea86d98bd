// The generation's options beyond the method, behind a disclosure: how many candidate blocks
// per category, how much of the documents goes to the model, and whether the model may add
// conditions (when) and repetitions (loops), with the loop variable's name. The defaults are
// the planner's; only what the user changed is sent.

import type { Lang } from '../../api/types';
import { t } from '../../shared/i18n';
import type { GenerationSettingsValue } from './generation';

interface Props {
  lang: Lang;
  value: GenerationSettingsValue;
  onChange(value: GenerationSettingsValue): void;
}

function NumberRow(props: { label: string; testId: string; value: number; min: number; max: number; step?: number; onChange(value: number): void }) {
  return (
    <label className="settings-row">
      <span>{props.label}</span>
      <input
        type="number"
        className="input input-small"
        min={props.min}
        max={props.max}
        step={props.step ?? 1}
        value={props.value}
        data-testid={props.testId}
        onChange={(event) => props.onChange(Number(event.target.value))}
      />
    </label>
  );
}

function CheckRow(props: { label: string; testId: string; checked: boolean; onChange(checked: boolean): void }) {
  return (
    <label className="settings-row">
      <input type="checkbox" checked={props.checked} data-testid={props.testId} onChange={(event) => props.onChange(event.target.checked)} />
      <span>{props.label}</span>
    </label>
  );
}

export function GenerationSettings({ lang, value, onChange }: Props) {
  const set = (patch: Partial<GenerationSettingsValue>) => onChange({ ...value, ...patch });
  return (
    <details className="generation-settings" data-testid="generation-settings">
      <summary className="muted">{t(lang, 'generateSettings.title')}</summary>
      <NumberRow
        label={t(lang, 'generateSettings.topk')}
        testId="generation-topk"
        value={value.topkPerCategory}
        min={5}
        max={8}
        onChange={(n) => set({ topkPerCategory: Math.min(8, Math.max(5, n || 6)) })}
      />
      <NumberRow
        label={t(lang, 'generateSettings.maxDocsChars')}
        testId="generation-max-docs"
        value={value.maxDocsChars}
        min={500}
        max={20000}
        step={500}
        onChange={(n) => set({ maxDocsChars: Math.max(500, n || 4000) })}
      />
      <CheckRow
        label={t(lang, 'generateSettings.suggestWhen')}
        testId="generation-suggest-when"
        checked={value.suggestWhen}
        onChange={(checked) => set({ suggestWhen: checked })}
      />
      <CheckRow
        label={t(lang, 'generateSettings.suggestForeach')}
        testId="generation-suggest-foreach"
        checked={value.suggestForeach}
        onChange={(checked) => set({ suggestForeach: checked })}
      />
      <label className="settings-row">
        <span>{t(lang, 'generateSettings.foreachVar')}</span>
        <input
          type="text"
          className="input input-small"
          value={value.foreachVarName}
          disabled={!value.suggestForeach}
          data-testid="generation-foreach-var"
          onChange={(event) => set({ foreachVarName: event.target.value })}
        />
      </label>
    </details>
  );
}
