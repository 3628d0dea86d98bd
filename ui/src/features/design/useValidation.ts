// Checking the plan as it is written: findings, counts and the plan's graph from
// `plan_validate` once typing pauses, and the questions an invalid plan raises (open vars,
// missing inputs). This hook is the one owner of those questions (`planRequirements`): an
// answer (`useQuestions`) sets them through the setter it returns.

import { useCallback, useEffect, useState, type RefObject } from 'react';
import { asApiError, planValidate, requirementsAnswer } from '../../api';
import type { Lang, PlanValidateResponse, Requirement, ShownFinding } from '../../api/types';
import { errorText, t } from '../../shared/i18n';

/** How long typing must pause before the plan is validated again. */
export const VALIDATE_DEBOUNCE_MS = 400;

/** The findings as `FindingsPanel` shows them. */
export type FindingsState =
  | { kind: 'empty-doc' }
  | { kind: 'pending' }
  | { kind: 'done'; findings: readonly ShownFinding[] }
  | { kind: 'failed'; message: string };

export interface ValidationOptions {
  /** The editor's text as last rendered: a pause after it changes validates it. */
  text: string;
  lang: Lang;
  /** The text the editor holds at this instant (`usePlanText`). */
  textRef: RefObject<string>;
  /** The edit sequence (`usePlanText`): bumped by every edit and every validation. */
  sequence: RefObject<number>;
}

export function useValidation({ text, lang, textRef, sequence }: ValidationOptions) {
  const [findingsState, setFindingsState] = useState<FindingsState>({ kind: 'pending' });
  const [summary, setSummary] = useState<PlanValidateResponse | null>(null);
  // The text `summary` answers: it lags the editor by the debounce and the request, and the
  // graph shows a sample run's states only while it is of the text that ran.
  const [summaryText, setSummaryText] = useState<string | null>(null);
  const [validating, setValidating] = useState(false);
  // The questions this plan raises; kept here because validating is what finds them.
  const [planRequirements, setPlanRequirements] = useState<Requirement[]>([]);

  const validate = useCallback(
    async (yaml: string, language: Lang) => {
      // A debounce timer set for an older text can fire after the editor already holds a newer
      // one (an answer replaces the text, and React commits that render — clearing the timer —
      // a moment later): validating it would show that older text's questions again.
      if (yaml !== textRef.current) return;
      sequence.current += 1;
      const id = sequence.current;
      if (yaml.trim() === '') {
        setFindingsState({ kind: 'empty-doc' });
        setSummary(null);
        setPlanRequirements([]);
        setValidating(false);
        return;
      }
      setValidating(true);
      try {
        const response = await planValidate({ yaml, lang: language });
        if (id !== sequence.current) return;
        setFindingsState({ kind: 'done', findings: response.findings });
        setSummary(response);
        setSummaryText(yaml);
        // The questions this plan raises (open vars, missing inputs); none when it is valid.
        if (response.error_count === 0) {
          setPlanRequirements([]);
        } else {
          const asked = await requirementsAnswer({ yaml, answers: {}, lang: language }).catch(() => null);
          if (id === sequence.current && asked !== null) setPlanRequirements(asked.requirements);
        }
      } catch (err) {
        if (id !== sequence.current) return;
        const error = asApiError(err);
        setFindingsState({
          kind: 'failed',
          message: t(language, 'validate.failed', { message: `${errorText(language, error.code)} (${error.code})` }),
        });
        setSummary(null);
      } finally {
        if (id === sequence.current) setValidating(false);
      }
    },
    [textRef, sequence],
  );

  // Validate once typing pauses, and again when the language changes so the validator's
  // messages follow it.
  useEffect(() => {
    const timer = window.setTimeout(() => void validate(text, lang), VALIDATE_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [text, lang, validate]);

  /** Findings that came from elsewhere (an answer, a refused registration). */
  const showFindings = useCallback((findings: readonly ShownFinding[]) => setFindingsState({ kind: 'done', findings }), []);

  let status: { tone: string; text: string };
  if (validating) {
    status = { tone: 'busy', text: t(lang, 'status.validating') };
  } else if (summary === null) {
    status = { tone: 'idle', text: t(lang, 'editor.hint') };
  } else if (summary.error_count === 0 && summary.warning_count === 0) {
    status = { tone: 'ok', text: t(lang, 'status.valid') };
  } else {
    status = {
      tone: summary.error_count > 0 ? 'error' : 'warning',
      text: t(lang, 'status.counts', { errors: summary.error_count, warnings: summary.warning_count }),
    };
  }

  const checked = { findingsState, summary, summaryText, errorCount: summary?.error_count ?? 0, status, planRequirements };
  return { ...checked, setPlanRequirements, showFindings, validate };
}
