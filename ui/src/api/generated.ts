// Generated from ui/src/api/schema.json (crates/keiri-api/src/surface.rs) — do not edit;
// `make generated` rewrites it.

/**
 * Which backend applies a patch.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "BackendKind".
 */
export type BackendKind = 'native' | 'git';
/**
 * Which scores rank the candidates.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Mode".
 */
export type Mode = 'bm25' | 'dense' | 'hybrid';
/**
 * How lexical and dense scores are combined in hybrid mode.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "FusionKind".
 */
export type FusionKind = 'convex' | 'rrf';
/**
 * The kind of thing a document describes. Each kind has its own categories, so a category
 * filter and the per-category Top-K cap always apply within one kind.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DocKind".
 */
export type DocKind = 'block' | 'template';
/**
 * The language of user-facing messages.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Lang".
 */
export type Lang = 'en' | 'ja';
/**
 * How a response is shaped.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "OutputFormat".
 */
export type OutputFormat = 'toon' | 'json';
/**
 * A response in the requested [`OutputFormat`].
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DigestResponseOutput".
 */
export type DigestResponseOutput = ToonResponse | DigestResponse;
/**
 * Limits echoed in a TOON response.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "LimitsInfo".
 */
export type LimitsInfo = BatchLimits | ExtractLimits;
/**
 * A response in the requested [`OutputFormat`].
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ExtractResponseOutput".
 */
export type ExtractResponseOutput = ToonResponse | ExtractResponse;
/**
 * A document format this crate reads.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Format".
 */
export type Format = ('txt' | 'md' | 'csv' | 'pdf' | 'docx' | 'xlsx' | 'xlsm') | 'code';
/**
 * How section content is given.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ContentFormat".
 */
export type ContentFormat = 'text' | 'json' | 'raw';
/**
 * A response in the requested [`OutputFormat`].
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SectionsResponseOutput".
 */
export type SectionsResponseOutput = ToonResponse | SectionsResponse;
/**
 * Section content: a string (`text`, `raw`) or numbered lines (`json`).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SectionContent".
 */
export type SectionContent = string | NumberedLine[];
/**
 * A response in the requested [`OutputFormat`].
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "MetricsResponseOutput".
 */
export type MetricsResponseOutput = ToonResponse | MetricsResponse;
/**
 * Which kind of provider a configuration talks to.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ProviderKind".
 */
export type ProviderKind = 'openai' | 'azure' | 'openai_compatible';
/**
 * What kind of node this is.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "NodeKind".
 */
export type NodeKind = ('block' | 'loop' | 'subflow') | 'unknown';
/**
 * Whether a workbook patch node could be previewed.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "WorkbookPreviewStatus".
 */
export type WorkbookPreviewStatus = 'ready' | 'unresolved' | 'failed';
/**
 * Stable error codes; front-ends branch on these, never on message text.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ErrorCode".
 */
export type ErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_ARGUMENT'
  | 'YAML_PARSE'
  | 'PLAN_INVALID'
  | 'NOT_FOUND'
  | 'PATH_DENIED'
  | 'ALREADY_EXISTS'
  | 'IO_ERROR'
  | 'FILE_LOCKED'
  | 'INTERNAL'
  | 'WORKBOOK_UNREADABLE'
  | 'BACKEND_ERROR'
  | 'PREFLIGHT_TIMEOUT'
  | 'FILE_TOO_LARGE'
  | 'APPLY_FAILED'
  | 'LLM_NOT_CONFIGURED'
  | 'LLM_FAILED'
  | 'RUN_NOT_FOUND'
  | 'RUN_STATE_INVALID'
  | 'CANCELLED'
  | 'KEYCHAIN_UNAVAILABLE'
  | 'CHANGE_CONFLICT'
  | 'SESSION_BUSY'
  | 'HOST_NOT_ALLOWED'
  | 'ORIGIN_NOT_ALLOWED'
  | 'TOKEN_INVALID'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'WORKSPACE_NOT_ALLOWED'
  | 'SHEET_NOT_FOUND'
  | 'LIMIT_EXCEEDED'
  | 'ENV_NOT_ALLOWED';
/**
 * One operation. Serialised flat with an `op` tag, e.g.
 * `{"op":"set_value","sheet":"Sheet1","cell":"B2","value":42}`.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchOp".
 */
export type PatchOp =
  | {
      op: 'set_value';
      sheet: string;
      cell: string;
      value: CellValue | null;
    }
  | {
      op: 'set_formula';
      sheet: string;
      cell: string;
      formula: string;
    }
  | {
      op: 'add_sheet';
      sheet: string;
    }
  | {
      op: 'set_range_values';
      sheet: string;
      range: string;
      values: (CellValue | null)[][];
    }
  | {
      op: 'fill_formula';
      sheet: string;
      range: string;
      base_cell: string;
      formula?: string | null;
    }
  | {
      op: 'set_value_if';
      sheet: string;
      cell: string;
      expected: CellValue | null;
      value: CellValue | null;
    }
  | {
      op: 'set_formula_if';
      sheet: string;
      cell: string;
      expected: CellValue | null;
      formula: string;
    }
  | {
      op: 'delete_sheet';
      sheet: string;
      copy_of?: string | null;
    }
  | {
      op: 'draw_grid_border';
      sheet: string;
      base_cell: string;
      row_count: number;
      col_count: number;
    }
  | {
      op: 'set_bold';
      sheet: string;
      cell?: string | null;
      range?: string | null;
      bold: boolean;
    }
  | {
      op: 'set_font_size';
      sheet: string;
      cell?: string | null;
      range?: string | null;
      font_size: number;
    }
  | {
      op: 'set_font_color';
      sheet: string;
      cell?: string | null;
      range?: string | null;
      color: string;
    }
  | {
      op: 'set_fill_color';
      sheet: string;
      cell?: string | null;
      range?: string | null;
      fill_color: string;
    }
  | {
      op: 'set_dimensions';
      sheet: string;
      rows?: number[] | null;
      columns?: ColumnId[] | null;
      row_height?: number | null;
      column_width?: number | null;
    }
  | {
      op: 'auto_fit_columns';
      sheet: string;
      columns?: ColumnId[] | null;
      min_width?: number | null;
      max_width?: number | null;
    }
  | {
      op: 'merge_cells';
      sheet: string;
      range: string;
    }
  | {
      op: 'unmerge_cells';
      sheet: string;
      range: string;
    }
  | {
      op: 'set_alignment';
      sheet: string;
      cell?: string | null;
      range?: string | null;
      horizontal_align?: HorizontalAlign | null;
      vertical_align?: VerticalAlign | null;
      wrap_text?: boolean | null;
    }
  | {
      op: 'set_style';
      sheet: string;
      cell?: string | null;
      range?: string | null;
      bold?: boolean | null;
      font_size?: number | null;
      color?: string | null;
      fill_color?: string | null;
      horizontal_align?: HorizontalAlign | null;
      vertical_align?: VerticalAlign | null;
      wrap_text?: boolean | null;
    }
  | {
      op: 'apply_table_style';
      sheet: string;
      range: string;
      style: string;
      table_name?: string | null;
    }
  | {
      op: 'delete_table';
      sheet: string;
      table_name: string;
    }
  | {
      op: 'restore_design_snapshot';
      sheet: string;
      design_snapshot: DesignSnapshot;
    }
  | {
      op: 'update_rows_by_key';
      sheet: string;
      /**
       * The row holding the column headers (1-based; default 1). Keys are searched below it.
       */
      header_row: number;
      /**
       * The key column: its header text, or its letter.
       */
      key_column: string;
      rows: {
        [k: string]: CellValue | null | undefined;
      }[];
      /**
       * A key no row has: `error` (default), `append` or `skip`.
       */
      on_missing: OnMissing & string;
      /**
       * With `on_missing: append`: whether totals over the table are extended to the appended
       * rows (see `append_rows`; default `true`).
       */
      extend_ranges: boolean;
      /**
       * A fill colour (`#D9D9D9`) for each row found, as a leaver's row is greyed out.
       */
      fill_color?: string | null;
      /**
       * The columns `fill_color` paints (`A:P`); default: from the first to the last header.
       */
      fill_columns?: string | null;
    }
  | {
      op: 'append_rows';
      sheet: string;
      /**
       * The row holding the column headers (1-based). Without it, columns are named by letter.
       */
      header_row?: number | null;
      rows: {
        [k: string]: CellValue | null | undefined;
      }[];
      /**
       * `last` (default): styles and shifted formulas of the row above; `none`: values only.
       */
      copy_style_from: CopyStyleFrom & string;
      /**
       * Whether formulas outside the table that add up its rows (`=SUM(H6:H12)`) are extended
       * to the appended rows (default `true`, as an accountant extends a total by hand); with
       * `false` they are left and named in a warning.
       */
      extend_ranges: boolean;
    }
  | {
      op: 'copy_sheet';
      sheet: string;
      /**
       * The new sheet's name (aliases `name`, `target`).
       */
      new_sheet: string;
      /**
       * Where the copy goes among the tabs, 1-based (default: after the last).
       */
      position?: number | null;
    };
/**
 * A scalar a cell holds or a request gives: text, number, boolean, or a value with an explicit
 * kind (`{"kind": "date", "value": "2025-03-31"}`). `null` (an empty cell) is written as
 * `Option<CellValue>::None`.
 *
 * Text that is exactly an ISO date (`"2025-03-31"`, a real calendar date) is written as an
 * Excel date, as Excel itself does with a date typed into a cell and as `excel.write_table`
 * does; `{"kind": "text", "value": "2025-03-31"}` keeps it text.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "CellValue".
 */
export type CellValue = boolean | number | string | TypedValue;
/**
 * A value whose kind is given, not guessed: `{"kind": "date" | "datetime" | "text", "value":
 * "..."}`. A date is `YYYY-MM-DD`; a datetime is `YYYY-MM-DDTHH:MM[:SS]` (or a plain date).
 * Both are written as Excel date serials in the workbook's date system (1900, or 1904 when the
 * workbook says so); a cell without a number format gets `yyyy/mm/dd` (datetime:
 * `yyyy/mm/dd hh:mm:ss`), a cell with one keeps it. `text` writes the string as text, even
 * when it looks like a date.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "TypedValue".
 */
export type TypedValue =
  | {
      kind: 'date';
      value: string;
    }
  | {
      kind: 'datetime';
      value: string;
    }
  | {
      kind: 'text';
      value: string;
    };
/**
 * A column given by its letters (`"C"`, `"AA"`) or its 1-based number.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ColumnId".
 */
export type ColumnId = number | string;
/**
 * Horizontal alignment values, as Excel (and ExStruct) names them.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "HorizontalAlign".
 */
export type HorizontalAlign =
  'general' | 'left' | 'center' | 'right' | 'fill' | 'justify' | 'centerContinuous' | 'distributed';
/**
 * Vertical alignment values.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "VerticalAlign".
 */
export type VerticalAlign = 'top' | 'center' | 'bottom' | 'justify' | 'distributed';
/**
 * What `update_rows_by_key` does with a key no row of the sheet has.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "OnMissing".
 */
export type OnMissing = 'error' | 'append' | 'skip';
/**
 * Where an appended row's styles and formulas come from.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "CopyStyleFrom".
 */
export type CopyStyleFrom = 'last' | 'none';
/**
 * What to do when the output file already exists.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "OnConflict".
 */
export type OnConflict = 'overwrite' | 'skip' | 'rename';
/**
 * The operation names, as they appear in `op` fields of diffs and errors.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "OpKind".
 */
export type OpKind =
  | 'set_value'
  | 'set_formula'
  | 'add_sheet'
  | 'set_range_values'
  | 'fill_formula'
  | 'set_value_if'
  | 'set_formula_if'
  | 'delete_sheet'
  | 'draw_grid_border'
  | 'set_bold'
  | 'set_font_size'
  | 'set_font_color'
  | 'set_fill_color'
  | 'set_dimensions'
  | 'auto_fit_columns'
  | 'merge_cells'
  | 'unmerge_cells'
  | 'set_alignment'
  | 'set_style'
  | 'apply_table_style'
  | 'delete_table'
  | 'restore_design_snapshot'
  | 'update_rows_by_key'
  | 'append_rows'
  | 'copy_sheet';
/**
 * What a diff value is.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ValueKind".
 */
export type ValueKind =
  ('value' | 'formula' | 'sheet') | 'style' | 'dimension' | 'date' | 'datetime';
/**
 * Whether an op changed the cell.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DiffStatus".
 */
export type DiffStatus = 'applied' | 'skipped';
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "IssueLevel".
 */
export type IssueLevel = 'warning' | 'error';
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "IssueCode".
 */
export type IssueCode =
  | 'invalid_token'
  | 'ref_error'
  | 'name_error'
  | 'div0_error'
  | 'value_error'
  | 'na_error'
  | 'circular_ref_suspected';
/**
 * The rule a plan finding names.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "FindingCode".
 */
export type FindingCode =
  | 'yaml.parse'
  | 'plan.shape'
  | 'plan.missing_id'
  | 'node.missing_id'
  | 'node.duplicate_id'
  | 'node.unknown_type'
  | 'node.missing_block'
  | 'node.loop_key_on_non_loop'
  | 'node.feeds_nothing'
  | 'block.unknown'
  | 'input.unknown_key'
  | 'input.enum_mismatch'
  | 'input.missing_required'
  | 'input.type_mismatch'
  | 'output.unknown_key'
  | 'output.unused'
  | 'out.alias_invalid'
  | 'ref.malformed'
  | 'ref.undefined_var'
  | 'ref.unknown_node'
  | 'ref.unknown_alias'
  | 'ref.type_mismatch'
  | 'when.invalid_expr'
  | 'loop.foreach_and_while'
  | 'loop.while_max_iterations'
  | 'loop.max_concurrency'
  | 'loop.missing_iteration'
  | 'loop.foreach_not_iterable'
  | 'loop.missing_body'
  | 'loop.out_unknown_alias'
  | 'loop.body_alias_duplicate'
  | 'subflow.missing_plan_id'
  | 'subflow.unknown_plan'
  | 'ai.process_llm'
  | 'ai.output_schema_required'
  | 'ai.prompt_required'
  | 'ui.layout_unknown_node'
  | 'column.unknown'
  | 'graph.cycle'
  | 'policy.limit_zero'
  | 'policy.limits_not_plan'
  | 'design.unknown_block'
  | 'design.unknown_input'
  | 'design.unknown_output'
  | 'design.process_llm_contract'
  | 'design.unknown_plan'
  | 'design.unknown_node_type'
  | 'run.block_failed'
  | 'run.input_invalid'
  | 'run.column_not_found'
  | 'run.ref_unresolved'
  | 'run.expr_invalid'
  | 'run.limit_exceeded';
/**
 * How bad a finding is.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Severity".
 */
export type Severity = 'error' | 'warning';
/**
 * The kind of answer a requirement wants (the `type` of `ui.interactive_input`'s items).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RequirementKind".
 */
export type RequirementKind = 'text' | 'select' | 'boolean' | 'number' | 'file' | 'table' | 'enum';
/**
 * The value types the validator reasons about.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ValueType".
 */
export type ValueType =
  'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null' | 'any';
/**
 * What the answer is used as.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "AnswerUse".
 */
export type AnswerUse = 'value' | 'schema_template' | 'column';
/**
 * What a reference feeds: an input, a condition, a loop's items or condition, a subflow call.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "EdgeKind".
 */
export type EdgeKind = 'data' | 'when' | 'loop' | 'call';
/**
 * How a run ended (or that it has not).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunStatus".
 */
export type RunStatus = ('finished' | 'cancelled') | 'running' | 'failed' | 'paused';
/**
 * What happened to one top-level node.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "NodeStatus".
 */
export type NodeStatus = ('finished' | 'failed' | 'skipped') | 'paused';
/**
 * The LLM provider the settings select.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ProviderChoice".
 */
export type ProviderChoice = ('openai' | 'azure') | 'none' | 'compatible';
/**
 * Where retrieval's embeddings come from (keiri-search's `KEIRI_EMBEDDER`).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "EmbeddingChoice".
 */
export type EmbeddingChoice = ('openai' | 'azure') | 'local' | 'bm25-only';
/**
 * Where the selected provider's key is kept.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "KeyStorage".
 */
export type KeyStorage = 'keychain' | 'session';
/**
 * Where an effective value came from, highest precedence first.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Source".
 */
export type Source = 'environment' | 'env_file' | 'settings' | 'session' | 'default';
/**
 * One operation. Serialised flat with an `op` tag, e.g.
 * `{"op":"set_value","sheet":"Sheet1","cell":"B2","value":42}`.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchOpInput".
 */
export type PatchOpInput =
  | {
      op: 'set_value';
      sheet: string;
      cell: string;
      value: CellValue | null;
    }
  | {
      op: 'set_formula';
      sheet: string;
      cell: string;
      formula: string;
    }
  | {
      op: 'add_sheet';
      sheet: string;
    }
  | {
      op: 'set_range_values';
      sheet: string;
      range: string;
      values: (CellValue | null)[][];
    }
  | {
      op: 'fill_formula';
      sheet: string;
      range: string;
      base_cell: string;
      formula?: string | null;
    }
  | {
      op: 'set_value_if';
      sheet: string;
      cell: string;
      expected?: CellValue | null;
      value: CellValue | null;
    }
  | {
      op: 'set_formula_if';
      sheet: string;
      cell: string;
      expected?: CellValue | null;
      formula: string;
    }
  | {
      op: 'delete_sheet';
      sheet: string;
      copy_of?: string | null;
    }
  | {
      op: 'draw_grid_border';
      sheet?: string;
      base_cell: string;
      row_count: number;
      col_count: number;
    }
  | {
      op: 'set_bold';
      sheet?: string;
      cell?: string | null;
      range?: string | null;
      bold?: boolean;
    }
  | {
      op: 'set_font_size';
      sheet?: string;
      cell?: string | null;
      range?: string | null;
      font_size: number;
    }
  | {
      op: 'set_font_color';
      sheet?: string;
      cell?: string | null;
      range?: string | null;
      color: string;
    }
  | {
      op: 'set_fill_color';
      sheet?: string;
      cell?: string | null;
      range?: string | null;
      fill_color: string;
    }
  | {
      op: 'set_dimensions';
      sheet?: string;
      rows?: number[] | null;
      columns?: ColumnId[] | null;
      row_height?: number | null;
      column_width?: number | null;
    }
  | {
      op: 'auto_fit_columns';
      sheet?: string;
      columns?: ColumnId[] | null;
      min_width?: number | null;
      max_width?: number | null;
    }
  | {
      op: 'merge_cells';
      sheet?: string;
      range: string;
    }
  | {
      op: 'unmerge_cells';
      sheet?: string;
      range: string;
    }
  | {
      op: 'set_alignment';
      sheet?: string;
      cell?: string | null;
      range?: string | null;
      horizontal_align?: HorizontalAlign | null;
      vertical_align?: VerticalAlign | null;
      wrap_text?: boolean | null;
    }
  | {
      op: 'set_style';
      sheet?: string;
      cell?: string | null;
      range?: string | null;
      bold?: boolean | null;
      font_size?: number | null;
      color?: string | null;
      fill_color?: string | null;
      horizontal_align?: HorizontalAlign | null;
      vertical_align?: VerticalAlign | null;
      wrap_text?: boolean | null;
    }
  | {
      op: 'apply_table_style';
      sheet?: string;
      range: string;
      style: string;
      table_name?: string | null;
    }
  | {
      op: 'delete_table';
      sheet?: string;
      table_name: string;
    }
  | {
      op: 'restore_design_snapshot';
      sheet?: string;
      design_snapshot: DesignSnapshotInput;
    }
  | {
      op: 'update_rows_by_key';
      sheet?: string;
      /**
       * The row holding the column headers (1-based; default 1). Keys are searched below it.
       */
      header_row?: number;
      /**
       * The key column: its header text, or its letter.
       */
      key_column: string;
      rows: {
        [k: string]: CellValue | null | undefined;
      }[];
      /**
       * A key no row has: `error` (default), `append` or `skip`.
       */
      on_missing?: OnMissing & string;
      /**
       * With `on_missing: append`: whether totals over the table are extended to the appended
       * rows (see `append_rows`; default `true`).
       */
      extend_ranges?: boolean;
      /**
       * A fill colour (`#D9D9D9`) for each row found, as a leaver's row is greyed out.
       */
      fill_color?: string | null;
      /**
       * The columns `fill_color` paints (`A:P`); default: from the first to the last header.
       */
      fill_columns?: string | null;
    }
  | {
      op: 'append_rows';
      sheet?: string;
      /**
       * The row holding the column headers (1-based). Without it, columns are named by letter.
       */
      header_row?: number | null;
      rows: {
        [k: string]: CellValue | null | undefined;
      }[];
      /**
       * `last` (default): styles and shifted formulas of the row above; `none`: values only.
       */
      copy_style_from?: CopyStyleFrom & string;
      /**
       * Whether formulas outside the table that add up its rows (`=SUM(H6:H12)`) are extended
       * to the appended rows (default `true`, as an accountant extends a total by hand); with
       * `false` they are left and named in a warning.
       */
      extend_ranges?: boolean;
    }
  | {
      op: 'copy_sheet';
      sheet?: string;
      /**
       * The new sheet's name (aliases `name`, `target`).
       */
      new_sheet: string;
      /**
       * Where the copy goes among the tabs, 1-based (default: after the last).
       */
      position?: number | null;
    };
/**
 * One step of a turn, streamed to the UI and the CLI as it happens.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ChatEvent".
 */
export type ChatEvent =
  | {
      type: 'route';
      skill: string;
      reason: RouteReason;
      score: number;
      allowed_tools: string[];
    }
  | {
      type: 'tool_call_start';
      call_id: string;
      tool: string;
      arguments: unknown;
    }
  | {
      type: 'tool_call_end';
      call_id: string;
      tool: string;
      ok: boolean;
      error_code?: string | null;
      result: unknown;
    }
  | {
      type: 'approval_required';
      change_id: string;
      file: string;
      tool: string;
      diff: string;
    }
  | {
      type: 'reply';
      text: string;
    }
  | {
      type: 'error';
      code: string;
      message: string;
    };
/**
 * Why a skill was chosen.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RouteReason".
 */
export type RouteReason = 'explicit' | 'command' | 'score' | 'fallback';
/**
 * A node's condition. v0 plans write `when: {expr: …}`; a bare string is accepted too.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "When".
 */
export type When =
  | {
      expr: unknown;
    }
  | unknown;
/**
 * The outcome.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Status".
 */
export type Status = 'valid' | 'needs_answers' | 'invalid' | 'fallback' | 'no_fit';
/**
 * How templates are used.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ApplyMode".
 */
export type ApplyMode = 'compose' | 'hint' | 'llm-only';
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Stage".
 */
export type Stage =
  | 'extracting'
  | 'retrieving'
  | 'composing'
  | 'skeleton'
  | 'questions'
  | 'wiring'
  | 'validating'
  | 'repair';
/**
 * One line of `events.jsonl`.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunEvent".
 */
export type RunEvent =
  | {
      event: 'run_start';
      run_id: string;
      plan_id: string;
      plan_sha256: string;
      plan_text: string;
      started_at: string;
      /**
       * True when this start continues an earlier run (`--resume`).
       */
      resumed: boolean;
    }
  | {
      event: 'node_start';
      node: string;
      attempt: number;
    }
  | {
      event: 'node_finish';
      node: string;
      duration_ms: number;
      /**
       * Rows of the first table (or list) output, when there is one.
       */
      rows: number | null;
      /**
       * Output key → a short description (`{kind, rows, columns}` or `{kind, type}`; a list
       * built in part because the plan does not take it also says how many it holds,
       * `shown`, its `rows` being all of them).
       */
      outputs: {
        [k: string]: unknown | undefined;
      };
    }
  | {
      event: 'node_error';
      node: string;
      code: string;
      message_ja: string;
      message_en: string;
      /**
       * The block's hint (what to do about it), when it gave one.
       */
      hint_ja?: string | null;
      hint_en?: string | null;
      attempt: number;
      /**
       * Another attempt follows (`policy.retries`).
       */
      retrying: boolean;
    }
  | {
      event: 'node_skipped';
      node: string;
      reason: string;
    }
  | {
      event: 'node_warning';
      node: string;
      code: string;
      message_ja: string;
      message_en: string;
    }
  | {
      event: 'node_progress';
      node: string;
      /**
       * Units done so far.
       */
      done: number;
      /**
       * Units in all, when the block knows it.
       */
      total: number | null;
      unit: ProgressUnit;
    }
  | {
      event: 'node_paused';
      node: string;
      question: unknown;
      message_ja: string;
      message_en: string;
    }
  | {
      event: 'node_answered';
      node: string;
      by: string;
      at: string;
    }
  | {
      event: 'node_reused';
      node: string;
    }
  | {
      event: 'llm_call';
      node: string;
      call: LlmCall;
    }
  | {
      event: 'redirect';
      node: string;
      redirect: Redirect;
    }
  | {
      event: 'run_finish';
      status: RunStatus;
      duration_ms: number;
      failed: string[];
    };
/**
 * What a [`Progress`] counts.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ProgressUnit".
 */
export type ProgressUnit = 'rows' | 'bytes' | 'pages' | 'files';
/**
 * One progress event of an eval.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "EvalProgress".
 */
export type EvalProgress =
  | {
      event: 'case';
      index: number;
      of: number;
      id: string;
      runs: number;
    }
  | {
      event: 'run';
      case: string;
      outcome: RunOutcome;
    };

/**
 * Generated from crates/keiri-api/src/surface.rs — do not edit; `make generated` rewrites it.
 */
export interface ApiFunctions {
  apply_patch: {
    request: ApplyPatchRequest;
    response: ApplyPatchResult;
  };
  blocks_retrieve: {
    request: RetrieveRequest;
    response: RetrieveResponse;
  };
  blocks_retrieve_eval: {
    request: RetrieveEvalRequest;
    response: EvalReport;
  };
  catalog_list: {
    request: CatalogListRequest;
    response: CatalogListResponse;
  };
  chat_approve: {
    request: ChatApproveRequest;
    response: ChatApproveResponse;
  };
  chat_undo: {
    request: ChatUndoRequest;
    response: ChatUndoResponse;
  };
  documents_digest: {
    request: DigestRequestInput;
    response: DigestResponseOutput;
  };
  documents_extract: {
    request: ExtractRequestInput;
    response: ExtractResponseOutput;
  };
  documents_extract_sections: {
    request: SectionsRequest;
    response: SectionsResponseOutput;
  };
  documents_metrics: {
    request: MetricsRequest;
    response: MetricsResponseOutput;
  };
  documents_upload: {
    request: DocumentsUploadRequest;
    response: DocumentsUploadResponse;
  };
  embeddings_prewarm: {
    request: EmbeddingsPrewarmRequest;
    response: EmbeddingsPrewarmResponse;
  };
  llm_status: {
    request: StatusRequest;
    response: StatusResponse;
  };
  plan_dry_run: {
    request: PlanRequest;
    response: PlanDryRunResponse;
  };
  plan_get: {
    request: PlanGetRequest;
    response: PlanGetResponse;
  };
  plan_import_v0: {
    request: PlanImportV0Request;
    response: PlanImportV0Response;
  };
  plan_list: {
    request: PlanListRequest;
    response: PlanListResponse;
  };
  plan_register: {
    request: PlanRegisterRequest;
    response: PlanRegisterResponse;
  };
  plan_validate: {
    request: PlanValidateRequest;
    response: PlanValidateResponse;
  };
  requirements_answer: {
    request: RequirementsAnswerRequest;
    response: RequirementsAnswerResponse;
  };
  run_apply: {
    request: RunApplyRequest;
    response: RunApplyResponse;
  };
  run_cancel: {
    request: RunCancelRequest;
    response: RunCancelResponse;
  };
  run_get: {
    request: RunGetRequest;
    response: RunGetResponse;
  };
  run_list: {
    request: RunListRequest;
    response: RunListResponse;
  };
  run_output: {
    request: RunOutputRequest;
    response: RunOutputResponse;
  };
  run_undo_apply: {
    request: RunApplyRequest;
    response: RunUndoApplyResponse;
  };
  settings_get: {
    request: SettingsGetRequest;
    response: SettingsGetResponse;
  };
  settings_save: {
    request: SettingsSaveRequest;
    response: SettingsGetResponse;
  };
  skills_list: {
    request: SkillsListRequest;
    response: SkillsListResponse;
  };
  templates_list: {
    request: TemplatesListRequest;
    response: TemplatesListResponse;
  };
  workbook_compare: {
    request: WorkbookCompareRequest;
    response: WorkbookCompareResponse;
  };
  workbook_patch: {
    request: PatchRequestInput;
    response: PatchResponse;
  };
  llm_connection_test: {
    request: LlmConnectionTestRequest;
    response: LlmConnectionTestResponse;
  };
  chat_send: {
    request: ChatSendRequest;
    response: ChatSendResponse;
    event: ChatEvent;
  };
  plan_generate: {
    request: PlanGenerateRequest;
    response: PlanGenerateResponse;
    event: GenerationEvent;
  };
  plan_run: {
    request: PlanRunRequest;
    response: PlanRunResponse;
    event: RunEvent;
  };
  planner_eval: {
    request: PlanEvalRequest;
    response: PlanEvalResponse;
    event: EvalProgress;
  };
  run_resume: {
    request: RunResumeRequest;
    response: PlanRunResponse;
    event: RunEvent;
  };
}
/**
 * The `apply_patch` request of the API and CLI: the tool input plus how to run it.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ApplyPatchRequest".
 */
export interface ApplyPatchRequest {
  /**
   * Target file path, relative to the workspace or absolute inside it.
   */
  filePath: string;
  /**
   * Unified diff content.
   */
  patch: string;
  /**
   * `native` (default) or `git`.
   */
  backend?: BackendKind & string;
  /**
   * Compute and report the result without writing the file.
   */
  dryRun?: boolean;
}
/**
 * What `apply_patch` did.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ApplyPatchResult".
 */
export interface ApplyPatchResult {
  /**
   * The path as it was given.
   */
  filePath: string;
  /**
   * The file, relative to the workspace root, `/`-separated.
   */
  path: string;
  /**
   * Which backend applied the patch.
   */
  backend: BackendKind;
  /**
   * Whether the content differs from before (by its SHA-256).
   */
  changed: boolean;
  /**
   * Whether the new content was written (not in a dry run, not when nothing changed).
   */
  written: boolean;
  /**
   * Number of hunks applied.
   */
  hunks: number;
  /**
   * `sha256:<hex>` of the content before.
   */
  sha256Before: string;
  /**
   * `sha256:<hex>` of the content after.
   */
  sha256After: string;
  /**
   * The backend's failing exit code when it reported failure but the content changed
   * anyway (which counts as applied).
   */
  exitCode?: number | null;
  /**
   * Notes: hunk offsets, whitespace corrections, line-ending conversion, git's warnings.
   */
  messages: string[];
}
/**
 * The `blocks_retrieve` request: the tool contract shared by the API, the CLI and MCP.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RetrieveRequest".
 */
export interface RetrieveRequest {
  /**
   * What the user wants done, in Japanese or English.
   */
  instruction: string;
  /**
   * Paths of attached documents; the caller resolves them and passes their text.
   */
  docs?: string[];
  /**
   * Candidates per category, 5 to 8 (default 6).
   */
  k?: number | null;
  /**
   * bm25, dense or hybrid (default hybrid; without embeddings it runs as bm25).
   */
  mode?: Mode | null;
  /**
   * Block ids that must be in the candidates whatever their score.
   */
  pinned?: string[];
  /**
   * Only candidates of this category.
   */
  category?: string | null;
  /**
   * convex (default) or rrf.
   */
  fusion?: FusionKind | null;
  /**
   * Weight of the dense side in convex fusion, 0 to 1.
   */
  dense_weight?: number | null;
}
/**
 * The `blocks_retrieve` response.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RetrieveResponse".
 */
export interface RetrieveResponse {
  candidates: Candidate[];
  /**
   * The mode that actually ran.
   */
  mode: Mode;
  /**
   * The embedding model used, or null for BM25 only.
   */
  embedder: string | null;
  /**
   * What the user should know (fallbacks, unknown pinned ids).
   */
  notes: string[];
  /**
   * Set while the workspace's own blocks are being embedded in the background: the
   * candidates are BM25-only meanwhile; ask again for hybrid results once it is done.
   */
  embedding_progress?: Progress | null;
}
/**
 * One candidate, with every score the UI shows.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Candidate".
 */
export interface Candidate {
  id: string;
  kind: DocKind;
  category: string;
  title: string;
  /**
   * The fused score used for ranking (0 to 1 for convex fusion).
   */
  score: number;
  /**
   * Raw BM25 score.
   */
  bm25: number;
  /**
   * Port-name vocabulary score.
   */
  vocabulary: number;
  /**
   * Embedding cosine, when embeddings ran.
   */
  dense: number | null;
  /**
   * Query terms found in the document.
   */
  matched: string[];
  /**
   * Whether the user pinned it.
   */
  pinned: boolean;
}
/**
 * How far a background embedding has got.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Progress".
 */
export interface Progress {
  /**
   * Passages embedded so far.
   */
  done: number;
  /**
   * Passages to embed in all.
   */
  total: number;
}
/**
 * The `blocks_retrieve_eval` request: a labelled set and the fusion settings.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RetrieveEvalRequest".
 */
export interface RetrieveEvalRequest {
  /**
   * Path of the evaluation set (YAML, see `crates/keiri-search/eval/dev.yaml`).
   */
  file: string;
  /**
   * convex (default) or rrf.
   */
  fusion?: FusionKind | null;
  /**
   * Weight of the dense side in convex fusion, 0 to 1.
   */
  dense_weight?: number | null;
}
/**
 * Results of an evaluation run.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "EvalReport".
 */
export interface EvalReport {
  embedder: string | null;
  fusion: FusionKind;
  dense_weight: number;
  modes: ModeReport[];
  notes: string[];
}
/**
 * Results of one mode.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ModeReport".
 */
export interface ModeReport {
  mode: Mode;
  /**
   * Whether the mode ran as asked (dense and hybrid need an embedder).
   */
  ran: boolean;
  all: Metrics;
  /**
   * Per language (`ja`, `en`).
   */
  by_lang: {
    [k: string]: Metrics | undefined;
  };
  misses: Miss[];
}
/**
 * Averages over a set of queries.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Metrics".
 */
export interface Metrics {
  queries: number;
  recall_at_5: number;
  recall_at_10: number;
  mrr: number;
  ndcg_at_10: number;
}
/**
 * A query whose relevant blocks were not all in the top 10.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Miss".
 */
export interface Miss {
  query: string;
  /**
   * Relevant blocks outside the top 10, with their rank (null when not ranked at all).
   */
  missing: [string, number | null][];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "CatalogListRequest".
 */
export interface CatalogListRequest {
  query?: string | null;
  lang?: Lang | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "CatalogListResponse".
 */
export interface CatalogListResponse {
  blocks: BlockSummary[];
  issues: CatalogIssue[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "BlockSummary".
 */
export interface BlockSummary {
  id: string;
  version: string;
  category: string;
  title_ja: string;
  title_en: string;
  description_ja: string;
  description_en: string;
  tags: string[];
  inputs: Port[];
  outputs: Port[];
  source: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Port".
 */
export interface Port {
  name: string;
  type: string;
  required: boolean;
  description: string;
  description_en: string;
  enum: unknown[] | null;
  default: unknown;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "CatalogIssue".
 */
export interface CatalogIssue {
  file: string;
  line: number | null;
  column: number | null;
  message: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ChatApproveRequest".
 */
export interface ChatApproveRequest {
  session_id: string;
  change_id: string;
  /**
   * `true` writes the change, `false` rejects it.
   */
  approve?: boolean;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ChatApproveResponse".
 */
export interface ChatApproveResponse {
  applied: boolean;
  file: string;
  /**
   * The new plan text when the change was to the session's plan.
   */
  plan_yaml?: string | null;
  undo_available: boolean;
  pending: PendingChangeSummary[];
}
/**
 * A change waiting for approval.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PendingChangeSummary".
 */
export interface PendingChangeSummary {
  change_id: string;
  file: string;
  diff: string;
  tool: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ChatUndoRequest".
 */
export interface ChatUndoRequest {
  session_id: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ChatUndoResponse".
 */
export interface ChatUndoResponse {
  change_id: string;
  file: string;
  /**
   * The restored plan text when the change was to the session's plan.
   */
  plan_yaml?: string | null;
  undo_available: boolean;
}
/**
 * Files to digest into a short text for a prompt.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DigestRequestInput".
 */
export interface DigestRequestInput {
  file_paths: string[];
  /**
   * Target length of the digest in characters (4,000).
   */
  max_chars?: number;
  limits?: ExtractLimitsInput;
  sheet?: string | null;
  range?: string | null;
  output_format?: OutputFormat & string;
}
/**
 * Limits of [`ExtractRequest`] and [`DigestRequest`]. Missing fields take the defaults.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ExtractLimitsInput".
 */
export interface ExtractLimitsInput {
  /**
   * Characters across all files (100,000).
   */
  max_total_chars?: number;
  /**
   * Characters of one file (50,000).
   */
  max_chars_per_file?: number;
  /**
   * Size of one file in bytes (20 MiB).
   */
  max_file_bytes?: number;
  /**
   * PDF pages read per file (20).
   */
  max_pages?: number;
  /**
   * Rows and columns of the default workbook window (500 × 50).
   */
  max_rows?: number;
  max_cols?: number;
}
/**
 * A response with `output_format: toon`: the JSON response encoded as TOON in
 * `toon_content`, plus minimal metadata and no duplicated JSON detail.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ToonResponse".
 */
export interface ToonResponse {
  success: boolean;
  /**
   * Always `toon`: the seed's name for the format of `toon_content`.
   */
  format: OutputFormat;
  /**
   * The same, under the request's name (ours, kept for existing clients).
   */
  output_format: OutputFormat;
  toon_content: string;
  /**
   * Files answered, failed ones included (the seed's field).
   */
  count_files: number;
  /**
   * Ranges read, for a section extraction (the seed's field).
   */
  count_sections?: number | null;
  counts: Counts;
  truncated: boolean;
  limits?: LimitsInfo | null;
  error_summary: ErrorCount[];
}
/**
 * Counts that a TOON response keeps outside `toon_content`.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Counts".
 */
export interface Counts {
  files_requested: number;
  files_succeeded: number;
  sections_requested?: number | null;
  sections_extracted?: number | null;
  errors: number;
}
/**
 * Limits of one batch section extraction.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "BatchLimits".
 */
export interface BatchLimits {
  max_files: number;
  max_sections_per_file: number;
  max_sections_total: number;
  max_total_bytes: number;
  max_total_lines: number;
  /**
   * The seed's name; `max_file_size` (this crate's first name for it) is still read.
   */
  max_file_size_bytes: number;
}
/**
 * Limits of [`ExtractRequest`] and [`DigestRequest`]. Missing fields take the defaults.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ExtractLimits".
 */
export interface ExtractLimits {
  /**
   * Characters across all files (100,000).
   */
  max_total_chars: number;
  /**
   * Characters of one file (50,000).
   */
  max_chars_per_file: number;
  /**
   * Size of one file in bytes (20 MiB).
   */
  max_file_bytes: number;
  /**
   * PDF pages read per file (20).
   */
  max_pages: number;
  /**
   * Rows and columns of the default workbook window (500 × 50).
   */
  max_rows: number;
  max_cols: number;
}
/**
 * How many errors carried a code.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ErrorCount".
 */
export interface ErrorCount {
  code: string;
  count: number;
}
/**
 * Result of [`crate::digest`] in JSON form.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DigestResponse".
 */
export interface DigestResponse {
  /**
   * Every file could be read (an empty digest can still be a success).
   */
  success: boolean;
  /**
   * The digest; exactly [`crate::NO_DOCUMENTS`] when no file gave any text.
   */
  digest: string;
  /**
   * True when no file gave any text.
   */
  empty: boolean;
  characters: number;
  files: DigestFile[];
  errors: ItemError[];
}
/**
 * How one file fared in a digest.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DigestFile".
 */
export interface DigestFile {
  file_path: string;
  /**
   * Characters after whitespace compression and duplicate-line removal.
   */
  characters_compressed: number;
  /**
   * Characters of this file in the digest (its fair share, or all of it).
   */
  characters_in_digest: number;
  cut: boolean;
}
/**
 * A file, range or limit that failed. `code` is stable; `message` is for people.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ItemError".
 */
export interface ItemError {
  file_path?: string | null;
  code: string;
  message: string;
  label?: string | null;
  start_line?: number | null;
  end_line?: number | null;
  /**
   * For `LIMIT_EXCEEDED`: the limit's name (`max_files`, `max_total_bytes`, …).
   */
  limit?: string | null;
}
/**
 * Files to extract text from.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ExtractRequestInput".
 */
export interface ExtractRequestInput {
  /**
   * Paths, absolute or relative to the workspace (at most 200).
   */
  file_paths: string[];
  limits?: ExtractLimitsInput;
  /**
   * Workbook sheet for every workbook: a name, or `#2` for the second sheet.
   */
  sheet?: string | null;
  /**
   * Workbook range in A1 notation (e.g. `A1:F40`) for every workbook.
   */
  range?: string | null;
  output_format?: OutputFormat & string;
}
/**
 * Result of [`crate::extract_files`] in JSON form.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ExtractResponse".
 */
export interface ExtractResponse {
  /**
   * Every file extracted (some may still be cut; see `truncated`).
   */
  success: boolean;
  files: FileText[];
  errors: ItemError[];
  total_characters: number;
  /**
   * Some text was left out by a limit; each file's `cuts` says what.
   */
  truncated: boolean;
  limits: ExtractLimits;
}
/**
 * One file's text.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "FileText".
 */
export interface FileText {
  file_path: string;
  resolved_path: string;
  format: Format;
  encoding?: string | null;
  pages_total?: number | null;
  pages_extracted?: number | null;
  sheet?: string | null;
  sheet_names?: string[] | null;
  range?: string | null;
  /**
   * PDF glyphs whose font has no Unicode mapping (left out, not guessed).
   */
  unmapped_glyphs?: number;
  characters: number;
  lines: number;
  text: string;
  /**
   * What was left out and why.
   */
  cuts: Cut[];
  /**
   * A CSV's table: its data rows and its header (read from the whole file, before any
   * cut).
   */
  table?: TableShape | null;
}
/**
 * Something left out of a file's text, reported instead of silently dropped.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Cut".
 */
export interface Cut {
  /**
   * The limit that cut: `max_pages`, `max_chars_per_file`, `max_total_chars`,
   * `sheet_window`.
   */
  limit: string;
  message: string;
}
/**
 * The shape of a delimited file's table.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "TableShape".
 */
export interface TableShape {
  /**
   * Data rows (the header and blank records not counted).
   */
  rows: number;
  /**
   * The header's names.
   */
  columns: string[];
}
/**
 * Batch section extraction: many files × many ranges in one call, or the single-range form
 * (`file_path`, `start_line`, `end_line`). Giving both forms is an input error.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SectionsRequest".
 */
export interface SectionsRequest {
  requests?: FileSections[] | null;
  file_path?: string | null;
  start_line?: number | null;
  end_line?: number | null;
  label?: string | null;
  /**
   * Workbook sheet for the single-range form.
   */
  sheet?: string | null;
  format?: ContentFormat & string;
  /**
   * `toon` by default.
   */
  output_format?: OutputFormat & string;
  /**
   * Return what fits when a limit is exceeded, instead of failing.
   */
  allow_truncate?: boolean;
  /**
   * Stop at the first failing file or range.
   */
  fail_fast?: boolean;
}
/**
 * One file and the ranges to read from it.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "FileSections".
 */
export interface FileSections {
  file_path: string;
  sections: SectionRange[];
  /**
   * Workbook sheet to read: a name, or `#2` for the second; the first worksheet by default.
   */
  sheet?: string | null;
}
/**
 * A line range to read; lines are 1-based and inclusive.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SectionRange".
 */
export interface SectionRange {
  start_line: number;
  /**
   * Last line (inclusive); the end of the file when absent.
   */
  end_line?: number | null;
  label?: string | null;
}
/**
 * Result of [`crate::extract_sections`] in JSON form.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SectionsResponse".
 */
export interface SectionsResponse {
  /**
   * False when a limit was exceeded without `allow_truncate`, when `fail_fast` stopped the
   * batch, or when no range could be read; partial failures are in `errors`.
   */
  success: boolean;
  /**
   * The files answered, failed ones included (the seed's field).
   */
  count_files: number;
  /**
   * The ranges read (the seed's field; `sections_extracted` too).
   */
  count_sections: number;
  format: ContentFormat;
  files_requested: number;
  files_succeeded: number;
  sections_requested: number;
  sections_extracted: number;
  total_bytes: number;
  total_lines: number;
  truncated: boolean;
  /**
   * Limits that cut the output when `allow_truncate` was set.
   */
  truncated_by: string[];
  limits: BatchLimits;
  results: FileResult[];
  /**
   * Failed files and exceeded limits (failed ranges are listed under their file).
   */
  errors: ItemError[];
}
/**
 * Sections read from one file.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "FileResult".
 */
export interface FileResult {
  file_path: string;
  resolved_path: string;
  total_lines: number;
  sections: Section[];
  /**
   * Ranges of this file that failed.
   */
  errors: ItemError[];
}
/**
 * One extracted range.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Section".
 */
export interface Section {
  label: string | null;
  start_line: number;
  /**
   * The last line returned (the file's last line when the request went past it).
   */
  end_line: number;
  /**
   * This range was cut by `allow_truncate`.
   */
  truncated: boolean;
  content: SectionContent;
}
/**
 * A numbered line (content format `json`).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "NumberedLine".
 */
export interface NumberedLine {
  line: number;
  text: string;
}
/**
 * Files to measure (at most 200).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "MetricsRequest".
 */
export interface MetricsRequest {
  file_paths: string[];
  output_format?: OutputFormat & string;
}
/**
 * Result of [`crate::file_metrics`] in JSON form.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "MetricsResponse".
 */
export interface MetricsResponse {
  /**
   * Every file was measured.
   */
  success: boolean;
  files: FileMetrics[];
  errors: ItemError[];
}
/**
 * Measurements of one file. Text figures are of the text a section read sees (for a
 * workbook, its first worksheet).
 *
 * Every field is a primitive and always present (`null` when it does not apply), so a list
 * of these is one table: TOON writes it as a header and one row per file.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "FileMetrics".
 */
export interface FileMetrics {
  file_path: string;
  size_bytes: number;
  lines: number;
  characters: number;
  /**
   * A tokenizer-free estimate (see [`crate::estimate_tokens`]).
   */
  estimated_tokens: number;
  /**
   * `sha256:<hex>` of the file's bytes.
   */
  content_hash: string;
  format: Format;
  /**
   * Detected encoding of a text file.
   */
  encoding: string | null;
  /**
   * Pages of a PDF.
   */
  pages: number | null;
  /**
   * Sheets of a workbook (read others with `sheet: "#2"` or by name).
   */
  sheets: number | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DocumentsUploadRequest".
 */
export interface DocumentsUploadRequest {
  /**
   * The file's name as the user's machine knows it (only the last component is used).
   */
  name: string;
  /**
   * The file's bytes, standard base64 (padding optional).
   */
  content_base64: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DocumentsUploadResponse".
 */
export interface DocumentsUploadResponse {
  /**
   * Where the file was stored, relative to the workspace (e.g. `inputs/invoices.csv`):
   * what the document and generation functions take.
   */
  path: string;
  /**
   * The stored size in bytes.
   */
  size_bytes: number;
}
/**
 * Start loading the embedding model in the background ([`prewarm`]).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "EmbeddingsPrewarmRequest".
 */
export interface EmbeddingsPrewarmRequest {}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "EmbeddingsPrewarmResponse".
 */
export interface EmbeddingsPrewarmResponse {
  /**
   * A loading thread was started (false only when no thread could be started).
   */
  started: boolean;
}
/**
 * Request of `llm_status` (no fields).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "StatusRequest".
 */
export interface StatusRequest {}
/**
 * Whether an LLM is configured, and which (never a key).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "StatusResponse".
 */
export interface StatusResponse {
  /**
   * A provider is fully configured.
   */
  configured: boolean;
  /**
   * The provider, when configured.
   */
  provider: ProviderKind | null;
  /**
   * The model requests name (the default when `KEIRI_LLM_MODEL` is unset).
   */
  model: string;
  /**
   * Where requests go, without user info, query or fragment.
   */
  base_url: string | null;
  /**
   * The Azure deployment.
   */
  deployment: string | null;
  /**
   * The Azure API version.
   */
  api_version: string | null;
  /**
   * Whether a key is set (an OpenAI-compatible server may need none).
   */
  api_key_set: boolean;
  /**
   * Why it is not configured, as a stable code and a message naming the variables.
   */
  problem: StatusProblem | null;
}
/**
 * A configuration problem.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "StatusProblem".
 */
export interface StatusProblem {
  code: string;
  message: string;
}
/**
 * A plan to check: its YAML text and the message language.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanRequest".
 */
export interface PlanRequest {
  /**
   * The plan YAML text (keiri_agent v0 format).
   */
  yaml: string;
  /**
   * Message language, `ja` or `en`; the server's default when left out.
   */
  lang?: 'ja' | 'en' | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanDryRunResponse".
 */
export interface PlanDryRunResponse {
  plan_id: string;
  order: string[];
  nodes: DryRunNode[];
  findings: Finding[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DryRunNode".
 */
export interface DryRunNode {
  id: string;
  kind: NodeKind;
  block: string | null;
  depends_on: string[];
  inputs: unknown;
  outputs: unknown;
  when: string | null;
  children: DryRunNode[];
  /**
   * For a workbook patch node (`excel.patch_workbook`): the per-cell preview of its ops;
   * `null` for every other node.
   */
  workbook: WorkbookPreview | null;
}
/**
 * The dry-run of a workbook patch node's ops (`workbook_patch` with `dry_run: true`).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "WorkbookPreview".
 */
export interface WorkbookPreview {
  status: WorkbookPreviewStatus;
  /**
   * Why there is no preview (`unresolved`, `failed`), in the request's language.
   */
  message: string | null;
  /**
   * The API error code of a `failed` preview.
   */
  code: ErrorCode | null;
  /**
   * The request that applies the node for real (`dry_run: false`, with inverse ops and the
   * formula check); a client sends it to `workbook_patch` after the person confirms.
   */
  request: PatchRequest | null;
  /**
   * The dry-run's diff, warnings, op error, inverse ops and formula issues.
   */
  response: PatchResponse | null;
  /**
   * The workbook's cells around the changes as they are now (header labels, neighbouring
   * values, formulas with their cached values), so the grid draws them instead of blanks.
   */
  context: SheetContext[];
}
/**
 * A patch request (`exstruct_patch` input).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchRequest".
 */
export interface PatchRequest {
  /**
   * The workbook (.xlsx or .xlsm), absolute or relative to the workspace.
   */
  xlsx_path: string;
  /**
   * The sheet of every op that names none (`add_sheet` always names its own).
   */
  sheet?: string | null;
  /**
   * Operations, applied in order.
   */
  ops: PatchOp[];
  /**
   * Where to save; the workbook's own directory by default. Created if missing.
   */
  out_dir: string | null;
  /**
   * File name to save as; `{stem}_patched{suffix}` by default.
   */
  out_name: string | null;
  /**
   * What to do when the output exists; the configured default when left out.
   */
  on_conflict: OnConflict | null;
  /**
   * Treat `set_value` strings starting with `=` as formulas instead of refusing them.
   */
  auto_formula: boolean;
  /**
   * Compute everything but write nothing.
   */
  dry_run: boolean;
  /**
   * Return the operations that undo this patch.
   */
  return_inverse_ops: boolean;
  /**
   * Evaluate the patched workbook and report formula errors; errors block the save.
   */
  preflight_formula_check: boolean;
}
/**
 * What a design op changed, as it was before. ExStruct's snapshot lists font, fill, border
 * and alignment attributes; ours records each cell's style index instead (`cell_styles`),
 * because the original `xf` stays in `styles.xml` (styles are only ever appended) and pointing
 * the cell back at it restores every attribute exactly, theme colours included.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DesignSnapshot".
 */
export interface DesignSnapshot {
  cell_styles?: CellStyleSnapshot[];
  merge_state?: MergeStateSnapshot | null;
  row_dimensions?: RowDimensionSnapshot[];
  column_dimensions?: ColumnDimensionSnapshot[];
}
/**
 * One cell's style index in `cellXfs` (0 is the workbook's default style).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "CellStyleSnapshot".
 */
export interface CellStyleSnapshot {
  cell: string;
  style_id: number;
}
/**
 * The merged ranges that intersected `scope` before an op.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "MergeStateSnapshot".
 */
export interface MergeStateSnapshot {
  scope: string;
  ranges: string[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RowDimensionSnapshot".
 */
export interface RowDimensionSnapshot {
  row: number;
  height: number | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ColumnDimensionSnapshot".
 */
export interface ColumnDimensionSnapshot {
  column: string;
  width: number | null;
}
/**
 * A patch response (`exstruct_patch` output).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchResponse".
 */
export interface PatchResponse {
  /**
   * Where the workbook was (or, for a dry run or a skip, would be) saved.
   */
  out_path: string;
  patch_diff: PatchDiffItem[];
  warnings: string[];
  error: PatchErrorDetail | null;
  inverse_ops: PatchOp[];
  formula_issues: FormulaIssue[];
}
/**
 * One changed (or skipped) cell or sheet.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchDiffItem".
 */
export interface PatchDiffItem {
  op: OpKind;
  op_index: number;
  sheet: string;
  cell: string | null;
  before: PatchValue | null;
  after: PatchValue | null;
  status: DiffStatus;
  /**
   * For a formula written: what it comes to in the patched workbook (the number a person
   * will see in Excel), computed by the formula check's engine; absent when the engine could
   * not evaluate it (or it evaluates to an error, which `formula_issues` reports).
   */
  computed?: CellValue | null;
}
/**
 * A before or after state in the diff: a value, a formula (`"=SUM(A1:A3)"`) or a sheet name.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchValue".
 */
export interface PatchValue {
  kind: ValueKind;
  value: CellValue | null;
}
/**
 * Why the patch was not applied: the failing op (or, for a formula check failure, the op that
 * wrote the cell; `-1` when no op wrote it).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchErrorDetail".
 */
export interface PatchErrorDetail {
  op_index: number;
  op: OpKind;
  sheet: string;
  cell: string | null;
  message: string;
}
/**
 * A formula problem found by evaluating the patched workbook.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "FormulaIssue".
 */
export interface FormulaIssue {
  sheet: string;
  cell: string;
  level: IssueLevel;
  code: IssueCode;
  message: string;
}
/**
 * The non-empty cells of one sheet inside the window a preview grid draws around its changes.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SheetContext".
 */
export interface SheetContext {
  sheet: string;
  cells: ContextCell[];
}
/**
 * A cell around a change as the workbook holds it, so a preview grid draws the real header
 * labels and neighbouring amounts instead of blanks: its value (for a formula, the value its
 * writer cached, `None` when none was cached) and its formula (`=B2-B3`), if any.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ContextCell".
 */
export interface ContextCell {
  /**
   * `B4`.
   */
  cell: string;
  value: CellValue | null;
  formula: string | null;
}
/**
 * One problem found in a plan: the one finding type of the validator, the planner, the API,
 * the CLI and the UI.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Finding".
 */
export interface Finding {
  code: FindingCode;
  severity: Severity;
  node_id: string | null;
  /**
   * JSON pointer into the plan.
   */
  path: string;
  message: string;
  hint: string | null;
  /**
   * The values that would fix it, when there is a closed set (a file's real columns for
   * `column.unknown`): what a question offers the user to pick from.
   */
  choices?: string[];
  /**
   * The column a `column.unknown` is about: named by the plan, absent from the rows. The
   * value at `path` may be an expression that reads it among other columns.
   */
  missing_column?: string | null;
  /**
   * 1-based line and column of the part `path` points at, when the plan was read from text
   * ([`crate::check`] fills them; [`super::validate`] has no text).
   */
  line: number | null;
  column: number | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanGetRequest".
 */
export interface PlanGetRequest {
  /**
   * The plan id (`plan_list`'s `id`).
   */
  id: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanGetResponse".
 */
export interface PlanGetResponse {
  id: string;
  /**
   * The file, as `plan_list` gives it.
   */
  file: string;
  /**
   * The plan's YAML text as it was registered.
   */
  yaml: string;
  /**
   * What a rerun takes (「新しいファイルで実行」): one question per var the nodes read, as
   * the plan's questions word it, with the plan's own value as its `default`; files first.
   * Empty for a plan that does not load.
   */
  inputs: Requirement[];
}
/**
 * One question.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Requirement".
 */
export interface Requirement {
  id: string;
  type: RequirementKind;
  /**
   * A short Japanese label.
   */
  label: string;
  label_en?: string | null;
  description: string;
  description_en?: string | null;
  /**
   * Choices for `select` / `enum`.
   */
  options?: unknown[];
  /**
   * Whether an answer is needed before the plan can run; the spec's default is `true`,
   * so a requirement written without the key is required.
   */
  required: boolean;
  /**
   * Accepted extensions for `file`, e.g. `.xlsx,.xlsm`.
   */
  accept?: string | null;
  hint?: string | null;
  hint_en?: string | null;
  validation?: Validation | null;
  /**
   * The spec's default, shown as the pre-filled answer.
   */
  default?: unknown;
  /**
   * The JSON type a `text` answer becomes (`object`, `array`), or `integer` for a number.
   */
  value_type?: ValueType | null;
  answer_use?: AnswerUse;
  target: RequirementTarget;
}
/**
 * Checks on a text-like answer.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Validation".
 */
export interface Validation {
  /**
   * A regular expression the answer must match (anchor it with `^…$` to match all of it).
   */
  regex?: string | null;
}
/**
 * Where an answer goes.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RequirementTarget".
 */
export interface RequirementTarget {
  /**
   * The plan var that receives the answer.
   */
  var?: string | null;
  /**
   * The node whose input the answer feeds (wired to `${vars.<var>}` if it was missing).
   */
  node_id?: string | null;
  input?: string | null;
  /**
   * The element of a list input the answer replaces ([`AnswerUse::Column`]).
   */
  index?: number | null;
  /**
   * The key inside that element when it is an object (`field`).
   */
  field?: string | null;
  /**
   * The column a row expression at the target reads ([`AnswerUse::Column`]): the answer
   * replaces that column's every reference inside the expression, and the rest of it is
   * kept (no var: the expression holds the column's name).
   */
  column?: string | null;
  /**
   * More expressions of the same input that read `column` (other rules' conditions): the
   * one answer replaces it in each.
   */
  also?: TargetPlace[];
}
/**
 * An element of a list input, or a key inside it, that an answer also goes to.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "TargetPlace".
 */
export interface TargetPlace {
  index?: number | null;
  field?: string | null;
}
/**
 * A keiri_agent v0 plan to import: its YAML text and the message language.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanImportV0Request".
 */
export interface PlanImportV0Request {
  /**
   * The v0 plan's YAML text.
   */
  yaml: string;
  /**
   * Message language, `ja` or `en`; the server's default when left out.
   */
  lang?: 'ja' | 'en' | null;
}
/**
 * A v0 plan rewritten for this catalog: what was rewritten, what was not, and the verdict of
 * `plan_validate` on the result.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanImportV0Response".
 */
export interface PlanImportV0Response {
  /**
   * The rewritten plan (re-serialised: the comments of the input are not kept).
   */
  yaml: string;
  /**
   * Block ids and keys rewritten one to one.
   */
  rewritten: ImportItem[];
  /**
   * What has no one-to-one equivalent and was left as it was, to rewrite by hand.
   */
  unmapped: ImportItem[];
  /**
   * `plan_validate` on the rewritten plan.
   */
  validation: PlanValidateResponse;
}
/**
 * One thing [`import_v0`] changed or could not change, at a node.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ImportItem".
 */
export interface ImportItem {
  /**
   * The node's id, with its loop's id before it for a node inside a loop body (`loop/node`).
   */
  node_id: string;
  /**
   * What it is about: the block id, or the input or output key.
   */
  subject: string;
  /**
   * What happened, or why it could not (English).
   */
  detail: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanValidateResponse".
 */
export interface PlanValidateResponse {
  valid: boolean;
  error_count: number;
  warning_count: number;
  findings: Finding[];
  /**
   * The plan's nodes, the edges its references make and the vars it uses without a value
   * (keiri-plan's [`keiri_plan::plan_graph`]); `null` when the text is not a plan.
   */
  graph: PlanGraph | null;
}
/**
 * The graph of one plan.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanGraph".
 */
export interface PlanGraph {
  /**
   * Pre-order: a loop comes before its body's nodes.
   */
  nodes: GraphNode[];
  /**
   * One edge per (source, target) pair, in the order the references are first met.
   */
  edges: GraphEdge[];
  /**
   * The `${vars.*}` names the nodes use that have no value where they are used.
   */
  unresolved_vars: VarUse[];
}
/**
 * One node of the graph.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "GraphNode".
 */
export interface GraphNode {
  /**
   * The node's JSON pointer in the plan: unique even when a loop body reuses an id.
   */
  key: string;
  /**
   * The plan node id (`""` when the node has none).
   */
  id: string;
  kind: NodeKind;
  block: string | null;
  /**
   * The key of the loop whose body holds this node.
   */
  parent: string | null;
  /**
   * The called plan of a subflow node.
   */
  call_plan_id: string | null;
  /**
   * The node's condition, as written.
   */
  when: string | null;
}
/**
 * Node `target` reads outputs of node `source` (both node keys).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "GraphEdge".
 */
export interface GraphEdge {
  source: string;
  target: string;
  /**
   * The output aliases the target reads, in order, without repeats.
   */
  aliases: string[];
  /**
   * `data` when any reference on the pair feeds an input (what a reader follows).
   */
  kind: EdgeKind;
}
/**
 * A `${vars.name}` used where it has no value.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "VarUse".
 */
export interface VarUse {
  name: string;
  /**
   * Whether a `vars` in scope has the name (with a null or empty value) or none does.
   */
  defined: boolean;
  /**
   * The ids of the nodes that use it, in order (nodes without an id are left out).
   */
  node_ids: string[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanListRequest".
 */
export interface PlanListRequest {}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanListResponse".
 */
export interface PlanListResponse {
  /**
   * One entry per plan id, by id: the newest registration of each, the one a run by id or
   * a subflow call gets. Files in the designs folder that are not plans are left out.
   */
  plans: RegisteredPlan[];
}
/**
 * A plan registered in the designs folder, ready to run.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RegisteredPlan".
 */
export interface RegisteredPlan {
  id: string;
  description: string | null;
  version: string | null;
  /**
   * The file, relative to the workspace when it is inside it (`designs/<id>_<stamp>.yaml`).
   */
  file: string;
  /**
   * Top-level nodes of its graph.
   */
  nodes: number;
  /**
   * The vars without a value: what a run must be given (`--var`, an input, an answer).
   */
  open_vars: string[];
}
/**
 * A plan to register: its YAML text, the message language and, when the client showed the
 * file name before saving, the `yyyymmddHHMM` stamp of that name.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanRegisterRequest".
 */
export interface PlanRegisterRequest {
  /**
   * The plan YAML text (keiri_agent v0 format).
   */
  yaml: string;
  /**
   * Message language, `ja` or `en`; the server's default when left out.
   */
  lang?: 'ja' | 'en' | null;
  /**
   * The `yyyymmddHHMM` of the file name the client previewed
   * (`designs/<plan_id>_<stamp>.yaml`): the file is saved under it, so the name the person
   * confirmed is the name written even when the minute rolled over in between. The server's
   * clock is used when it is left out.
   */
  stamp?: string | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanRegisterResponse".
 */
export interface PlanRegisterResponse {
  plan_id: string;
  path: string;
  file_name: string;
}
/**
 * A plan to validate: its YAML text, the message language and, to check it as a run would
 * be, that run's vars and input files over the plan's own (`keiri validate --var/--input`).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanValidateRequest".
 */
export interface PlanValidateRequest {
  /**
   * The plan YAML text (keiri_agent v0 format).
   */
  yaml: string;
  /**
   * Message language, `ja` or `en`; the server's default when left out.
   */
  lang?: 'ja' | 'en' | null;
  /**
   * Vars of a run, over the plan's own: a column or a file a var names is checked as that
   * run would read it.
   */
  vars?: {
    [k: string]: unknown | undefined;
  };
  /**
   * Input files of a run, `NAME → path`: each must exist and pass the path policy, and sets
   * `vars.NAME`, as `plan_run`'s `inputs` do; their columns are checked.
   */
  inputs?: {
    [k: string]: string | undefined;
  };
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RequirementsAnswerRequest".
 */
export interface RequirementsAnswerRequest {
  /**
   * The plan YAML the questions were asked about.
   */
  yaml: string;
  /**
   * Answers by requirement id.
   */
  answers?: {
    [k: string]: unknown | undefined;
  };
  /**
   * Message language, `ja` or `en`; the server's default when left out.
   */
  lang?: 'ja' | 'en' | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RequirementsAnswerResponse".
 */
export interface RequirementsAnswerResponse {
  /**
   * The plan with the answers filled into `vars` and wired into the nodes that needed
   * them (re-serialised, so comments of the input are not kept).
   */
  yaml: string;
  valid: boolean;
  findings: Finding[];
  /**
   * Questions still open after these answers.
   */
  requirements: Requirement[];
}
/**
 * Apply (or undo) one node's written file.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunApplyRequest".
 */
export interface RunApplyRequest {
  plan_id: string;
  run_id: string;
  node: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunApplyResponse".
 */
export interface RunApplyResponse {
  node: string;
  /**
   * The run's file (relative to the workspace).
   */
  from: string;
  /**
   * Where it was written (relative to the workspace).
   */
  to: string;
  /**
   * A file was there before (it is kept for undo).
   */
  existed: boolean;
}
/**
 * Stop a run in progress (started by this process: the studio or `keiri serve`).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunCancelRequest".
 */
export interface RunCancelRequest {
  run_id: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunCancelResponse".
 */
export interface RunCancelResponse {
  /**
   * False when no such run is in progress here (it may have just finished).
   */
  cancelled: boolean;
}
/**
 * Read one run's state and events.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunGetRequest".
 */
export interface RunGetRequest {
  plan_id: string;
  run_id: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunGetResponse".
 */
export interface RunGetResponse {
  run_id: string;
  plan_id: string;
  /**
   * `running` when the run has no end (still going, or the app was closed during it).
   */
  status: RunStatus;
  started_at: string;
  nodes: RunNode[];
  failures: RunFailure[];
  paused: RunPaused[];
  /**
   * What a person must see about the nodes that ran, in the order they were given.
   */
  warnings: RunWarning[];
  /**
   * The `events.jsonl` lines.
   */
  events: unknown[];
}
/**
 * One top-level node's state.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunNode".
 */
export interface RunNode {
  id: string;
  status: NodeStatus;
}
/**
 * One failed node.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunFailure".
 */
export interface RunFailure {
  node: string;
  code: string;
  message: string;
  /**
   * What to do about it, when the block said (the sheets the workbook has, the encoding
   * that reads the file, the columns the rows have).
   */
  hint?: string | null;
}
/**
 * A node waiting for a person's answer.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunPaused".
 */
export interface RunPaused {
  node: string;
  /**
   * What to ask: an object whose `kind` (`confirmation`, `input`, `table_review`, `diff`,
   * `approval`) says which controls to show (empty when the node asked nothing in
   * particular).
   */
  question: {
    [k: string]: unknown | undefined;
  };
  message: string;
}
/**
 * Something a person must see about a node that ran (the run still finished): a file with
 * no data rows (`NO_ROWS`), a check that flagged nearly every row (`MOSTLY_FLAGGED`), rows
 * left out and why (`ROWS_SKIPPED`), values that could not be read (`VALUES_UNREADABLE`), a
 * weaker method used than the one asked for (`FALLBACK`), a file written with characters its
 * encoding cannot hold replaced (`CHARACTERS_REPLACED`). `code` is stable; the keiri-run
 * crate README lists every code.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunWarning".
 */
export interface RunWarning {
  /**
   * The node (`loop/child` inside a loop body or subflow).
   */
  node: string;
  code: string;
  message: string;
}
/**
 * List runs, newest first.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunListRequest".
 */
export interface RunListRequest {
  /**
   * Only this plan's runs.
   */
  plan_id?: string | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunListResponse".
 */
export interface RunListResponse {
  runs: RunSummary[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunSummary".
 */
export interface RunSummary {
  plan_id: string;
  run_id: string;
  status: RunStatus;
  started_at: string;
  /**
   * How long its last attempt took (absent while running, or when its events are unreadable).
   */
  duration_ms?: number | null;
  /**
   * The files written to the workspace from this run (「書き込む」), who applied each, when.
   */
  applied: AppliedWrite[];
  /**
   * The questions answered in this run (approvals, confirmations, reviews): who answered
   * each, when.
   */
  answered: Answered[];
  /**
   * The run's vars after its overrides (`--var`, `--input`, the window's inputs): the files
   * it read, so a rerun can start from them.
   */
  vars: {
    [k: string]: unknown | undefined;
  };
  /**
   * The files the run wrote in its run folder (what 「書き込む」 copies out), by node, then
   * path.
   */
  files: RunFile[];
}
/**
 * One applied write of a run, as `run_list` shows it.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "AppliedWrite".
 */
export interface AppliedWrite {
  node: string;
  /**
   * Where it was written (relative to the workspace).
   */
  to: string;
  /**
   * Who applied it (the machine's user name; empty in records from before it was kept).
   */
  by: string;
  at: string;
}
/**
 * An answer a node accepted (its question is in the node's record, the answer in `outputs/`).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Answered".
 */
export interface Answered {
  node: string;
  /**
   * The user who answered (`unknown` when the caller did not say).
   */
  by: string;
  /**
   * When, in the run's clock (RFC 3339).
   */
  at: string;
}
/**
 * A file a run wrote.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunFile".
 */
export interface RunFile {
  /**
   * The top-level node that wrote it (a loop's or subflow's id for its body's files).
   */
  node: string;
  /**
   * The file, relative to the workspace when inside it.
   */
  path: string;
}
/**
 * Read one node's saved outputs, for a person to look at.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunOutputRequest".
 */
export interface RunOutputRequest {
  plan_id: string;
  run_id: string;
  /**
   * A top-level node id of the plan.
   */
  node: string;
  /**
   * Rows of each table to send (default 200, at most 1,000).
   */
  limit?: number | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunOutputResponse".
 */
export interface RunOutputResponse {
  node: string;
  /**
   * Output alias → `{"kind": "table", "row_count", "columns": [{name, type}], "rows",
   * "truncated", "labels"?}` or `{"kind": "json", "value"}`; `labels` as a question's
   * (headers, code labels and amount columns the catalog knows; absent when none).
   */
  outputs: {
    [k: string]: unknown | undefined;
  };
  /**
   * The workbook the node wrote (its `out_path` output, an .xlsx in the run directory),
   * cell by cell: the patch's own diff for `excel.patch_workbook`, every written cell for a
   * new workbook. `after` is relative to the workspace.
   */
  workbook: WorkbookCompareResponse | null;
  /**
   * Where 「この結果で書き込む」 (`run_apply`) would write the node's file in the workspace;
   * `null` when it stays in the run folder.
   */
  apply_to: string | null;
  /**
   * A file is at `apply_to` now, so applying replaces it (what is there is kept, and
   * `run_undo_apply` puts it back); `false`: applying creates the file (undo removes it).
   */
  apply_replaces: boolean;
  /**
   * The node's file is applied now (`run_undo_apply` puts back what was there).
   */
  applied: boolean;
}
/**
 * The cells that differ, in the shape of a patch's diff (`set_value` per changed cell,
 * `add_sheet`/`delete_sheet` per sheet), so the UI shows it in the same before/after grid.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "WorkbookCompareResponse".
 */
export interface WorkbookCompareResponse {
  before: string | null;
  after: string;
  patch_diff: PatchDiffItem[];
  /**
   * A workbook had more cells than are compared ([`MAX_COMPARE_CELLS`]).
   */
  truncated: boolean;
  /**
   * The cells of `after` around the changes (`grid_context`), for the grid's neighbours.
   */
  context: SheetContext[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunUndoApplyResponse".
 */
export interface RunUndoApplyResponse {
  node: string;
  to: string;
  /**
   * True: the earlier content is back; false: the file did not exist and was removed.
   */
  restored: boolean;
}
/**
 * Request of `settings_get` (no fields).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SettingsGetRequest".
 */
export interface SettingsGetRequest {}
/**
 * The saved settings, whether a key is stored, and where the file is. Never the key.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SettingsGetResponse".
 */
export interface SettingsGetResponse {
  provider: ProviderChoice & string;
  /**
   * The model (`KEIRI_LLM_MODEL`); the default model when unset.
   */
  model?: string | null;
  /**
   * The OpenAI-compatible server (`compatible`), or another OpenAI endpoint (`openai`).
   */
  base_url?: string | null;
  azure_endpoint?: string | null;
  azure_deployment?: string | null;
  azure_api_version?: string | null;
  /**
   * Unset: the local model when installed, else BM25 only; a cloud endpoint only when
   * chosen here (or `KEIRI_EMBEDDER`), never because an LLM key exists.
   */
  embedding?: EmbeddingChoice | null;
  lang: Lang & string;
  /**
   * The folder the desktop app opens (used at its next start).
   */
  workspace?: string | null;
  /**
   * Hosts a run's network blocks (`http.request`, `notify.send` webhooks) may reach: host
   * names, IP addresses or `*.example.com`. Empty: no network at all. A plan cannot widen it.
   */
  allow_hosts?: string[];
  /**
   * Environment variable names `${env.X}` in a plan run may read (besides the command
   * line's `--allow-env`). Empty: none. A run request may narrow it, never widen it.
   */
  allow_env?: string[];
  /**
   * The ceiling of a plan run's bounds (`policy.limits`): a plan may ask for up to these,
   * never more. Unset bounds keep the built-in ceiling ([`run_ceiling`]).
   */
  run_limits?: PolicyLimits | null;
  /**
   * The selected provider has a key in the keychain.
   */
  api_key_set: boolean;
  /**
   * Where that key is kept: the keychain, or this session's memory; `None` without a key.
   */
  api_key_storage: KeyStorage | null;
  /**
   * The keychain could be asked (false: no key can be saved on this machine right now; it
   * can still be kept for the session).
   */
  keychain_available: boolean;
  /**
   * The settings file (it may not exist yet).
   */
  path: string;
  /**
   * What is in effect once the environment is layered over these settings, and why.
   */
  effective: EffectiveSettings;
}
/**
 * `policy.limits`: what one run of the plan may do before it stops with `LIMIT_EXCEEDED`.
 * Unset fields keep the runtime's defaults; a value above the ceiling of the user's settings
 * is held at the ceiling, so a plan (often written by a model) can lower its bounds and raise
 * them for a large journal, but never past what the user allowed.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PolicyLimits".
 */
export interface PolicyLimits {
  /**
   * Items one `foreach` may run its body for.
   */
  foreach_items?: number | null;
  /**
   * Iterations one `while` may run, whatever its `max_iterations`.
   */
  while_iterations?: number | null;
  /**
   * Rows one `transforms.join` may produce.
   */
  join_rows?: number | null;
  /**
   * Megabytes (MiB) the process may grow by from the run's start (the tables the run
   * keeps and the work of the node running).
   */
  memory_mb?: number | null;
}
/**
 * The LLM and embedding configuration actually in effect — the environment layered over the
 * saved settings — and where each part came from, so the dialog never claims "not set" while
 * a variable configures a model. No key, only where it comes from.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "EffectiveSettings".
 */
export interface EffectiveSettings {
  /**
   * A model can be called.
   */
  configured: boolean;
  provider: SourcedProviderKind | null;
  model: Sourcedstring;
  /**
   * Where requests go (user info and query removed).
   */
  base_url: Sourcedstring | null;
  /**
   * The Azure deployment.
   */
  deployment: Sourcedstring | null;
  /**
   * Where the key comes from; `None`: no key is sent (a server that needs none).
   */
  api_key: Source | null;
  /**
   * Retrieval's embeddings: `auto` (the local model when installed), `local`, `openai`,
   * `azure` or `bm25-only`.
   */
  embedding: Sourcedstring;
  /**
   * Retrieval sends the instruction and the catalog's texts to a cloud embeddings endpoint.
   */
  cloud_embeddings: boolean;
  /**
   * The saved provider is not the one in effect: the environment or `.env` configures
   * another, and wins.
   */
  settings_overridden: boolean;
  /**
   * The names (never the values) of the LLM and embedding variables set in the environment
   * or `.env`, for an administrator.
   */
  variables: string[];
  /**
   * Why no model can be called, when none can.
   */
  problem: StatusProblem | null;
}
/**
 * A value and where it came from.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SourcedProviderKind".
 */
export interface SourcedProviderKind {
  value: ProviderKind;
  source: Source;
}
/**
 * A value and where it came from.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Sourcedstring".
 */
export interface Sourcedstring {
  value: string;
  source: Source;
}
/**
 * Request of `settings_save`: the settings, and optionally a new API key.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SettingsSaveRequest".
 */
export interface SettingsSaveRequest {
  provider: ProviderChoice;
  model?: string | null;
  base_url?: string | null;
  azure_endpoint?: string | null;
  azure_deployment?: string | null;
  azure_api_version?: string | null;
  embedding?: EmbeddingChoice | null;
  lang?: Lang & string;
  workspace?: string | null;
  allow_hosts?: string[];
  /**
   * Absent or null: keep the saved list (the settings window does not show it).
   */
  allow_env?: string[] | null;
  /**
   * Absent or null: keep the saved ceiling. The settings window always sends it (blank
   * bounds are left out: the built-in ceiling).
   */
  run_limits?: PolicyLimits | null;
  /**
   * Absent or null: keep the stored key. Empty: delete it (from the keychain and the
   * session). Otherwise: store it for `provider`, where `key_storage` says.
   */
  api_key?: string | null;
  /**
   * Where a new `api_key` goes: the keychain (default; `KEYCHAIN_UNAVAILABLE` when there is
   * none) or this session's memory.
   */
  key_storage?: KeyStorage & string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SkillsListRequest".
 */
export interface SkillsListRequest {}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SkillsListResponse".
 */
export interface SkillsListResponse {
  skills: SkillSummary[];
  /**
   * Skill files that could not be used, and tools a skill names that do not exist.
   */
  issues: SkillIssue[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SkillSummary".
 */
export interface SkillSummary {
  name: string;
  description: string;
  triggers: string[];
  file_patterns: string[];
  allowed_tools: string[];
  priority: number;
  version: string;
}
/**
 * A skill file that could not be used, or a skill naming a tool that does not exist.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "SkillIssue".
 */
export interface SkillIssue {
  file: string;
  line?: number | null;
  message: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "TemplatesListRequest".
 */
export interface TemplatesListRequest {
  /**
   * Only templates whose id, titles, descriptions or tags contain this text.
   */
  query?: string | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "TemplatesListResponse".
 */
export interface TemplatesListResponse {
  templates: TemplateSummary[];
  issues: CatalogIssue[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "TemplateSummary".
 */
export interface TemplateSummary {
  id: string;
  version: string;
  category: string;
  title: string;
  title_en: string;
  description: string;
  description_en: string;
  tags: string[];
  imports: string[];
  exports: string[];
}
/**
 * Compare two workbooks cell by cell (or list every cell of a new one).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "WorkbookCompareRequest".
 */
export interface WorkbookCompareRequest {
  /**
   * The workbook as it was; left out for a workbook that did not exist.
   */
  before?: string | null;
  /**
   * The workbook as it is now.
   */
  after: string;
}
/**
 * A patch request (`exstruct_patch` input).
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PatchRequestInput".
 */
export interface PatchRequestInput {
  /**
   * The workbook (.xlsx or .xlsm), absolute or relative to the workspace.
   */
  xlsx_path: string;
  /**
   * The sheet of every op that names none (`add_sheet` always names its own).
   */
  sheet?: string | null;
  /**
   * Operations, applied in order.
   */
  ops: PatchOpInput[];
  /**
   * Where to save; the workbook's own directory by default. Created if missing.
   */
  out_dir?: string | null;
  /**
   * File name to save as; `{stem}_patched{suffix}` by default.
   */
  out_name?: string | null;
  /**
   * What to do when the output exists; the configured default when left out.
   */
  on_conflict?: OnConflict | null;
  /**
   * Treat `set_value` strings starting with `=` as formulas instead of refusing them.
   */
  auto_formula?: boolean;
  /**
   * Compute everything but write nothing.
   */
  dry_run?: boolean;
  /**
   * Return the operations that undo this patch.
   */
  return_inverse_ops?: boolean;
  /**
   * Evaluate the patched workbook and report formula errors; errors block the save.
   */
  preflight_formula_check?: boolean;
}
/**
 * What a design op changed, as it was before. ExStruct's snapshot lists font, fill, border
 * and alignment attributes; ours records each cell's style index instead (`cell_styles`),
 * because the original `xf` stays in `styles.xml` (styles are only ever appended) and pointing
 * the cell back at it restores every attribute exactly, theme colours included.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "DesignSnapshotInput".
 */
export interface DesignSnapshotInput {
  cell_styles?: CellStyleSnapshot[];
  merge_state?: MergeStateSnapshotInput | null;
  row_dimensions?: RowDimensionSnapshotInput[];
  column_dimensions?: ColumnDimensionSnapshotInput[];
}
/**
 * The merged ranges that intersected `scope` before an op.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "MergeStateSnapshotInput".
 */
export interface MergeStateSnapshotInput {
  scope: string;
  ranges?: string[];
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RowDimensionSnapshotInput".
 */
export interface RowDimensionSnapshotInput {
  row: number;
  height?: number | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ColumnDimensionSnapshotInput".
 */
export interface ColumnDimensionSnapshotInput {
  column: string;
  width?: number | null;
}
/**
 * Request of `llm_connection_test`.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "LlmConnectionTestRequest".
 */
export interface LlmConnectionTestRequest {
  /**
   * The language of `message`; the context's when absent.
   */
  lang?: Lang | null;
}
/**
 * What the test found. Never a key.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "LlmConnectionTestResponse".
 */
export interface LlmConnectionTestResponse {
  /**
   * The provider answered the request.
   */
  ok: boolean;
  /**
   * The provider tried, when one is configured.
   */
  provider: ProviderKind | null;
  model: string;
  /**
   * Where the request went (user info and query removed).
   */
  base_url: string | null;
  /**
   * How long the request took, in milliseconds.
   */
  elapsed_ms: number;
  /**
   * Why it failed: keiri-llm's code (`LLM_UNAUTHORIZED`, `LLM_CONNECTION`, `LLM_TIMEOUT`,
   * `LLM_NOT_CONFIGURED`, …) or `KEYCHAIN_UNAVAILABLE`; `None` when `ok`.
   */
  code: string | null;
  /**
   * The outcome for the user, in `lang`.
   */
  message: string;
  /**
   * The provider's or the client's own words on a failure (English, no keys).
   */
  detail: string | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ChatSendRequest".
 */
export interface ChatSendRequest {
  /**
   * Continue this session; a new one is started when absent.
   */
  session_id?: string | null;
  message: string;
  /**
   * Use this skill (else the router chooses; `/skill-name` in the message also works).
   */
  skill?: string | null;
  /**
   * The editor's current plan text (unsaved); becomes the session's working copy.
   */
  plan_yaml?: string | null;
  /**
   * A saved plan file (workspace-relative) to work on instead.
   */
  plan_path?: string | null;
  /**
   * Attached files (workspace-relative paths).
   */
  files?: string[];
  lang?: Lang | null;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "ChatSendResponse".
 */
export interface ChatSendResponse {
  session_id: string;
  skill: string;
  reply: string;
  /**
   * Every event of the turn, in order (the same objects the stream sends).
   */
  events: unknown[];
  /**
   * All pending changes of the session (this turn's and earlier ones).
   */
  pending: PendingChangeSummary[];
  /**
   * Why the turn stopped early (`TOOL_FAILURE_LIMIT`, `MAX_ITERATIONS`), if it did.
   */
  stopped?: string | null;
  undo_available: boolean;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanGenerateRequest".
 */
export interface PlanGenerateRequest {
  /**
   * What the plan should do, in plain Japanese or English.
   */
  instruction: string;
  /**
   * Reference documents (paths inside the workspace) whose digest goes into the prompt.
   */
  docs?: string[];
  /**
   * Template ids to use (see templates_list); empty: chosen by retrieval.
   */
  templates?: string[];
  /**
   * compose (offline, from templates), hint (an LLM with templates as constraints) or
   * llm-only. Left out: hint when a model is configured, else compose (and a note says so),
   * so a first generation without a key composes a plan instead of failing.
   */
  apply_mode?: 'compose' | 'hint' | 'llm-only' | null;
  /**
   * Allow a marked fallback plan when repair fails or the LLM cannot be used (default:
   * KEIRI_AGENT_LLM_FALLBACK).
   */
  fallback?: boolean | null;
  /**
   * Repair rounds after the first wiring (default 2).
   */
  max_repair?: number | null;
  /**
   * Answers to the requirements of an earlier call, by requirement id.
   */
  answers?: {
    [k: string]: unknown | undefined;
  };
  /**
   * The plan id (default generated_plan).
   */
  plan_id?: string | null;
  /**
   * Block ids that must be candidates.
   */
  pinned_blocks?: string[];
  /**
   * Message language, `ja` or `en`; the server's default when left out.
   */
  lang?: 'ja' | 'en' | null;
  /**
   * Candidates per category, 5 to 8 (default: retrieval's).
   */
  topk_per_category?: number | null;
  /**
   * Characters of the document digest in the prompt (default 4,000).
   */
  max_docs_chars?: number | null;
  /**
   * Whether the model may put `when` conditions on nodes (default true).
   */
  suggest_when?: boolean | null;
  /**
   * Whether the model may make loop nodes, foreach / while (default true).
   */
  suggest_foreach?: boolean | null;
  /**
   * The loop variable's name the model is asked to use (default `item`).
   */
  foreach_var_name?: string | null;
  /**
   * Run each plan that validates (and asks nothing more) on the attached files (`docs`)
   * before accepting it: a node that fails at run time (a missing column, an input it
   * cannot use) goes back to the repair loop as a finding (its code, the input and column
   * names, its inputs' columns; never the data), within `max_repair`. The runs read only
   * the attached files, write only under `.keiri/verify-runs/` (removed after), read no
   * `${env.*}` and reach no network. The window turns it on when documents are attached.
   */
  verify_by_running?: boolean;
}
/**
 * The result of [`generate_plan`].
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanGenerateResponse".
 */
export interface PlanGenerateResponse {
  plan: Plan;
  status: Status;
  mode: ApplyMode;
  /**
   * True when `plan` is the fallback plan, not what was asked for.
   */
  fallback: boolean;
  reasoning: string;
  /**
   * Candidate block ids offered to the model (or used by the composition).
   */
  candidates: string[];
  /**
   * Template ids used.
   */
  templates: string[];
  /**
   * The composition in one line, in the request's language (「請求書の重複検出」＋
   * 「例外レポートの作成と通知」を使います), shown before the questions; `None` when no
   * template was used.
   */
  composition: string | null;
  attempts: Attempt[];
  /**
   * Questions for the user; answer them through `GenerateOptions::answers`.
   */
  requirements: Requirement[];
  /**
   * Remaining errors of the final plan.
   */
  errors: Finding[];
  suggestions: string[];
  notes: string[];
  usage: Usage;
  /**
   * The plan as YAML, ready for the editor, `keiri validate` or `plan_register`.
   */
  yaml: string;
  /**
   * Documents that could not be read (the plan was made without them).
   */
  unreadable_docs: string[];
}
/**
 * A plan: a DAG of typed blocks.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Plan".
 */
export interface Plan {
  apiVersion?: string | null;
  id: string;
  description?: string | null;
  version?: string | null;
  vars?: {
    [k: string]: unknown | undefined;
  };
  policy?: Policy | null;
  ui?: Ui | null;
  graph: Node[];
  [k: string]: unknown | undefined;
}
/**
 * Execution policy of a plan or node.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Policy".
 */
export interface Policy {
  on_error?: string | null;
  retries?: number | null;
  timeout_ms?: number | null;
  concurrency?: number | null;
  /**
   * The plan's bounds on its run's work (a plan's own policy only; see [`PolicyLimits`]).
   */
  limits?: PolicyLimits | null;
  [k: string]: unknown | undefined;
}
/**
 * UI hints: the order in which UI nodes are shown.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Ui".
 */
export interface Ui {
  layout?: string[];
  [k: string]: unknown | undefined;
}
/**
 * One node of the graph: a block call, a loop or a subflow call.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Node".
 */
export interface Node {
  id: string;
  description?: string | null;
  block?: string | null;
  /**
   * `loop` or `subflow`; absent for a block node.
   */
  type?: string | null;
  in?: {
    [k: string]: unknown | undefined;
  };
  /**
   * `local_key: alias` — the block's output `local_key` is published as `${node.alias}`.
   */
  out?: {
    [k: string]: unknown | undefined;
  };
  when?: unknown;
  foreach?: Foreach | null;
  while?: While | null;
  body?: Body | null;
  call?: Call | null;
  policy?: Policy | null;
  [k: string]: unknown | undefined;
}
/**
 * `foreach` of a loop node.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Foreach".
 */
export interface Foreach {
  /**
   * A reference (or literal list) to iterate over.
   */
  input?: unknown;
  /**
   * A literal list to iterate over (alternative to `input`).
   */
  items?: unknown;
  /**
   * The loop variable name; v0 plans call it `itemVar`.
   */
  var?: string | null;
  max_concurrency?: number | null;
  [k: string]: unknown | undefined;
}
/**
 * `while` of a loop node.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "While".
 */
export interface While {
  condition?: When | null;
  max_iterations?: number | null;
  [k: string]: unknown | undefined;
}
/**
 * The body of a loop: an inner plan.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Body".
 */
export interface Body {
  plan: Plan;
  [k: string]: unknown | undefined;
}
/**
 * A subflow call.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Call".
 */
export interface Call {
  plan_id: string;
  inputs?: {
    [k: string]: unknown | undefined;
  };
  [k: string]: unknown | undefined;
}
/**
 * One wiring or repair attempt, kept whatever its outcome.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Attempt".
 */
export interface Attempt {
  n: number;
  /**
   * `wiring` or `repair`.
   */
  stage: string;
  plan: Plan;
  /**
   * The validator's findings and the wiring check's (`design.*`) on this attempt's plan.
   */
  issues: Finding[];
  errors: number;
  /**
   * How the structured output was obtained (`json_schema`, `function_call`, `free_form`).
   */
  strategy: string;
  usage: Usage;
}
/**
 * Tokens used; adds up over calls.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Usage".
 */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}
/**
 * One streamed event of `plan_generate`: a stage's progress and the time since the call
 * began, for "skeleton… 3.2 s".
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "GenerationEvent".
 */
export interface GenerationEvent {
  stage: Stage;
  repair?: RepairRound | null;
  message: string;
  /**
   * Milliseconds since the generation started.
   */
  elapsed_ms: number;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RepairRound".
 */
export interface RepairRound {
  n: number;
  of: number;
}
/**
 * Start a run.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanRunRequest".
 */
export interface PlanRunRequest {
  /**
   * The plan file (inside the workspace unless the front-end trusts its arguments).
   */
  plan_path?: string | null;
  /**
   * The plan text, when there is no file.
   */
  yaml?: string | null;
  /**
   * Vars that override the plan's.
   */
  vars?: {
    [k: string]: unknown | undefined;
  };
  /**
   * `NAME → path`: sets `vars.NAME` to the file's path (checked to exist and to pass the
   * path policy). Inputs are only read, never modified.
   */
  inputs?: {
    [k: string]: string | undefined;
  };
  /**
   * Environment variable names `${env.X}` may read.
   */
  allow_env?: string[];
  /**
   * Let blocks write to output paths the plan names; otherwise every write stays under
   * the run directory.
   */
  write?: boolean;
  /**
   * Where runs go instead of `<workspace>/runs` (`--out-dir`).
   */
  runs_dir?: string | null;
  lang?: 'ja' | 'en' | null;
}
/**
 * What a run (or resume) did.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanRunResponse".
 */
export interface PlanRunResponse {
  run_id: string;
  plan_id: string;
  /**
   * The run directory, relative to the workspace when inside it.
   */
  run_dir: string;
  /**
   * `finished`, `failed`, `cancelled` or `paused` (waiting for answers: `run_resume` with
   * `answers` continues).
   */
  status: RunStatus;
  failures: RunFailure[];
  nodes: RunNode[];
  /**
   * The nodes waiting for an answer.
   */
  paused: RunPaused[];
  /**
   * What a person must see about the nodes that ran, in the order they were given.
   */
  warnings: RunWarning[];
  /**
   * Every file the run wrote: in its run folder, or with `write` where the plan named.
   */
  files: RunFile[];
}
/**
 * One model call of an `ai.*` block, as the run's events record it: what was asked for, the
 * model, tokens and time — never a prompt, an answer or a key.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "LlmCall".
 */
export interface LlmCall {
  /**
   * What the call was for (`document invoice_a.pdf`, `rows 1-20`, `overall summary`).
   */
  purpose: string;
  /**
   * `openai`, `azure` or `openai_compatible`.
   */
  provider: string;
  model: string;
  /**
   * How the structured output was obtained (`json_schema`, `function_call`, `free_form`);
   * `None` when the call failed.
   */
  strategy: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /**
   * HTTP requests made, retries and fallbacks included.
   */
  requests: number;
  duration_ms: number;
  /**
   * The keiri-llm error code when the call failed.
   */
  error: string | null;
}
/**
 * A redirect a network block was answered with, and what it did about it: the run's events
 * record each one (`redirect`), so a person sees where a request was sent on to.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Redirect".
 */
export interface Redirect {
  /**
   * The URL that answered with the redirect (`scheme://host:port/path`, no query).
   */
  from: string;
  /**
   * Where it pointed (same form).
   */
  to: string;
  followed: boolean;
  /**
   * `allowed` (on the allowlist), `not_allowed`, `downgrade` (https to http),
   * `too_many` or `disabled` (`follow_redirects: false`).
   */
  reason: string;
}
/**
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanEvalRequest".
 */
export interface PlanEvalRequest {
  /**
   * The case file (YAML, see `evals/planner_cases.yaml`), inside the workspace.
   */
  cases: string;
  /**
   * Runs per case (default 3, at most 20).
   */
  runs?: number | null;
  /**
   * Repair rounds after the first wiring (default 2).
   */
  max_repair?: number | null;
  /**
   * Only the cases with these ids (default: all).
   */
  only?: string[];
  /**
   * Message language, `ja` or `en`; the server's default when left out.
   */
  lang?: 'ja' | 'en' | null;
}
/**
 * The result of an eval.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "PlanEvalResponse".
 */
export interface PlanEvalResponse {
  cases: CaseReport[];
  total: Totals;
  /**
   * The provider and model the cases ran against (secrets redacted).
   */
  provider: string;
  model: string;
  /**
   * Documents of a case that could not be read, as `case: path: CODE message`.
   */
  notes: string[];
}
/**
 * The numbers of one case over its runs.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "CaseReport".
 */
export interface CaseReport {
  id: string;
  runs: RunOutcome[];
  first_pass_valid: number;
  valid_after_repair: number;
  /**
   * Runs that ended in an error instead of a plan.
   */
  errors: number;
  unknown: UnknownCounts;
  rejected: number;
  /**
   * Share of runs whose block multiset is the most common one.
   */
  consistency: number | null;
  /**
   * Mean pairwise Jaccard of the block sets of the runs that made a plan.
   */
  jaccard: number | null;
  /**
   * Share of the expected blocks and shapes found, averaged over the runs; `None`
   * without any.
   */
  expected_found: number | null;
}
/**
 * What one generation of a case amounts to.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunOutcome".
 */
export interface RunOutcome {
  /**
   * 1-based.
   */
  run: number;
  /**
   * The planner's status; `None` when the generation failed (see `error`).
   */
  status: Status | null;
  error: RunError | null;
  /**
   * Zero errors after the first wiring, before any repair.
   */
  first_pass_valid: boolean;
  /**
   * Zero errors at the end (after repair).
   */
  valid: boolean;
  /**
   * Repair rounds used.
   */
  repairs: number;
  /**
   * Unknown ids and keys in any attempt's plan (must be zero).
   */
  unknown: UnknownCounts;
  /**
   * Unknown ids / keys or broken contracts the guards caught before a plan was built:
   * offenders removed by the wiring check, plus 1 for a run whose answer no schema
   * accepted (`LLM_OUTPUT_INVALID`).
   */
  rejected: number;
  /**
   * Block ids of the final plan, sorted, with repeats (empty when the run failed).
   */
  blocks: string[];
  /**
   * Expected blocks missing from the final plan.
   */
  missing_expected: string[];
  usage: Usage;
}
/**
 * A generation that failed, as recorded.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunError".
 */
export interface RunError {
  code: string;
  message: string;
}
/**
 * Unknown block ids and `in` / `out` keys found in plans.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "UnknownCounts".
 */
export interface UnknownCounts {
  blocks: number;
  inputs: number;
  outputs: number;
}
/**
 * Totals over every case.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "Totals".
 */
export interface Totals {
  cases: number;
  runs: number;
  first_pass_valid: number;
  first_pass_valid_rate: number;
  valid_after_repair: number;
  valid_after_repair_rate: number;
  errors: number;
  /**
   * Unknown ids / keys that reached a plan; anything but zero is a failure.
   */
  unknown: UnknownCounts;
  rejected: number;
  /**
   * Mean of the cases' consistency (cases with runs).
   */
  consistency: number | null;
  /**
   * Mean of the cases' pairwise Jaccard (cases with two plans or more).
   */
  jaccard: number | null;
  /**
   * Mean of the cases' expected-block share (cases that list expected blocks).
   */
  expected_found: number | null;
  usage: Usage;
}
/**
 * Continue a run after its last finished node.
 *
 * This interface was referenced by `ApiFunctions`'s JSON-Schema
 * via the `definition` "RunResumeRequest".
 */
export interface RunResumeRequest {
  run_id: string;
  /**
   * The plan, when it changed since the run (else the run's own `plan.yaml` is used and
   * `plan_id` is required).
   */
  plan_path?: string | null;
  yaml?: string | null;
  plan_id?: string | null;
  vars?: {
    [k: string]: unknown | undefined;
  };
  inputs?: {
    [k: string]: string | undefined;
  };
  allow_env?: string[];
  write?: boolean;
  /**
   * A person's answers to the paused nodes, by node id (see crates/keiri-run/README.md,
   * "Human in the loop", for each question's answer shape).
   */
  answers?: {
    [k: string]: unknown | undefined;
  };
  /**
   * The `runs_dir` the run was started with.
   */
  runs_dir?: string | null;
  lang?: Lang | null;
}
