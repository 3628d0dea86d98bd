// Running the planner (`plan_generate`): what it is asked with (templates, apply mode,
// settings), its streamed progress, cancelling it, and the last response.

import { useCallback, useRef, useState } from 'react';
import { ApiError, asApiError, planGenerate } from '../../api';
import type { ApplyMode, Lang, PlanGenerateResponse } from '../../api/types';
import {
  DEFAULT_GENERATION_SETTINGS,
  EMPTY_PROGRESS,
  addProgress,
  finishProgress,
  generationRequestFields,
  readProgress,
  type GenerateOutcome,
  type GenerationSettingsValue,
  type ProgressState,
} from './generation';

/** The lower crate's code an API error carries in `details.code` (e.g. `LLM_CONNECTION`). */
function detailCode(error: ApiError): string | null {
  if (typeof error.details !== 'object' || error.details === null) return null;
  const code = (error.details as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : null;
}

export interface GenerationOptions {
  instruction: string;
  readyDocs: string[];
  /** Documents still on their way: a generation waits for them (it would run without them). */
  documentsPending: boolean;
  pinned: string[];
  lang: Lang;
  /**
   * A generation succeeded; `answers` are the ones it was given. Returns whether its plan went
   * into the editor (a plan with errors left does not replace the user's).
   */
  onGenerated(response: PlanGenerateResponse, answers: Record<string, unknown>): boolean;
}

export function useGeneration({ instruction, readyDocs, documentsPending, pinned, lang, onGenerated }: GenerationOptions) {
  const [selectedTemplates, setSelectedTemplates] = useState<string[]>([]);
  // null: the server's choice, AI with template hints when a model is configured and
  // template composition (with a note saying so) when none is, so a first try without a key
  // gives a plan instead of an error.
  const [applyMode, setApplyMode] = useState<ApplyMode | null>(null);
  const [settings, setSettings] = useState<GenerationSettingsValue>(DEFAULT_GENERATION_SETTINGS);
  const [running, setRunning] = useState(false);
  const [startedAt, setStartedAt] = useState<number | null>(null);
  const [progress, setProgress] = useState<ProgressState>(EMPTY_PROGRESS);
  const [outcome, setOutcome] = useState<GenerateOutcome>({ kind: 'none' });
  const [response, setResponse] = useState<PlanGenerateResponse | null>(null);
  const [answers, setAnswers] = useState<Record<string, unknown>>({});
  const abort = useRef<AbortController | null>(null);

  const generate = useCallback(
    async (withAnswers: Record<string, unknown> = {}) => {
      if (abort.current !== null || instruction.trim() === '' || documentsPending) return;
      const controller = new AbortController();
      abort.current = controller;
      const started = performance.now();
      setStartedAt(started);
      setProgress(EMPTY_PROGRESS);
      setOutcome({ kind: 'none' });
      setRunning(true);
      try {
        const generated = await planGenerate(
          {
            instruction,
            docs: readyDocs,
            templates: selectedTemplates,
            pinned_blocks: pinned,
            apply_mode: applyMode ?? undefined,
            answers: withAnswers,
            // With documents attached, a plan is run on them before it is accepted.
            verify_by_running: readyDocs.length > 0,
            lang,
            ...generationRequestFields(settings),
          },
          {
            signal: controller.signal,
            onProgress: (event) => {
              const read = readProgress(event);
              if (read !== null) setProgress((state) => addProgress(state, read, performance.now() - started));
            },
          },
        );
        setProgress((state) => finishProgress(state, performance.now() - started));
        setResponse(generated);
        setAnswers(withAnswers);
        const applied = onGenerated(generated, withAnswers);
        setOutcome({
          kind: 'done',
          status: generated.status,
          notes: generated.notes,
          unreadable: generated.unreadable_docs,
          composition: generated.composition,
          suggestions: generated.status === 'no_fit' ? generated.suggestions : [],
          kept: !applied && generated.status === 'invalid',
        });
      } catch (err) {
        const error = asApiError(err);
        setProgress((state) => finishProgress(state, performance.now() - started));
        setOutcome({ kind: 'failed', code: error.code, detailCode: detailCode(error), message: error.message });
      } finally {
        abort.current = null;
        setRunning(false);
      }
    },
    [instruction, readyDocs, documentsPending, selectedTemplates, pinned, applyMode, settings, lang, onGenerated],
  );

  const cancel = () => abort.current?.abort();

  const toggleTemplate = (id: string) =>
    setSelectedTemplates((list) => (list.includes(id) ? list.filter((other) => other !== id) : [...list, id]));

  // `response` is the last successful generation's.
  const inputs = { selectedTemplates, toggleTemplate, applyMode, setApplyMode, settings, setSettings };
  return { ...inputs, running, startedAt, progress, outcome, response, answers, generate, cancel };
}
