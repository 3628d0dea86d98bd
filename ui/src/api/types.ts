// Transport DTOs of the Keiri API (docs/api.md). They mirror `keiri_api::json` field for
// field; the UI never sees the core Rust types.

/** The language the API writes its messages in. */
export type Lang = 'ja' | 'en';

/** The functions every transport exposes, named like the Tauri commands and HTTP routes. */
export type ApiFunction = 'catalog_list' | 'plan_validate' | 'plan_dry_run' | 'plan_register';

export interface Port {
  name: string;
  /** `string`, `number`, … or several joined with `|`. */
  type: string;
  required: boolean;
  description: string;
  description_en: string;
  enum: unknown[] | null;
  default: unknown;
}

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

export interface CatalogIssue {
  file: string;
  line: number | null;
  column: number | null;
  message: string;
}

export interface CatalogListRequest {
  query?: string;
  lang?: Lang;
}

export interface CatalogListResponse {
  blocks: BlockSummary[];
  issues: CatalogIssue[];
}

export type Severity = 'error' | 'warning';

export interface Finding {
  code: string;
  severity: Severity;
  node_id: string | null;
  /** A JSON pointer into the plan, e.g. `/graph/2/in/rows`. */
  path: string;
  message: string;
  hint: string | null;
  /** 1-based, when the validator could locate the finding in the YAML text. */
  line: number | null;
  column: number | null;
}

export interface PlanValidateRequest {
  yaml: string;
  lang?: Lang;
}

export interface PlanValidateResponse {
  valid: boolean;
  error_count: number;
  warning_count: number;
  findings: Finding[];
}

export interface DryRunNode {
  id: string;
  kind: 'block' | 'loop' | 'subflow';
  block: string | null;
  depends_on: string[];
  inputs: Record<string, unknown>;
  outputs: Record<string, unknown>;
  when: string | null;
  children: DryRunNode[];
}

export interface PlanDryRunRequest {
  yaml: string;
  lang?: Lang;
}

export interface PlanDryRunResponse {
  plan_id: string;
  order: string[];
  nodes: DryRunNode[];
  findings: Finding[];
}

export interface PlanRegisterRequest {
  yaml: string;
  lang?: Lang;
}

export interface PlanRegisterResponse {
  plan_id: string;
  path: string;
  file_name: string;
}
