// The 自動生成 button and the generation's progress: one row per stage with its time, a
// running clock, and Cancel. The work runs on the server (or the desktop shell's thread), and
// progress arrives as streamed events, so typing never waits for it.

import { useEffect, useState } from 'react';
import type { Lang } from '../../api/types';
import { formatElapsed, type GenerateOutcome, type ProgressState } from './generation';
import { errorText, t } from '../../shared/i18n';
import { TechnicalDetails } from '../../shared/TechnicalDetails';

/**
 * The planner's notes split by who they are for. The server writes some notes in the request's
 * language (the compose notes, say) and some only in English for administrators (which
 * environment variable enables a fallback, which CLI flag to try): in Japanese mode the latter
 * go into the closed administrators' disclosure instead of in front of the accountant.
 */
export function readableNotes(lang: Lang, notes: readonly string[]): { shown: string[]; technical: string[] } {
  if (lang !== 'ja') return { shown: [...notes], technical: [] };
  const japanese = /[\u3040-\u30ff\u3400-\u9fff]/u;
  return {
    shown: notes.filter((note) => japanese.test(note)),
    technical: notes.filter((note) => !japanese.test(note)),
  };
}

interface Props {
  lang: Lang;
  running: boolean;
  /** When the running generation started (performance.now()). */
  startedAt: number | null;
  progress: ProgressState;
  outcome: GenerateOutcome;
  canGenerate: boolean;
  title: string;
  onGenerate(): void;
  onCancel(): void;
  /** Takes the user to the template picker (the composition line's 変更). */
  onChangeTemplates(): void;
  /** Puts the generated plan the editor kept out (`kept`) into the editor after all. */
  onUseAttempt(): void;
}

function useClock(running: boolean, startedAt: number | null): number {
  const [now, setNow] = useState(() => performance.now());
  useEffect(() => {
    if (!running) return undefined;
    const timer = window.setInterval(() => setNow(performance.now()), 100);
    return () => window.clearInterval(timer);
  }, [running]);
  return running && startedAt !== null ? Math.max(0, now - startedAt) : 0;
}

export function GeneratePanel({ lang, running, startedAt, progress, outcome, canGenerate, title, onGenerate, onCancel, onChangeTemplates, onUseAttempt }: Props) {
  const clock = useClock(running, startedAt);
  const total = running ? Math.max(clock, progress.elapsedMs) : progress.elapsedMs;
  return (
    <section className="generate" aria-label={t(lang, 'generate.title')}>
      <div className="generate-actions">
        <button
          type="button"
          className="button button-primary button-generate"
          data-testid="generate"
          title={title}
          disabled={running || !canGenerate}
          onClick={onGenerate}
        >
          {running ? t(lang, 'generate.running') : t(lang, 'generate.button')}
        </button>
        {running ? (
          <button type="button" className="button" data-testid="generate-cancel" onClick={onCancel}>
            {t(lang, 'generate.cancel')}
          </button>
        ) : null}
        {progress.steps.length > 0 ? (
          <span className="elapsed" data-testid="generate-elapsed">
            {formatElapsed(total)}
          </span>
        ) : null}
      </div>
      {progress.steps.length > 0 ? (
        <ol className="stages" data-testid="progress">
          {progress.steps.map((step, index) => {
            const current = running && step.durationMs === null;
            const label =
              step.stage === 'repair' && step.repair
                ? t(lang, 'stage.repairN', { n: step.repair.n, of: step.repair.of })
                : t(lang, `stage.${step.stage}`);
            return (
              <li
                key={index}
                className={current ? 'stage stage-current' : 'stage'}
                data-testid="progress-step"
                data-stage={step.stage}
                title={step.message}
              >
                <span className="stage-dot" aria-hidden="true" />
                <span className="stage-label">{label}</span>
                <span className="stage-time">
                  {step.durationMs === null ? (current ? formatElapsed(Math.max(0, total - step.startedMs)) : '') : formatElapsed(step.durationMs)}
                </span>
              </li>
            );
          })}
        </ol>
      ) : null}
      {outcome.kind === 'failed' ? (
        <div className="notice notice-error" role="alert" data-testid="generate-error" data-code={outcome.code} data-detail-code={outcome.detailCode ?? ''}>
          <span>
            {errorText(lang, outcome.detailCode ?? outcome.code)}
            <TechnicalDetails
              lang={lang}
              code={outcome.code}
              lines={[outcome.detailCode !== null && outcome.detailCode !== outcome.code ? outcome.detailCode : null, outcome.message]}
            />
          </span>
        </div>
      ) : null}
      {outcome.kind === 'done' ? (
        <div className={`notice notice-${outcome.status === 'valid' ? 'ok' : 'warning'}`} role="status" data-testid="generate-result" data-status={outcome.status}>
          <span>
            {t(lang, `generate.status.${outcome.status}`)}
            {outcome.kept === true ? (
              <span className="notice-detail" data-testid="generate-kept">
                {t(lang, 'generate.kept')}{' '}
                <button type="button" className="button button-small" data-testid="generate-use-attempt" onClick={onUseAttempt}>
                  {t(lang, 'generate.useAttempt')}
                </button>
              </span>
            ) : null}
            {outcome.composition !== null ? (
              <span className="notice-detail" data-testid="generate-composition">
                {outcome.composition}{' '}
                <button
                  type="button"
                  className="button button-small"
                  data-testid="generate-change-templates"
                  title={t(lang, 'generate.changeTemplatesTitle')}
                  onClick={onChangeTemplates}
                >
                  {t(lang, 'generate.changeTemplates')}
                </button>
              </span>
            ) : null}
            {outcome.suggestions.length > 0 ? (
              <span className="notice-detail" data-testid="generate-nearest">
                {t(lang, 'generate.nearest')}: {outcome.suggestions.join('、')}
              </span>
            ) : null}
            {outcome.unreadable.length > 0 ? <span className="notice-detail">{t(lang, 'generate.unreadable', { files: outcome.unreadable.join(', ') })}</span> : null}
            {readableNotes(lang, outcome.notes).shown.map((note, index) => (
              <span key={index} className="notice-detail">
                {note}
              </span>
            ))}
            <TechnicalDetails lang={lang} lines={readableNotes(lang, outcome.notes).technical} />
          </span>
        </div>
      ) : null}
    </section>
  );
}
