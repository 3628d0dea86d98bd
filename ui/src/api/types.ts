// The API's request and response types come from generated.ts, which json-schema-to-typescript
// writes from keiri-api's JSON Schema (`make generated`; a unit test fails while it is stale),
// so a type can only change in Rust. This file re-exports them under their Rust names for the
// UI to import, and keeps only what the schema does not describe: the events a streamed call
// sends, the shapes the UI reads out of the API's free-form JSON values, the desktop shell's own
// command, and the findings list's widening of `Finding`.

import type { Finding, GenerationEvent, RunStatus, Stage } from './generated';

export type { ApiFunction, StreamingFunction } from './functions';
export type * from './generated';

/**
 * A line of the findings list, and a mark in the editor and the graph: a validator `Finding`, or
 * a node the sample run saw fail, shown the same way under the run's error code (`BLOCK_FAILED`,
 * …) where a finding has its plan rule.
 */
export type ShownFinding = Omit<Finding, 'code'> & { code: string };

// ---- Streamed events (generated too: `ChatEvent`, `RunEvent`, `LlmCall`) ----

/** One streamed progress event of `plan_generate` as the window reads it (`readProgress`
 * also takes an event without its time, and then uses the local clock). */
export type GenerationProgress = Omit<GenerationEvent, 'elapsed_ms'> & { elapsed_ms?: number };
export type GenerationStage = Stage;

/** A run's state once it has ended (keiri-run's `RunStatus` but `running`). */
export type EndedRunStatus = Exclude<RunStatus, 'running'>;

// ---- Shapes inside the API's free-form JSON values ----

export interface OutputColumn {
  name: string;
  /** The table's column type (`str`, `f64`, …) or the JSON type of a list's values. */
  type: string;
}

/** One output of a node as `run_output` sends it (`RunOutputResponse.outputs`). */
export type OutputPreview =
  | {
      kind: 'table';
      row_count: number;
      columns: OutputColumn[];
      rows: Record<string, unknown>[];
      truncated: boolean;
      /** Headers, code labels and amount columns the catalog knows (`questionTable.readLabels`). */
      labels?: unknown;
    }
  | { kind: 'json'; value: unknown };

// ---- The desktop shell's own command (not an API function) ----

/** What the desktop file dialog offers (`pick_files`). */
export interface PickFilesRequest {
  title?: string;
  /** Extensions without the dot, e.g. `['pdf', 'xlsx']`; every file when absent. */
  extensions?: string[];
  filter_name?: string;
}
