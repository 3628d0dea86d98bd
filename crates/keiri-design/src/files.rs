//! The tables of the files a plan reads or the user attached, as the plan validator and the
//! planner's prompt see them (keiri-plan's [`FileSchema`]), read through the caller's path
//! policy with keiri-docs. A file that cannot be read is left out: a plan is then checked
//! without its columns, never refused for it.

use keiri_plan::{Catalog, Checked, ColumnSchema, FileSchema, Lang, Plan, TableSchema};
use serde_json::Value;

/// Table files described at most per call, so a plan naming thousands of paths stays cheap.
pub const MAX_TABLE_FILES: usize = 16;

/// Bytes read from one table file at most; a larger file is left out.
const MAX_TABLE_BYTES: u64 = 32 * 1024 * 1024;

/// Whether `path` names a file whose columns can be read (CSV, TSV, xlsx, xlsm, and a `.txt`
/// a plan reads as a table: Excel's 「Unicode テキスト」 export).
pub fn is_table_path(path: &str) -> bool {
    let lower = path.trim().to_ascii_lowercase();
    [".csv", ".tsv", ".txt", ".xlsx", ".xlsm"]
        .iter()
        .any(|ext| lower.ends_with(ext))
}

/// Reads and validates plan text as every front-end checks a plan (the studio, the CLI through
/// the API, and the chat's `validate_plan`/`dry_run_plan` tools): against `catalog`, with the
/// plans registered in `designs_dir` as known subflows, and with the columns of the table
/// files the plan names, read through `policy` (`column.unknown` gives the file's real columns).
pub fn check_plan(
    yaml: &str,
    lang: Lang,
    catalog: &Catalog,
    policy: &keiri_fs::PathPolicy,
    designs_dir: &std::path::Path,
) -> Checked {
    check_plan_as_run(
        yaml,
        lang,
        catalog,
        policy,
        designs_dir,
        &Default::default(),
    )
}

/// [`check_plan`] with a run's `vars` over the plan's own ([`keiri_plan::check_as_run`]):
/// the columns checked are those of the files the run will read.
pub fn check_plan_as_run(
    yaml: &str,
    lang: Lang,
    catalog: &Catalog,
    policy: &keiri_fs::PathPolicy,
    designs_dir: &std::path::Path,
    vars: &indexmap::IndexMap<String, Value>,
) -> Checked {
    keiri_plan::check_as_run(yaml, lang, catalog, vars, |plan| keiri_plan::Options {
        lang,
        known_plans: keiri_plan::designs_index(designs_dir).into_keys().collect(),
        file_schemas: file_schemas(policy, &table_paths(plan)),
    })
}

/// The literal table paths a plan names: text values of its vars and of its top-level nodes'
/// inputs that end in a table extension and hold no `${…}`.
pub fn table_paths(plan: &Plan) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |v: &Value| {
        if let Some(s) = v.as_str()
            && !s.contains("${")
            && is_table_path(s)
            && !out.iter().any(|o| o == s)
        {
            out.push(s.to_string());
        }
    };
    plan.vars.values().for_each(&mut push);
    for node in &plan.graph {
        node.inputs.values().for_each(&mut push);
    }
    out.truncate(MAX_TABLE_FILES);
    out
}

/// The schema of each table file among `paths` that the policy lets us read.
pub fn file_schemas(policy: &keiri_fs::PathPolicy, paths: &[String]) -> Vec<FileSchema> {
    paths
        .iter()
        .filter(|p| is_table_path(p))
        .take(MAX_TABLE_FILES)
        .filter_map(|raw| {
            let resolved = policy.resolve_existing(raw).ok()?;
            // A `.txt` is a table only when it reads as delimited text with two columns or
            // more (Excel's 「Unicode テキスト」); a memo or a letter stays a document.
            let (format, text) = match keiri_docs::Format::from_path(&resolved).ok()? {
                keiri_docs::Format::Txt => (keiri_docs::Format::Csv, true),
                other => (other, false),
            };
            let bytes = keiri_docs::read_capped(&resolved, MAX_TABLE_BYTES).ok()?;
            let tables = keiri_docs::schema::tables(&bytes, format).ok()?;
            if text && tables.first().is_none_or(|t| t.columns.len() < 2) {
                return None;
            }
            Some(FileSchema {
                path: raw.trim().to_string(),
                tables: tables
                    .into_iter()
                    .map(|t| TableSchema {
                        sheet: t.sheet,
                        columns: t
                            .columns
                            .into_iter()
                            .map(|c| ColumnSchema {
                                name: c.name,
                                ty: c.ty.to_string(),
                            })
                            .collect(),
                    })
                    .collect(),
            })
        })
        .collect()
}
