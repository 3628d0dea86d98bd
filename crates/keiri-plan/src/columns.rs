//! The data contract between a plan and the files it reads: which columns a node reads, and
//! whether the rows feeding that node have them.
//!
//! Every column a block reads is declared by its spec, and [`column_reads`] is the one
//! function that lists them for a node: the validator compares them with the columns of the
//! attached or named files before a run ([`column_mismatches`], finding `column.unknown`), and
//! the runtime with the columns of the actual input tables before the block runs (error
//! `COLUMN_NOT_FOUND`). The caller passes what it knows of the files (their tables and
//! headers, read by keiri-docs) as [`FileSchema`]s; this crate reads no file itself. Which
//! inputs name a column and which outputs keep their input's columns is a property of the
//! block spec, not a list of input names here:
//!
//! * an input with `column_of: <rows input>` names columns of the rows given to
//!   `<rows input>`. An unset input counts with its spec `default` (a block's default column
//!   is read like one the plan names), unless the input says `default_if_present: true`: its
//!   default lists columns the block uses only where the rows have them (`report.summary`'s
//!   `group_by` falls back to the columns it finds). `columns_as` says how the value names them:
//!   - `column` (the default): a string is a column; in a list, each string, and each
//!     object's `field` (`[{field: 金額, op: sum}]`);
//!   - `expression`: a row expression (see [`crate::row_expr`], the parser the runtime
//!     evaluates with) whose bare names are columns (`transforms.filter_rows`' `condition`);
//!   - `keys` / `values`: a mapping object whose keys (`{旧列名: 新列名}`) or values
//!     (`{target: source column}`) are columns;
//!   - an object `{key: how, …}`: for an object value, or each object of a list, the value
//!     under each key is read as `how` (`control.policy_enforce`'s rules:
//!     `{condition: expression, when: expression}`).
//!
//!   - `{column_of: <rows input>, as: <how>}` (inside the object form): that part names
//!     columns of another rows input (`transforms.join`'s `keys: [{left: 伝票番号, right:
//!     番号}]`: `{left: {column_of: left}, right: {column_of: right}}`), or of each of a list
//!     of them; a plain name where the object form expects an object is the same column on
//!     every side. With `default: <name>`, a key the value leaves out names that column, read
//!     like a block default, and so does an unset input (`matching.three_way_match`'s
//!     `field_map`: `{po_no: {column_of: [purchase_orders, receipts, invoices], default:
//!     po_no}, …}`; the fit and the column question then set that key of the mapping).
//!
//!   `item_adds: <key>` says that in a list value each item's `<key>` names a column the
//!   item adds, which later items read without the rows having it (`transforms.compute_columns`).
//!   `column_of` may list several rows inputs (`[left, right]`): a name read without its own
//!   side is read from each. A list value is read item by item with the same `how`. `columns_if: <input>` declares
//!   that the block reads these columns only when that other input is set (or has a
//!   default): `control.journal_check` reads account columns only with a chart of accounts;
//! * an output with `columns_from: <input>` has the columns of that input: rows passed on
//!   unchanged (`transforms.normalize_dates`), or the file at that path (`csv.read`);
//! * such an output may add columns of its own: `adds_columns: [name, …]` names them
//!   (`transforms.fiscal_period` adds `year_month`, …), `adds_columns_from: <input>` takes
//!   them from an input's value — a name, a list of names, or a list of objects' `name`
//!   (or `as`) (`transforms.compute_columns`);
//! * it may also drop or rename them: `keeps_columns_from: <input>` keeps only the columns
//!   that input names (a list of names, `transforms.select_columns`; with
//!   `adds_columns_from`, `transforms.group_aggregate`'s keys then aggregates), and
//!   `renames_columns_from: <input>` renames by the mapping object in that input (`{old:
//!   new}`, `transforms.rename_columns`); `adds_columns_from` may list several inputs
//!   (`transforms.unpivot`'s `[variable_name, value_name]`), each unset one counting with its
//!   spec default, and `adds_columns_named: "{field}_{op}"` names a list item that has
//!   neither `name` nor `as` from its own values (`transforms.group_aggregate`'s `金額_sum`);
//! * `joins_columns_from: {rows: <input>, keys: <input>, suffixes: <input>, how: <input>}`
//!   appends the columns of another rows input as `transforms.join` does: a column both sides
//!   have, other than a key of the same name, gets the suffixes (`_left` / `_right` by
//!   default) on each side, and the other side's key columns are folded into this side's (in
//!   a `how: right` join, this side's into the other's, where the other side has them). The
//!   steps apply in that order: keep, rename, join, add.
//!
//! Tracing goes from a column input back through `${node.alias}` references and
//! `columns_from` outputs to a path (a literal or a var's literal value) that one of the
//! schemas describes, collecting the columns added on the way. Whenever the trail is lost (a
//! block whose output columns are known only at run time, a reader told to pick or rename
//! columns, a path known only at run time) nothing is claimed before the run; the runtime
//! still checks.
//!
//! A var with a literal value is read as that value before the check, whole (`${vars.col}`)
//! or spliced into longer text as the runtime splices it (`金額 >= ${vars.threshold}`); any
//! other reference leaves its value unchecked until the run. [`fit_columns`] writes the file's
//! column into a plain name and, through [`crate::row_expr::rename_column`], into every place
//! an expression reads the column, keeping the rest of the expression as written.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

use indexmap::IndexMap;

use crate::catalog::{BlockSpec, Catalog};
use crate::model::{Node, NodeKind, Plan};
use crate::refs::{self, Target};
use crate::resolve;
use crate::row_expr;
use crate::yaml::{escape_pointer, unescape_pointer};

/// Spec property of an input naming columns of the rows given to another input.
pub const COLUMN_OF: &str = "column_of";
/// Spec property of a `column_of` input: how its value names columns (`column`, the default;
/// `expression`; `keys`; `values`; or an object giving that per key of an object value).
pub const COLUMNS_AS: &str = "columns_as";
/// Spec property of a `column_of` input: the other input that must be set (or have a
/// default) for the block to read these columns at all.
pub const COLUMNS_IF: &str = "columns_if";
/// Spec property of a `column_of` input whose default names columns the block uses only
/// where the rows have them: left unset, it reads nothing for sure.
pub const DEFAULT_IF_PRESENT: &str = "default_if_present";
/// Spec property of a `column_of` input whose value is a list: each item's value under this
/// key names a column the item adds, which the items after it read as if the rows had it
/// (`transforms.compute_columns`: `[{name: 税額, expr: 金額 * 0.1}, {name: 税込, expr: 金額 +
/// 税額}]`).
pub const ITEM_ADDS: &str = "item_adds";
/// Spec property (`true`) of a `column_of` input the block can do without: an empty name (the
/// value, or an element of a list) says the file has no such column
/// (`matching.duplicate_invoices`' `date_field`, `transforms.normalize_dates`' `fields` on an
/// export without dates), so it names no column, and a column question about it may be
/// answered [`crate::NO_COLUMN`].
pub const ABSENT_OK: &str = "absent_ok";
/// Spec property of an output that carries the columns of one of the block's inputs.
pub const COLUMNS_FROM: &str = "columns_from";
/// Spec property of a `columns_from` output: the names of the columns it adds.
pub const ADDS_COLUMNS: &str = "adds_columns";
/// Spec property of a `columns_from` output: the input whose value names the only columns
/// it keeps (a list of names).
pub const KEEPS_COLUMNS_FROM: &str = "keeps_columns_from";
/// Spec property of a `columns_from` output: the input whose mapping object (`{old: new}`)
/// renames its columns.
pub const RENAMES_COLUMNS_FROM: &str = "renames_columns_from";
/// Spec property of a `columns_from` output: the input (or list of inputs) whose value names
/// the columns it adds.
pub const ADDS_COLUMNS_FROM: &str = "adds_columns_from";
/// Spec property of an `adds_columns_from` output: the name of an added item that has neither
/// `name` nor `as`, as a pattern of the item's values (`"{field}_{op}"`).
pub const ADDS_COLUMNS_NAMED: &str = "adds_columns_named";
/// Spec property of a `columns_from` output: `{rows, keys, suffixes, how}`, the inputs of the
/// other table joined in, its keys, the suffixes of shared columns and the join type (see the
/// module docs).
pub const JOINS_COLUMNS_FROM: &str = "joins_columns_from";

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
    /// JSON pointer of the value naming it inside the input (`""`, `/0/condition`).
    pub pointer: String,
    /// The column the plan names (or the block's default names).
    pub wanted: String,
    /// Whether the plan left the input unset and the spec's default names the column.
    pub from_default: bool,
    /// The file and sheet the rows come from.
    pub file: String,
    pub sheet: Option<String>,
    /// The other files whose rows were joined in on the way (`transforms.join`), if any.
    pub joined: Vec<String>,
    /// The nearest node on the way whose output has other columns than its input (kept,
    /// renamed, joined or added ones): the rows checked are that node's output.
    pub via: Option<String>,
    /// The columns the rows have at that node, in order: the file's real columns, then those
    /// the nodes on the way added.
    pub columns: Vec<String>,
    /// The one real column equal to `wanted` after [`normalize_column`], if any.
    pub same_after_normalizing: Option<String>,
    /// The one real column that means the same as `wanted` in accounting exports
    /// ([`crate::column_meaning`]: 取引先名 for `vendor`, 請求日付 for `invoice_date`), if any.
    pub same_meaning: Option<String>,
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
        // References to vars with a literal value read as that value; other references
        // are known only at run time, and `column_reads` leaves them out.
        let inputs: IndexMap<String, Value> = node
            .inputs
            .iter()
            .map(|(k, v)| (k.clone(), tracer.literals(v)))
            .collect();
        for read in column_reads(spec, &|key| inputs.get(key)) {
            let Some(Source {
                file,
                table,
                columns,
                joined,
                via,
            }) = tracer.table_of(node, &read.rows, 0)
            else {
                continue;
            };
            if columns.contains(&read.column) {
                continue;
            }
            out.push(ColumnMismatch {
                node_id: node.id.clone(),
                path: format!(
                    "/graph/{i}/in/{}{}",
                    escape_pointer(&read.input),
                    read.pointer
                ),
                same_after_normalizing: same_after_normalizing(&read.column, &columns),
                same_meaning: match crate::column_meaning::same_meaning(&read.column, &columns)
                    .as_slice()
                {
                    [one] => Some((*one).clone()),
                    _ => None,
                },
                input: read.input,
                pointer: read.pointer,
                wanted: read.column,
                from_default: read.from_default,
                file: file.path.clone(),
                sheet: table.sheet.clone(),
                joined,
                via,
                columns,
            });
        }
    }
    out
}

/// The columns the rows given to `input` of node `node_id` (top level) will have, as far as
/// `files` tell before the run: the file's own columns after the nodes between have kept,
/// renamed, joined in or added theirs. `None` when the trail is lost (see the module docs)
/// or the input does not take rows from a described file. The column pickers of the
/// studio's questions list these.
pub fn input_columns(
    plan: &Plan,
    catalog: &Catalog,
    files: &[FileSchema],
    node_id: &str,
    input: &str,
) -> Option<Vec<String>> {
    let tracer = Tracer {
        plan,
        catalog,
        files,
    };
    let node = plan.graph.iter().find(|n| n.id == node_id)?;
    tracer.table_of(node, input, 0).map(|s| s.columns)
}

/// Rewrites every mismatched column that equals exactly one real column after
/// [`normalize_column`], or else means the same as exactly one ([`ColumnMismatch::same_meaning`]),
/// to that column, and returns the plan with the rewrites made, as `(node, input, from, to)`.
/// Other mismatches are left for a question: a guess there could wire the wrong column
/// silently.
///
/// A fit can make a later node's column a mismatch in its turn (an unpivot's `id_fields`
/// fitted to 借方金額, then a step reading `debit_amount` after it), so fitting repeats until
/// nothing more fits (a few rounds at most).
pub fn fit_columns(
    plan: &Plan,
    catalog: &Catalog,
    files: &[FileSchema],
) -> (Plan, Vec<(String, String, String, String)>) {
    let mut fitted = plan.clone();
    let mut done = Vec::new();
    for _ in 0..8 {
        let (next, more) = fit_once(&fitted, catalog, files);
        if more.is_empty() {
            break;
        }
        fitted = next;
        done.extend(more);
    }
    (fitted, done)
}

/// One round of [`fit_columns`]: the mismatches of `plan` as it is.
fn fit_once(
    plan: &Plan,
    catalog: &Catalog,
    files: &[FileSchema],
) -> (Plan, Vec<(String, String, String, String)>) {
    let mut fitted = plan.clone();
    let mut done = Vec::new();
    for m in column_mismatches(plan, catalog, files) {
        let Some(real) = m
            .same_after_normalizing
            .as_ref()
            .or(m.same_meaning.as_ref())
        else {
            continue;
        };
        if m.from_default {
            // The block's default names a column the file writes differently: the plan sets
            // the input (or the mapping's key, `field_map: {po_no: 発注番号}`) to the file's
            // column. A default inside a list is left for a question.
            let Some(node) = fitted.graph.iter_mut().find(|n| n.id == m.node_id) else {
                continue;
            };
            let key = m.pointer.strip_prefix('/').filter(|k| !k.contains('/'));
            let set = if m.pointer.is_empty() {
                node.inputs
                    .insert(m.input.clone(), Value::String(real.clone()));
                true
            } else if let Some(key) = key
                && let Value::Object(map) = node
                    .inputs
                    .entry(m.input.clone())
                    .or_insert_with(|| Value::Object(serde_json::Map::new()))
            {
                map.insert(unescape_pointer(key), Value::String(real.clone()));
                true
            } else {
                false
            };
            if set {
                done.push((
                    m.node_id.clone(),
                    m.input.clone(),
                    m.wanted.clone(),
                    real.clone(),
                ));
            }
            continue;
        }
        let Some(node) = fitted.graph.iter_mut().find(|n| n.id == m.node_id) else {
            continue;
        };
        let Some(value) = node.inputs.get_mut(&m.input) else {
            continue;
        };
        // A literal naming exactly the column is rewritten, and so is that column's every
        // reference in an expression (the rest of its text kept as written); a `${vars.x}`
        // keeps its var, whose value is the user's.
        let Some(slot) = value.pointer_mut(&m.pointer) else {
            continue;
        };
        let rewritten = match slot.as_str() {
            Some(text) if text == m.wanted => Some(real.clone()),
            Some(text) => row_expr::rename_column(text, &m.wanted, real)
                .ok()
                .filter(|renamed| renamed != text),
            None => None,
        };
        if let Some(rewritten) = rewritten {
            *slot = Value::String(rewritten);
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

/// One column a node will read: which input names it and where, the rows input whose columns
/// it names, and whether the value came from the spec's default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnRead {
    /// The input naming the column.
    pub input: String,
    /// JSON pointer of the value naming it inside the input (`""`, `/1`, `/0/condition`).
    pub pointer: String,
    /// The column.
    pub column: String,
    /// The input whose rows must have the column.
    pub rows: String,
    /// Whether the input was not set and the spec's default names the column.
    pub from_default: bool,
}

/// Every column a node of block `spec` will read, given its inputs (`input(key)`, resolved as
/// far as the caller can: the runtime passes the actual values, the validator the plan's
/// values with vars' literals substituted). An unset input counts with its default. Values
/// that still hold a `${…}` reference, and expressions that do not parse (the block reports
/// those itself), name nothing here.
///
/// How an input names columns is declared by its spec, see the module docs: `column_of`,
/// `columns_as` and `columns_if`.
pub fn column_reads<'v>(
    spec: &BlockSpec,
    input: &dyn Fn(&str) -> Option<&'v Value>,
) -> Vec<ColumnRead> {
    let set = |key: &str| input(key).filter(|v| !v.is_null());
    let mut out = Vec::new();
    for (key, port) in &spec.inputs {
        // One rows input, or several (`column_of: [left, right]`: a key both sides share).
        let rows: Vec<&str> = match port.extra.get(COLUMN_OF) {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ => continue,
        };
        if rows.is_empty() {
            continue;
        }
        if let Some(gate) = port.extra.get(COLUMNS_IF).and_then(Value::as_str)
            && set(gate).is_none()
            && spec
                .inputs
                .get(gate)
                .and_then(|p| p.default.as_ref())
                .is_none()
        {
            continue;
        }
        let how = port
            .extra
            .get(COLUMNS_AS)
            .cloned()
            .unwrap_or_else(|| Value::String("column".into()));
        let no_keys = Value::Object(serde_json::Map::new());
        let (value, from_default) = match set(key) {
            Some(v) => (v, false),
            None => match &port.default {
                _ if port.extra.get(DEFAULT_IF_PRESENT) == Some(&Value::Bool(true)) => continue,
                Some(d) if !d.is_null() => (d, true),
                // A mapping whose keys have defaults of their own reads those when unset.
                _ if has_key_defaults(&how) => (&no_keys, true),
                _ => continue,
            },
        };
        let mut found = Vec::new();
        walk(&how, value, String::new(), None, &mut found);
        // An empty name where the block can do without the column names none.
        if port.extra.get(ABSENT_OK) == Some(&Value::Bool(true)) {
            found.retain(|(_, column, _, _)| !column.trim().is_empty());
        }
        // Columns an earlier item of the list adds are not read from the rows.
        if let (Some(key), Some(items)) = (
            port.extra.get(ITEM_ADDS).and_then(Value::as_str),
            value.as_array(),
        ) {
            found.retain(|(pointer, column, _, _)| {
                let index = pointer
                    .split('/')
                    .nth(1)
                    .and_then(|i| i.parse::<usize>().ok());
                !items
                    .iter()
                    .take(index.unwrap_or(0))
                    .any(|item| item.get(key).and_then(Value::as_str) == Some(column.as_str()))
            });
        }
        for (pointer, column, side, key_default) in found {
            // A part of the value that names its own rows (`{column_of: right}`) is read
            // against those; the rest against every rows input of the spec.
            let sides = match side {
                Some(side) => vec![side],
                None => rows.iter().map(|r| r.to_string()).collect(),
            };
            out.extend(sides.into_iter().map(|rows| ColumnRead {
                input: key.clone(),
                pointer: pointer.clone(),
                column: column.clone(),
                rows,
                from_default: from_default || key_default,
            }));
        }
    }
    out
}

/// How a message names the place of a column read: the input, with a mapping's key
/// (`field_map.po_no`) unless the key is the column the plan wrote (`mapping: {vendor: …}`).
pub fn read_place(input: &str, pointer: &str, column: &str, from_default: bool) -> String {
    match pointer
        .strip_prefix('/')
        .filter(|k| !k.contains('/') && k.parse::<usize>().is_err())
        .map(unescape_pointer)
    {
        Some(key) if key != column || from_default => format!("{input}.{key}"),
        _ => input.to_string(),
    }
}

/// A column `value` names: its pointer, the name, the rows input it belongs to when the
/// spec says so for that part of the value (`{column_of: right}`; else the input's own), and
/// whether the name is a key's default (the value left that key out).
type Named = (String, String, Option<String>, bool);

/// Whether `how` is the object form with a `default` for some key (`matching.three_way_match`'s
/// `field_map`: a key left out names the column of the key's own name).
fn has_key_defaults(how: &Value) -> bool {
    how.as_object()
        .is_some_and(|fields| fields.values().any(|sub| sub.get("default").is_some()))
}

/// The columns `value` names when read as `how` (see the module docs), with their pointers.
fn walk(how: &Value, value: &Value, at: String, side: Option<&str>, out: &mut Vec<Named>) {
    if let Value::Array(items) = value {
        for (i, item) in items.iter().enumerate() {
            walk(how, item, format!("{at}/{i}"), side, out);
        }
        return;
    }
    let mut push =
        |at: String, name: &String| out.push((at, name.clone(), side.map(str::to_string), false));
    let here = |k: &str| format!("{at}/{}", escape_pointer(k));
    match (how, value) {
        // Known only at run time: the runtime checks the resolved value.
        (Value::String(_), Value::String(text)) if text.contains("${") => {}
        (Value::String(kind), _) => match (kind.as_str(), value) {
            ("column", Value::String(name)) => push(at, name),
            // In a list of objects, each object's `field` names the column
            // (`[{field: 金額, op: sum}]`).
            ("column", Value::Object(map)) => {
                if let Some(field) = map.get("field") {
                    walk(how, field, here("field"), side, out);
                }
            }
            ("expression", Value::String(src)) => {
                if let Ok(names) = row_expr::columns_of(src) {
                    for n in &names {
                        push(at.clone(), n);
                    }
                }
            }
            ("keys", Value::Object(map)) => {
                for k in map.keys().filter(|k| !k.contains("${")) {
                    push(here(k), k);
                }
            }
            ("values", Value::Object(map)) => {
                for (k, v) in map {
                    walk(&Value::String("column".into()), v, here(k), side, out);
                }
            }
            _ => {}
        },
        // `{column_of: <rows input>, as: <how>}`: this part names columns of that input (of
        // each, for a list of inputs).
        (Value::Object(fields), _) if fields.contains_key(COLUMN_OF) => {
            let inner = fields
                .get("as")
                .cloned()
                .unwrap_or_else(|| Value::String("column".into()));
            match fields.get(COLUMN_OF) {
                Some(Value::Array(sides)) => {
                    for own in sides.iter().filter_map(Value::as_str) {
                        walk(&inner, value, at.clone(), Some(own), out);
                    }
                }
                own => walk(&inner, value, at, own.and_then(Value::as_str).or(side), out),
            }
        }
        (Value::Object(fields), Value::Object(map)) => {
            for (k, sub) in fields {
                match (map.get(k), sub.get("default")) {
                    (Some(v), _) => walk(sub, v, here(k), side, out),
                    // `{…, default: name}`: a key left out names the default's column.
                    (None, Some(default)) => {
                        let from = out.len();
                        walk(sub, default, here(k), side, out);
                        for named in &mut out[from..] {
                            named.3 = true;
                        }
                    }
                    (None, None) => {}
                }
            }
        }
        // A plain name where the spec describes an object (`keys: [金額, {left: …, right: …}]`):
        // the same column on every side.
        (Value::Object(_), Value::String(name)) if !name.contains("${") => push(at, name),
        _ => {}
    }
}

fn same_after_normalizing(wanted: &str, columns: &[String]) -> Option<String> {
    let norm = normalize_column(wanted);
    let same: Vec<&String> = columns
        .iter()
        .filter(|c| normalize_column(c) == norm)
        .collect();
    match same.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// How deep the trail through `${node.alias}` references may go; a cycle is the validator's
/// finding, not a reason to loop here.
const MAX_TRAIL: usize = 64;

/// Where a node's rows come from: a table of an attached file, and the columns the rows have
/// after the nodes between (which may add, keep, rename or join in columns).
struct Source<'a> {
    file: &'a FileSchema,
    table: &'a TableSchema,
    columns: Vec<String>,
    /// The other files joined in on the way.
    joined: Vec<String>,
    /// The nearest node on the way that changed the columns.
    via: Option<String>,
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
        let Some(target) = whole_target(text) else {
            // References inside longer text (`金額 >= ${vars.threshold}`) are spliced in as the
            // runtime splices them, when every one is a var with a literal value.
            return resolve::interpolate(text, &VarLiterals(&self.plan.vars)).ok();
        };
        match target {
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

    /// `value` with every string that wholly references a var with a literal value replaced
    /// by that value, and every longer text whose references are all such vars with them
    /// spliced in; other strings are kept as they are.
    fn literals(&self, value: &Value) -> Value {
        match value {
            Value::String(text) if text.contains("${") => {
                // A var holding a list or an object without references (an answered column
                // question: `by: ${vars.totals_by}` with `[科目]`) is that value.
                if let Some(Target::Var { name, path: None }) = whole_target(text)
                    && let Some(held @ (Value::Array(_) | Value::Object(_))) =
                        self.plan.vars.get(&name)
                    && !refs::contains_reference(held)
                {
                    return held.clone();
                }
                self.literal(value)
                    .map_or_else(|| value.clone(), Value::String)
            }
            Value::Array(items) => Value::Array(items.iter().map(|v| self.literals(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), self.literals(v)))
                    .collect(),
            ),
            other => other.clone(),
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
            let before = found.columns.clone();
            // Each property is a step on the columns, in this order; a step whose names are
            // known only at run time loses the trail, and nothing is claimed.
            if let Some(from) = port.extra.get(KEEPS_COLUMNS_FROM).and_then(Value::as_str) {
                // `mode: exclude` turns the list into the columns dropped; not traced.
                if source.inputs.get("mode").and_then(Value::as_str) == Some("exclude") {
                    return None;
                }
                found.columns = self.added_names(source.inputs.get(from), None)?;
            }
            if let Some(from) = port.extra.get(RENAMES_COLUMNS_FROM).and_then(Value::as_str) {
                // `drop_unmapped: true` keeps only the renamed columns; not traced.
                if source.inputs.get("drop_unmapped") == Some(&Value::Bool(true)) {
                    return None;
                }
                if let Some(Value::Object(map)) = source.inputs.get(from) {
                    for (old, new) in map {
                        let new = self.literal(new)?;
                        if let Some(slot) = found.columns.iter_mut().find(|c| *c == old) {
                            *slot = new;
                        }
                    }
                } else if source.inputs.get(from).is_some_and(|v| !v.is_null()) {
                    return None;
                }
            }
            if let Some(join) = port.extra.get(JOINS_COLUMNS_FROM) {
                found = self.joined(source, join, found, depth)?;
            }
            let mut added = Vec::new();
            if let Some(names) = port.extra.get(ADDS_COLUMNS) {
                added.extend(
                    names
                        .as_array()?
                        .iter()
                        .map(|n| n.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()?,
                );
            }
            let named = port.extra.get(ADDS_COLUMNS_NAMED).and_then(Value::as_str);
            for from in names_of(port.extra.get(ADDS_COLUMNS_FROM)) {
                // An unset input adds the column its spec default names (unpivot's 項目, 値).
                let value = source
                    .inputs
                    .get(from)
                    .filter(|v| !v.is_null())
                    .or_else(|| spec.inputs.get(from)?.default.as_ref());
                added.extend(self.added_names(value, named)?);
            }
            for name in added {
                if !found.columns.contains(&name) {
                    found.columns.push(name);
                }
            }
            // Unwinding from the file towards the node: the last to change them is nearest.
            if found.columns != before {
                found.via = Some(source.id.clone());
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
            columns: table.names(),
            joined: Vec::new(),
            via: None,
        })
    }

    /// The column names an `adds_columns_from` input gives: a name, a list of names, or a
    /// list of objects' `name` (or `as`, or else the `named` pattern filled from the object's
    /// values), each literal; `None` when any is known only at run time.
    fn added_names(&self, value: Option<&Value>, named: Option<&str>) -> Option<Vec<String>> {
        match value.map(|v| self.literals(v)).as_ref() {
            None | Some(Value::Null) => Some(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::Object(o) => match o.get("name").or_else(|| o.get("as")) {
                        Some(name) if !name.is_null() => self.literal(name),
                        _ => self.pattern(named?, o),
                    },
                    other => self.literal(other),
                })
                .collect(),
            Some(other) => Some(vec![self.literal(other)?]),
        }
    }

    /// `pattern` (`"{field}_{op}"`) with each `{key}` replaced by the literal value of `item`
    /// under that key; `None` when one is missing or known only at run time.
    fn pattern(&self, pattern: &str, item: &serde_json::Map<String, Value>) -> Option<String> {
        let mut out = String::new();
        let mut rest = pattern;
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = open + rest[open..].find('}')?;
            out.push_str(&self.literal(item.get(&rest[open + 1..close])?)?);
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// `rows` (the columns of `source`'s own side) with the other side's columns joined in as
    /// `transforms.join` joins them: `join` is the port's `{rows, keys, suffixes}`.
    fn joined(
        &self,
        source: &Node,
        join: &Value,
        mut rows: Source<'a>,
        depth: usize,
    ) -> Option<Source<'a>> {
        let input = |key: &str| join.get(key).and_then(Value::as_str);
        let other = self.table_of(source, input("rows")?, depth + 1)?;
        // Each key as (this side, other side); a plain name is the same column on both.
        let keys: Vec<(String, String)> = match self.literals(source.inputs.get(input("keys")?)?) {
            Value::String(name) => vec![(name.clone(), name)],
            Value::Array(items) => items
                .iter()
                .map(|k| match k {
                    Value::String(name) => Some((name.clone(), name.clone())),
                    Value::Object(o) => Some((
                        o.get("left")?.as_str()?.to_string(),
                        o.get("right")?.as_str()?.to_string(),
                    )),
                    _ => None,
                })
                .collect::<Option<_>>()?,
            _ => return None,
        };
        if keys
            .iter()
            .any(|(l, r)| l.contains("${") || r.contains("${"))
        {
            return None;
        }
        let suffixes = match source
            .inputs
            .get(input("suffixes")?)
            .filter(|v| !v.is_null())
        {
            Some(value) => self.added_names(Some(value), None)?,
            None => vec!["_left".to_string(), "_right".to_string()],
        };
        let [left_suffix, right_suffix] = suffixes.as_slice() else {
            return None;
        };
        let is_key = |name: &String| keys.iter().any(|(l, r)| l == name || r == name);
        // A column both sides have, other than a key, is suffixed on each side.
        let shared: Vec<String> = rows
            .columns
            .iter()
            .filter(|c| other.columns.contains(c) && !is_key(c))
            .cloned()
            .collect();
        let suffixed = |name: &String, suffix: &str| match shared.contains(name) {
            true => format!("{name}{suffix}"),
            false => name.clone(),
        };
        // A right join keeps the other side's rows, and the keys stand where that side has
        // them; otherwise the other side's keys fold into this side's.
        let how = input("how").and_then(|key| source.inputs.get(key));
        let right = how.and_then(|h| self.literal(h)).as_deref() == Some("right");
        if how.is_some_and(|h| !h.is_null()) && self.literal(how?).is_none() {
            return None;
        }
        let mut columns: Vec<String> = rows
            .columns
            .iter()
            .filter(|c| !(right && keys.iter().any(|(l, _)| l == *c)))
            .map(|c| suffixed(c, left_suffix))
            .collect();
        // A remaining clash takes the other side's suffix.
        for name in &other.columns {
            if !right && keys.iter().any(|(_, r)| r == name) {
                continue;
            }
            let mut name = suffixed(name, right_suffix);
            if columns.contains(&name) {
                name = format!("{name}{right_suffix}");
            }
            columns.push(name);
        }
        rows.columns = columns;
        rows.joined.push(other.file.path.clone());
        rows.joined.extend(other.joined);
        Some(rows)
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

/// The input names a spec property gives: one name or a list of names.
fn names_of(value: Option<&Value>) -> Vec<&str> {
    match value {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
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

/// The vars of a plan that hold a literal (text without a reference, a number, a yes/no), for
/// splicing into text before a run; every other reference is unresolved.
struct VarLiterals<'p>(&'p IndexMap<String, Value>);

impl resolve::Lookup for VarLiterals<'_> {
    type Value = Value;

    fn lookup(&self, raw: &str, target: &Target) -> Result<Value, resolve::ResolveError> {
        let literal = match target {
            Target::Var { name, path: None } => self.0.get(name).filter(|v| match v {
                Value::String(s) => !s.trim().is_empty() && !s.contains("${"),
                Value::Number(_) | Value::Bool(_) => true,
                _ => false,
            }),
            _ => None,
        };
        literal
            .cloned()
            .ok_or_else(|| resolve::ResolveError::Unresolved {
                raw: raw.to_string(),
            })
    }

    fn literal(&self, value: Value) -> Value {
        value
    }

    fn to_json(&self, _raw: &str, value: Value) -> Result<Value, resolve::ResolveError> {
        Ok(value)
    }
}
