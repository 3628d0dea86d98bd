// The typed questions: the plan's own (from validating it) and the planner's (from the last
// generation), and their answers. An answer the plan has a place for is written into it at
// once (`requirements_answer`); one it has no place for waits for a new generation.

import { useState, type RefObject } from 'react';
import { asApiError, requirementsAnswer } from '../../api';
import type { Lang, Requirement, ShownFinding } from '../../api/types';
import type { YamlEditorHandle } from './usePlanText';
import { fileForQuestion } from './documents';

export interface QuestionsOptions {
  lang: Lang;
  /** The text the editor holds at this instant (`usePlanText`): what an answer is written into. */
  textRef: RefObject<string>;
  /**
   * Where an answered plan is put. The editor reports it as an edit at once, so the text and
   * the edit sequence move before `setText` returns: a validation still on its way for the
   * older text is then dropped, and one whose timer fires for it is not sent.
   */
  editor: RefObject<Pick<YamlEditorHandle, 'setText'> | null>;
  /** The questions the plan itself raises; `useValidation` owns them. */
  planRequirements: Requirement[];
  setPlanRequirements(requirements: Requirement[]): void;
  /** The findings of the plan an answer produced. */
  showFindings(findings: readonly ShownFinding[]): void;
}

type QuestionError = { code: string; message: string };

export function useQuestions({ lang, textRef, editor, planRequirements, setPlanRequirements, showFindings }: QuestionsOptions) {
  // The planner's questions of the last generation, handed over by `restart` together with the
  // answers it used, so this hook needs nothing from the generation hook.
  const [plannerRequirements, setPlannerRequirements] = useState<Requirement[]>([]);
  const [answers, setAnswers] = useState<Record<string, unknown>>({});
  // Answered questions that only a new generation can take.
  const [regenerateIds, setRegenerateIds] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [questionError, setQuestionError] = useState<QuestionError | null>(null);
  const [focusId, setFocusId] = useState<string | null>(null);

  const planIds = new Set(planRequirements.map((requirement) => requirement.id));
  const plannerOnly = plannerRequirements.filter((requirement) => !planIds.has(requirement.id));
  const openQuestions = [...planRequirements, ...plannerOnly.filter((requirement) => !(requirement.id in answers))];
  const known = [...planRequirements, ...plannerRequirements];

  const answer = async (requirement: Requirement, value: unknown) => {
    setQuestionError(null);
    setFocusId(null);
    setBusy(true);
    try {
      const yaml = textRef.current;
      // Ask the plan itself which questions it can take (the validation that keeps
      // `planRequirements` fresh may still be on its way).
      const open = await requirementsAnswer({ yaml, answers: {}, lang });
      if (!open.requirements.some((candidate) => candidate.id === requirement.id)) {
        // The planner asked it but the plan has no place for it yet: a new generation takes it.
        // The plan's own questions are the ones just read (a list shown from an older text
        // would ask this question again).
        setPlanRequirements(open.requirements);
        setAnswers((all) => ({ ...all, [requirement.id]: value }));
        setRegenerateIds((ids) => (ids.includes(requirement.id) ? ids : [...ids, requirement.id]));
        return;
      }
      const response = await requirementsAnswer({ yaml, answers: { [requirement.id]: value }, lang });
      setAnswers((all) => ({ ...all, [requirement.id]: value }));
      editor.current?.setText(response.yaml, 0);
      setPlanRequirements(response.requirements);
      showFindings(response.findings);
    } catch (err) {
      const error = asApiError(err);
      setQuestionError({ code: error.code, message: error.message });
    } finally {
      setBusy(false);
    }
  };

  /** A file answer: uploaded from the browser, or picked with the desktop dialog. */
  const chooseFile = async (file: File | null): Promise<string | null> => {
    try {
      return await fileForQuestion(file);
    } catch (err) {
      const error = asApiError(err);
      setQuestionError({ code: error.code, message: error.message });
      return null;
    }
  };

  /** A generation finished with `requirements`, having been given `used` as answers. */
  const restart = (requirements: Requirement[], used: Record<string, unknown>) => {
    setPlannerRequirements(requirements);
    setAnswers(used);
    setRegenerateIds([]);
    setQuestionError(null);
    setFocusId(null);
  };

  // `waiting` counts the answers that wait for a new generation; `ask` shows a question first
  // (from "ask" in the missing items).
  const state = { open: openQuestions, known, answers, waiting: regenerateIds.length, busy, error: questionError, focusId };
  return { ...state, ask: setFocusId, answer, chooseFile, restart };
}
