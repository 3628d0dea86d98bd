// Generation progress as the UI shows it: the planner's stages in order, each with the time
// it started and took, built from the streamed progress events; how a generation ended; and
// the generation's settings with the request fields they make.

import type { GenerationProgress, GenerationStage, PlanGenerateRequest, Status } from '../../api/types';

/** The stages in the order the planner runs them (compose replaces skeleton…wiring). */
export const STAGES: readonly GenerationStage[] = [
  'extracting',
  'retrieving',
  'composing',
  'skeleton',
  'questions',
  'wiring',
  'validating',
  'repair',
];

export interface StageStep {
  stage: GenerationStage;
  /** `n/of` of a repair round. */
  repair: { n: number; of: number } | null;
  message: string;
  startedMs: number;
  /** Null while it is the running step. */
  durationMs: number | null;
}

export interface ProgressState {
  steps: StageStep[];
  /** Time since the start of the latest event. */
  elapsedMs: number;
}

export const EMPTY_PROGRESS: ProgressState = { steps: [], elapsedMs: 0 };

function isStage(value: unknown): value is GenerationStage {
  return typeof value === 'string' && (STAGES as readonly string[]).includes(value);
}

/** Reads a streamed event; anything that is not a progress event is ignored (null). */
export function readProgress(event: unknown): GenerationProgress | null {
  if (typeof event !== 'object' || event === null) return null;
  const { stage, repair, message, elapsed_ms: elapsed } = event as Record<string, unknown>;
  if (!isStage(stage)) return null;
  let round: GenerationProgress['repair'] = null;
  if (typeof repair === 'object' && repair !== null) {
    const { n, of } = repair as Record<string, unknown>;
    if (typeof n === 'number' && typeof of === 'number') round = { n, of };
  }
  return {
    stage,
    repair: round,
    message: typeof message === 'string' ? message : '',
    ...(typeof elapsed === 'number' ? { elapsed_ms: elapsed } : {}),
  };
}

/**
 * Adds one event: a new stage (or a new repair round) closes the running step and opens a
 * new one; the same stage again (validating attempt 2 after a repair counts as new) only
 * updates its message. `fallbackElapsedMs` is used when the server sent no `elapsed_ms`.
 */
export function addProgress(state: ProgressState, event: GenerationProgress, fallbackElapsedMs: number): ProgressState {
  const at = event.elapsed_ms ?? fallbackElapsedMs;
  const steps = state.steps.slice();
  const last = steps[steps.length - 1];
  const repair = event.repair ?? null;
  const sameStep =
    last !== undefined &&
    last.durationMs === null &&
    last.stage === event.stage &&
    (last.repair?.n ?? 0) === (repair?.n ?? 0) &&
    // Validation runs once per attempt; each attempt is its own step.
    event.stage !== 'validating';
  if (sameStep) {
    steps[steps.length - 1] = { ...last, message: event.message };
  } else {
    if (last !== undefined && last.durationMs === null) {
      steps[steps.length - 1] = { ...last, durationMs: Math.max(0, at - last.startedMs) };
    }
    steps.push({ stage: event.stage, repair, message: event.message, startedMs: at, durationMs: null });
  }
  return { steps, elapsedMs: Math.max(state.elapsedMs, at) };
}

/** Closes the running step when the generation ends. */
export function finishProgress(state: ProgressState, endMs: number): ProgressState {
  const steps = state.steps.map((step) =>
    step.durationMs === null ? { ...step, durationMs: Math.max(0, endMs - step.startedMs) } : step,
  );
  return { steps, elapsedMs: Math.max(state.elapsedMs, endMs) };
}

/** `0.4 s`, `12.3 s`, `2:05`: short, and stable in width while it ticks. */
export function formatElapsed(ms: number): string {
  const safe = Math.max(0, Math.round(ms));
  if (safe < 60_000) return `${(safe / 1000).toFixed(1)} s`;
  const seconds = Math.floor(safe / 1000);
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
}

/**
 * Whether a generation's plan replaces what is in the editor: not when nothing fits (there is
 * no plan), and not when errors remain and the user already has a plan there, so a failed AI
 * attempt never overwrites the user's work (its attempts are shown beside it instead).
 */
export function replacesEditor(status: Status, editorText: string): boolean {
  if (status === 'no_fit') return false;
  return !(status === 'invalid' && editorText.trim() !== '');
}

/** How the last generation ended, as `GeneratePanel` shows it. */
export type GenerateOutcome =
  | { kind: 'none' }
  | {
      kind: 'done';
      status: Status;
      notes: string[];
      unreadable: string[];
      /** The templates used, in one line (「…」＋「…」を使います); null when none was. */
      composition: string | null;
      /** With `no_fit`: the nearest templates and blocks to start from. */
      suggestions: string[];
      /** The plan had errors left and the editor kept the user's plan instead. */
      kept?: boolean;
    }
  | { kind: 'failed'; code: string; detailCode: string | null; message: string };

/** The generation's options beyond the method (`GenerationSettings`). */
export interface GenerationSettingsValue {
  topkPerCategory: number;
  maxDocsChars: number;
  suggestWhen: boolean;
  suggestForeach: boolean;
  foreachVarName: string;
}

export const DEFAULT_GENERATION_SETTINGS: GenerationSettingsValue = {
  topkPerCategory: 6,
  maxDocsChars: 4000,
  suggestWhen: true,
  suggestForeach: true,
  foreachVarName: 'item',
};

/** The request fields of the settings that differ from the defaults. */
export function generationRequestFields(value: GenerationSettingsValue): Partial<PlanGenerateRequest> {
  const d = DEFAULT_GENERATION_SETTINGS;
  const fields: Partial<PlanGenerateRequest> = {};
  if (value.topkPerCategory !== d.topkPerCategory) fields.topk_per_category = value.topkPerCategory;
  if (value.maxDocsChars !== d.maxDocsChars) fields.max_docs_chars = value.maxDocsChars;
  if (value.suggestWhen !== d.suggestWhen) fields.suggest_when = value.suggestWhen;
  if (value.suggestForeach !== d.suggestForeach) fields.suggest_foreach = value.suggestForeach;
  const name = value.foreachVarName.trim();
  if (name !== '' && name !== d.foreachVarName) fields.foreach_var_name = name;
  return fields;
}
