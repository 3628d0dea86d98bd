// Checking the plan as it is written: findings and counts from `plan_validate` once typing
// pauses, and the questions an invalid plan raises (open vars, missing inputs). Every edit
// bumps a sequence so a response for an older text is dropped: findings are only ever shown
// against the text they were computed for.

import { useCallback, useEffect, useRef, useState } from 'react';
import { asApiError, planValidate, requirementsAnswer } from '../api';
import type { Finding, Lang, PlanValidateResponse, Requirement } from '../api/types';
import type { FindingsState } from '../components/FindingsPanel';
import { errorText, t } from '../i18n';

/** How long typing must pause before the plan is validated again. */
export const VALIDATE_DEBOUNCE_MS = 400;

export function useValidation(text: string, lang: Lang) {
  const [findingsState, setFindingsState] = useState<FindingsState>({ kind: 'pending' });
  const [summary, setSummary] = useState<PlanValidateResponse | null>(null);
  const [validating, setValidating] = useState(false);
  // The questions this plan raises; kept here because validating is what finds them.
  const [planRequirements, setPlanRequirements] = useState<Requirement[]>([]);
  const sequence = useRef(0);

  const validate = useCallback(async (yaml: string, language: Lang) => {
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
  }, []);

  // Validate once typing pauses, and again when the language changes so the validator's
  // messages follow it.
  useEffect(() => {
    const timer = window.setTimeout(() => void validate(text, lang), VALIDATE_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [text, lang, validate]);

  /** The text was edited: a response still on its way describes the old text. */
  const invalidate = useCallback(() => {
    sequence.current += 1;
  }, []);

  /** Which edit the text is at: equal before and after an await means it was not edited. */
  const revision = useCallback(() => sequence.current, []);

  /** Findings that came from elsewhere (an answer, a refused registration). */
  const showFindings = useCallback((findings: Finding[]) => setFindingsState({ kind: 'done', findings }), []);

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

  const checked = { findingsState, errorCount: summary?.error_count ?? 0, status, planRequirements };
  return { ...checked, setPlanRequirements, showFindings, validate, invalidate, revision };
}
