//! The data contract between a plan and the files it reads: which columns a node names, and
//! whether the file feeding that node has them.
//!
//! The caller passes what it knows of the files (their tables and headers, read by
//! keiri-docs) as [`FileSchema`]s; this crate reads no file itself. Which inputs name a column
//! and which outputs keep their input's columns is a property of the block spec, not a list of
//! input names here:
//!
//! * an input with `column_of: <rows input>` names one column (a string), several (a list of
//!   strings) or, in a list of objects, one per object under `field`, of the rows given to
//!   `<rows input>`;
//! * an output with `columns_from: <input>` has the columns of that input: rows passed on
//!   unchanged (`transforms.normalize_dates`), or the file at that path (`csv.read`);
//! * such an output may add columns of its own: `adds_columns: [name, …]` names them
//!   (`transforms.fiscal_period` adds `year_month`, …), `adds_columns_from: <input>` takes
//!   them from an input's value — a name, a list of names, or a list of objects' `name`
//!   (`transforms.compute_columns`).
//!
//! Tracing goes from a column input back through `${node.alias}` references and
//! `columns_from` outputs to a path (a literal or a var's literal value) that one of the
//! schemas describes, collecting the columns added on the way. Whenever the trail is lost (a
//! block that renames columns or whose added names are known only at run time, a reader told
//! to pick or rename columns, a path known only at run time) nothing is claimed.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use crate::catalog::{BlockSpec, Catalog};
use crate::model::{Node, NodeKind, Plan};
use crate::refs::{self, Target};
use crate::yaml::escape_pointer;

/// Spec property of an input naming columns of the rows given to another input.
pub const COLUMN_OF: &str = "column_of";
/// Spec property of an output that carries the columns of one of the block's inputs.
pub const COLUMNS_FROM: &str = "columns_from";
/// Spec property of a `columns_from` output: the names of the columns it adds.
pub const ADDS_COLUMNS: &str = "adds_columns";
/// Spec property of a `columns_from` output: the input whose value names the columns it adds.
pub const ADDS_COLUMNS_FROM: &str = "adds_columns_from";

/// What is known of one attached file: its tables (one for a CSV, one per sheet for a
/// workbook) and their header rows.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileSchema {
    /// The path as the plan names it (workspace-relative, `/`-separated).
    pub path: String,
    pub tables: Vec<TableSchema>,
}

/// One table of a file: a CSV, or one sheet of a workbook.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableSchema {
    /// The sheet name; `None` for a CSV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    pub columns: Vec<ColumnSchema>,
}

/// One column: its header and the type its first values suggest.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ColumnSchema {
    pub name: String,
    /// `number`, `date`, `boolean`, `text` or `empty` (no value in the rows looked at).
    #[serde(rename = "type")]
    pub ty: String,
}

impl TableSchema {
    pub fn names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }
}

/// A column name as people mean it: NFKC (full-width letters and digits become half-width),
/// lowercase, without spaces or underscores. Two headers equal after this are the same
/// column written differently (`Vendor` / `ｖｅｎｄｏｒ` / `vendor `; `取引先 名` / `取引先名`).
pub fn normalize_column(name: &str) -> String {
    name.nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| !c.is_whitespace() && *c != '_' && *c != '-')
        .collect()
}

/// A column named by a node that the file feeding it does not have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnMismatch {
    pub node_id: String,
    /// JSON pointer of the value naming the column.
    pub path: String,
    /// The input holding it.
    pub input: String,
    /// Its position when the input is a list.
    pub index: Option<usize>,
    /// The key inside that list element when it is an object (`field`).
    pub field: Option<String>,
    /// The column the plan names.
    pub wanted: String,
    /// The file and sheet the rows come from.
    pub file: String,
    pub sheet: Option<String>,
    /// The columns the rows have at that node, in order: the file's real columns, then those
    /// the nodes on the way added.
    pub columns: Vec<String>,
    /// The one real column equal to `wanted` after [`normalize_column`], if any.
    pub same_after_normalizing: Option<String>,
}

/// Every column named by a node of `plan` (top level; loop bodies and subflows are left out,
/// their rows come from items known only at run time) that the file feeding it lacks.
pub fn column_mismatches(
    plan: &Plan,
    catalog: &Catalog,
    files: &[FileSchema],
) -> Vec<ColumnMismatch> {
    let mut out = Vec::new();
    if files.is_empty() {
        return out;
    }
    let tracer = Tracer {
        plan,
        catalog,
        files,
    };
    for (i, node) in plan.graph.iter().enumerate() {
        let Some(spec) = tracer.spec(node) else {
            continue;
        };
        for (key, port) in &spec.inputs {
            let Some(rows_input) = port.extra.get(COLUMN_OF).and_then(Value::as_str) else {
                continue;
            };
            let Some(value) = node.inputs.get(key) else {
                continue;
            };
            let Some(Source { file, table, added }) = tracer.table_of(node, rows_input, 0) else {
                continue;
            };
            let mut columns = table.names();
            for name in added {
                if !columns.contains(&name) {
                    columns.push(name);
                }
            }
            let base = format!("/graph/{i}/in/{}", escape_pointer(key));
            for named in named_columns(value) {
                let Some(wanted) = tracer.literal(&named.value) else {
                    continue;
                };
                if columns.contains(&wanted) {
                    continue;
                }
                let norm = normalize_column(&wanted);
                let same: Vec<&str> = columns
                    .iter()
                    .filter(|c| normalize_column(c) == norm)
                    .map(String::as_str)
                    .collect();
                let mut path = base.clone();
                if let Some(index) = named.index {
                    path.push_str(&format!("/{index}"));
                }
                if let Some(field) = &named.field {
                    path.push_str(&format!("/{}", escape_pointer(field)));
                }
                out.push(ColumnMismatch {
                    node_id: node.id.clone(),
                    path,
                    input: key.clone(),
                    index: named.index,
                    field: named.field.clone(),
                    wanted,
                    file: file.path.clone(),
                    sheet: table.sheet.clone(),
                    columns: columns.clone(),
                    same_after_normalizing: match same.as_slice() {
                        [one] => Some((*one).to_string()),
                        _ => None,
                    },
                });
            }
        }
    }
    out
}

/// Rewrites every mismatched column that equals exactly one real column after
/// [`normalize_column`] to that column, and returns the plan with the rewrites made, as
/// `(node, input, from, to)`. Other mismatches are left for a question: a guess there could
/// wire the wrong column silently.
pub fn fit_columns(
    plan: &Plan,
    catalog: &Catalog,
    files: &[FileSchema],
) -> (Plan, Vec<(String, String, String, String)>) {
    let mut fitted = plan.clone();
    let mut done = Vec::new();
    for m in column_mismatches(plan, catalog, files) {
        let Some(real) = &m.same_after_normalizing else {
            continue;
        };
        let Some(node) = fitted.graph.iter_mut().find(|n| n.id == m.node_id) else {
            continue;
        };
        let Some(value) = node.inputs.get_mut(&m.input) else {
            continue;
        };
        let slot = match (m.index, &m.field) {
            (None, _) => Some(value),
            (Some(i), None) => value.get_mut(i),
            (Some(i), Some(f)) => value.get_mut(i).and_then(|e| e.get_mut(f)),
        };
        // Only a literal is rewritten; a `${vars.x}` keeps its var, whose value is the user's.
        if let Some(slot) = slot.filter(|s| s.as_str() == Some(m.wanted.as_str())) {
            *slot = Value::String(real.clone());
            done.push((
                m.node_id.clone(),
                m.input.clone(),
                m.wanted.clone(),
                real.clone(),
            ));
        }
    }
    (fitted, done)
}

struct Named {
    value: Value,
    index: Option<usize>,
    field: Option<String>,
}

/// The values naming a column in an input: itself (a string), each string of a list, or each
/// object's `field` in a list of objects.
fn named_columns(value: &Value) -> Vec<Named> {
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| match item {
                Value::Object(map) => map.get("field").map(|f| Named {
                    value: f.clone(),
                    index: Some(i),
                    field: Some("field".into()),
                }),
                other => Some(Named {
                    value: other.clone(),
                    index: Some(i),
                    field: None,
                }),
            })
            .collect(),
        other => vec![Named {
            value: other.clone(),
            index: None,
            field: None,
        }],
    }
}

/// How deep the trail through `${node.alias}` references may go; a cycle is the validator's
/// finding, not a reason to loop here.
const MAX_TRAIL: usize = 64;

/// Where a node's rows come from: a table of an attached file, and the columns the nodes
/// between added to it.
struct Source<'a> {
    file: &'a FileSchema,
    table: &'a TableSchema,
    added: Vec<String>,
}

struct Tracer<'a> {
    plan: &'a Plan,
    catalog: &'a Catalog,
    files: &'a [FileSchema],
}

impl<'a> Tracer<'a> {
    fn spec(&self, node: &Node) -> Option<&'a BlockSpec> {
        if node.kind() != NodeKind::Block {
            return None;
        }
        node.block.as_deref().and_then(|b| self.catalog.get(b))
    }

    /// A value as literal text: the string itself, or the literal text value of the var it
    /// wholly references. Anything else (other references, interpolation) is unknown here.
    fn literal(&self, value: &Value) -> Option<String> {
        let text = value.as_str()?;
        if !refs::contains_reference(value) {
            return Some(text.to_string());
        }
        match whole_target(text)? {
            Target::Var { name, path: None } => self
                .plan
                .vars
                .get(&name)
                .and_then(Value::as_str)
                .filter(|v| !v.trim().is_empty() && !v.contains("${"))
                .map(str::to_string),
            _ => None,
        }
    }

    /// The file table whose rows `node` gets in `input`, with the columns added on the way.
    fn table_of(&self, node: &Node, input: &str, depth: usize) -> Option<Source<'a>> {
        if depth > MAX_TRAIL {
            return None;
        }
        let value = node.inputs.get(input)?;
        if let Some(Target::Node {
            node: from,
            alias,
            path: None,
        }) = value.as_str().and_then(whole_target)
        {
            let source = self.plan.graph.iter().find(|n| n.id == from)?;
            let spec = self.spec(source)?;
            let local = source
                .out
                .iter()
                .find(|(_, a)| a.as_str() == Some(alias.as_str()))
                .map(|(local, _)| local.as_str())?;
            let port = spec.outputs.get(local)?;
            let from_input = port.extra.get(COLUMNS_FROM).and_then(Value::as_str)?;
            let mut found = self.table_of(source, from_input, depth + 1)?;
            if let Some(names) = port.extra.get(ADDS_COLUMNS) {
                found.added.extend(
                    names
                        .as_array()?
                        .iter()
                        .map(|n| n.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()?,
                );
            }
            if let Some(from) = port.extra.get(ADDS_COLUMNS_FROM).and_then(Value::as_str) {
                // Names known only at run time lose the trail: nothing is claimed.
                found
                    .added
                    .extend(self.added_names(source.inputs.get(from))?);
            }
            return Some(found);
        }
        // A path: the node reads a file. A reader told which columns to keep, or where its
        // header is, has other columns than the file's first row.
        if reads_other_columns(node) {
            return None;
        }
        let path = normalize_path(&self.literal(value)?);
        let file = self
            .files
            .iter()
            .find(|f| normalize_path(&f.path) == path)?;
        let sheet = node.inputs.get("sheet").and_then(|s| self.literal(s));
        let table = match sheet {
            Some(name) => file
                .tables
                .iter()
                .find(|t| t.sheet.as_deref() == Some(name.as_str()))?,
            None => file.tables.first()?,
        };
        Some(Source {
            file,
            table,
            added: Vec::new(),
        })
    }

    /// The column names an `adds_columns_from` input gives: a name, a list of names, or a
    /// list of objects' `name`, each literal; `None` when any is known only at run time.
    fn added_names(&self, value: Option<&Value>) -> Option<Vec<String>> {
        match value {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::Object(o) => self.literal(o.get("name")?),
                    other => self.literal(other),
                })
                .collect(),
            Some(other) => Some(vec![self.literal(other)?]),
        }
    }
}

/// Whether a reader node's options change its columns from the file's header row.
fn reads_other_columns(node: &Node) -> bool {
    let set = |key: &str| node.inputs.get(key).is_some_and(|v| !v.is_null());
    set("columns")
        || node
            .inputs
            .get("header")
            .is_some_and(|v| v == &Value::Bool(false))
        || node
            .inputs
            .get("header_row")
            .is_some_and(|v| !v.is_null() && v.as_i64() != Some(1))
        || set("range")
}

fn whole_target(text: &str) -> Option<Target> {
    let (mut found, mut bad) = (Vec::new(), Vec::new());
    refs::scan_str(text, "", &mut found, &mut bad);
    match found.as_slice() {
        [one] if one.whole && bad.is_empty() => Some(one.target.clone()),
        _ => None,
    }
}

fn normalize_path(path: &str) -> String {
    let slashed = path.trim().replace('\\', "/");
    slashed.trim_start_matches("./").to_string()
}

/// The schemas as text for a prompt: one line per table, `path [sheet]: name (type), …`.
pub fn describe(files: &[FileSchema]) -> String {
    let mut lines = Vec::new();
    for file in files {
        for table in &file.tables {
            let columns: Vec<String> = table
                .columns
                .iter()
                .map(|c| format!("{} ({})", c.name, c.ty))
                .collect();
            let name = match &table.sheet {
                Some(sheet) => format!("{} [sheet {sheet}]", file.path),
                None => file.path.clone(),
            };
            lines.push(format!("{name}: {}", columns.join(", ")));
        }
    }
    lines.join("\n")
}
