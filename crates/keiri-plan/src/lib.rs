//! The plan core of Keiri Studio: the plan model and its YAML io, the block catalog, the
//! validator, the dry-run, registering to `designs/`, templates with compose, and the
//! requirements builder.
//!
//! This crate is pure: no network, no LLM, no UI. It reads the files it is pointed at and
//! writes only through [`register`], atomically.
//!
//! Dependencies, and why:
//! * `saphyr-parser` — a maintained, pure-Rust YAML 1.2 parser whose events carry positions;
//!   we build values from its events ourselves to get line/column per JSON pointer and to
//!   bound alias expansion (see [`yaml`]).
//! * `yaml_serde` (imported as `serde_yaml`) — the maintained fork of the archived
//!   `serde_yaml`, for writing plans; it keeps mapping order.
//! * `serde_path_to_error` — turns a shape error into the JSON pointer of the bad field.
//! * `semver` — "latest version wins" in the catalog.
//! * `keiri-fs` — atomic, never-overwriting writes.
//! * `regex` — checks answers against a requirement's `validation.regex`; its matching time is
//!   linear in the input, so a pattern from a template or an LLM cannot hang the process.
//! * `schemars` — the JSON Schema of the plan model, findings and requirements, which keiri-api
//!   puts in the schema the UI's TypeScript types are generated from (already the workspace's
//!   schema crate, for the MCP tools).
//!
//! Templates ([`template`]) are reusable subflows with an import/export contract; [`compose`]
//! merges them into a plan without an LLM, and [`requirements`] turns what a plan lacks into
//! typed questions and applies the answers.

pub mod catalog;
pub mod check;
pub mod column_meaning;
pub mod columns;
pub mod compose;
pub mod dry_run;
pub mod expr;
pub mod finding_code;
pub mod graph;
pub mod io;
mod lang;
pub mod model;
pub mod refs;
pub mod register;
pub mod requirements;
pub mod resolve;
pub mod row_expr;
pub mod run_chat;
pub mod template;
pub mod v0;
pub mod validate;
pub mod workspace;
pub mod yaml;

pub use catalog::{BlockSpec, Catalog, CatalogIssue, PortSpec, TypeSpec, ValueType};
pub use check::{Checked, check, check_as_run};
pub use columns::{
    ColumnMismatch, ColumnRead, ColumnSchema, DEFAULT_IF_PRESENT, FileSchema, TableSchema,
    column_mismatches, column_reads, fit_columns, input_columns, normalize_column,
};
pub use compose::{
    ComposeError, ComposeOptions, Composition, Conflict, ImportBinding, PublishedExport,
    Resolution, UnboundImport, compose,
};
pub use dry_run::{DryRun, DryRunNode, dry_run};
pub use finding_code::{FindingCode, UnknownFindingCode};
pub use graph::{EdgeKind, GraphEdge, GraphNode, PlanGraph, VarUse, plan_graph};
pub use io::{LoadError, LoadedPlan, load_plan, save_plan};
pub use lang::Lang;
pub use model::{Node, NodeKind, Plan};
pub use register::{RegisterError, STAMP_FORMAT, designs_index, parse_stamp, register};
pub use requirements::{
    AnswerError, AnswerProblem, AnswerUse, NO_COLUMN, NO_SUCH_COLUMN, Requirement, RequirementKind,
    RequirementTarget, SchemaTemplate, TargetPlace, Validation, apply_answers, build_requirements,
    check_answer, schema_templates,
};
pub use resolve::{Lookup, ResolveError, resolve, resolve_json};
pub use run_chat::ask_at_run_start;
pub use template::{
    ExportSpec, FixedValues, ImportSpec, InstructionValue, RequirementHint, TemplateFinding,
    TemplateSpec, Templates, UiSuggestion, ValueUnit, load_template, validate_template,
    validate_templates,
};
pub use v0::{ImportItem, Imported, import_v0, v0_successors};
pub use validate::{Finding, Options, Severity, has_errors, validate};
pub use workspace::{Loaded, Workspace};
