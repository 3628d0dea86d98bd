//! The validator's data-contract checks: columns a node reads that its rows lack, and loop
//! outputs that name no body alias or more than one.

use std::collections::HashMap;

use super::{Finding, Severity, Validator};
use crate::FindingCode;
use crate::columns;
use crate::model::{Node, Plan};
use crate::yaml::escape_pointer;

impl Validator<'_> {
    /// `column.unknown`: a column named by a node that the attached file feeding it lacks,
    /// with the file's real columns as the hint and as the finding's choices.
    pub(super) fn column_contract(&mut self, plan: &Plan) {
        let lang = self.options.lang;
        for m in columns::column_mismatches(plan, self.catalog, &self.options.file_schemas) {
            let file = match &m.sheet {
                Some(sheet) => format!("{} ({sheet})", m.file),
                None => m.file.clone(),
            };
            // Rows a node reshaped on the way (grouped, joined, renamed, …): the columns
            // listed are that node's output's, and the message says so.
            let file = match (&m.via, m.joined.as_slice()) {
                (None, _) => file,
                (Some(via), others) => {
                    let from: Vec<&str> = std::iter::once(file.as_str())
                        .chain(others.iter().map(String::as_str))
                        .collect();
                    lang.pick(
                        format!("{via} の出力（{} から）", from.join("、")),
                        format!("the output of {via} (from {})", from.join(", ")),
                    )
                }
            };
            let list = m.columns.join(", ");
            let (by_ja, by_en) = if m.from_default {
                ("（既定値）", " (its default)")
            } else {
                ("", "")
            };
            let place = columns::read_place(&m.input, &m.pointer, &m.wanted, m.from_default);
            let (ja, en) = (
                format!(
                    "{} の {place}{by_ja} が指定する列「{}」は {file} にありません",
                    m.node_id, m.wanted
                ),
                format!(
                    "{}.{place}{by_en} names the column {:?}, which {file} does not have",
                    m.node_id, m.wanted
                ),
            );
            let (hint_ja, hint_en) = match &m.same_after_normalizing {
                // A file without a header row (empty, or blank lines only): there is no column
                // to pick, and a hint listing none would read as a plan at fault.
                None if m.columns.is_empty() && m.via.is_none() => (
                    format!(
                        "{file} には列がありません（空のファイルか、見出し行のないファイルです）。見出し行のあるファイルを指定してください"
                    ),
                    format!(
                        "{file} has no columns (the file is empty, or has no header row): attach a file with a header row"
                    ),
                ),
                Some(real) => (
                    format!("「{real}」のことなら、その名前に直してください。{file} の列: {list}"),
                    format!("if you mean {real:?}, use that name; columns of {file}: {list}"),
                ),
                None => (
                    format!("{file} の列から選んでください: {list}"),
                    format!("pick one of the columns of {file}: {list}"),
                ),
            };
            self.findings.push(Finding {
                code: FindingCode::ColumnUnknown,
                severity: Severity::Error,
                node_id: Some(m.node_id.clone()),
                path: m.path.clone(),
                message: lang.pick(&ja, &en).to_string(),
                hint: Some(lang.pick(&hint_ja, &hint_en).to_string()),
                choices: m.columns.clone(),
                missing_column: Some(m.wanted.clone()),
                line: None,
                column: None,
            });
        }
    }

    /// The columns a required column input left unset can name, as the choices of its
    /// `input.missing_required` finding: the columns the rows have at that node when the
    /// attached files tell them ([`columns::input_columns`]). The question it raises is then
    /// a pick from those columns instead of a name typed from memory. Top-level nodes, and
    /// inputs whose value is a column or a list of columns (not an expression or a mapping).
    pub(super) fn column_choices(&mut self, plan: &Plan) {
        let files = &self.options.file_schemas;
        if files.is_empty() {
            return;
        }
        for finding in &mut self.findings {
            if finding.code != FindingCode::InputMissingRequired {
                continue;
            }
            let Some((index, key)) = finding
                .path
                .strip_prefix("/graph/")
                .and_then(|rest| rest.split_once("/in/"))
                .and_then(|(i, key)| Some((i.parse::<usize>().ok()?, key)))
            else {
                continue;
            };
            let Some(node) = plan.graph.get(index) else {
                continue;
            };
            let Some(port) = node
                .block
                .as_deref()
                .and_then(|b| self.catalog.get(b))
                .and_then(|spec| spec.inputs.get(&crate::yaml::unescape_pointer(key)))
            else {
                continue;
            };
            let names_columns = port
                .extra
                .get(columns::COLUMNS_AS)
                .is_none_or(|how| how.as_str() == Some("column"));
            let Some(rows) = port.extra.get(columns::COLUMN_OF).and_then(|r| r.as_str()) else {
                continue;
            };
            if names_columns
                && let Some(found) =
                    columns::input_columns(plan, self.catalog, files, &node.id, rows)
            {
                finding.choices = found;
            }
        }
    }

    /// A loop's outputs: `out` keys other than `collect` name body aliases, so a key naming
    /// none (`loop.out_unknown_alias`) would give nulls, and an alias two body nodes publish
    /// (`loop.body_alias_duplicate`) would give whichever ran last.
    pub(super) fn loop_outputs(&mut self, node: &Node, body: &Plan, path: &str) {
        let id = Some(node.id.as_str());
        let mut published: HashMap<&str, &str> = HashMap::new();
        for (i, inner) in body.graph.iter().enumerate() {
            for (local, alias) in inner.aliases() {
                match published.get(alias) {
                    Some(first) if *first != inner.id.as_str() => {
                        let (first, second) = (*first, inner.id.as_str());
                        self.error(
                            FindingCode::LoopBodyAliasDuplicate,
                            id,
                            format!("{path}/body/plan/graph/{i}/out/{}", escape_pointer(local)),
                            (
                                &format!(
                                    "繰り返しの中の {first} と {second} が同じ別名 {alias} を出力しています"
                                ),
                                &format!(
                                    "body nodes {first} and {second} both publish the alias {alias}"
                                ),
                            ),
                            Some((
                                "別名はノードごとに別の名前にしてください",
                                "give each body node's output its own alias",
                            )),
                        );
                    }
                    Some(_) => {}
                    None => {
                        published.insert(alias, inner.id.as_str());
                    }
                }
            }
        }
        for local in node.out.keys().filter(|k| k.as_str() != "collect") {
            if published.contains_key(local.as_str()) {
                continue;
            }
            let mut known: Vec<&str> = published.keys().copied().collect();
            known.sort_unstable();
            let list = known.join(", ");
            self.error(
                FindingCode::LoopOutUnknownAlias,
                id,
                format!("{path}/out/{}", escape_pointer(local)),
                (
                    &format!("loop の out.{local} は繰り返しの中のどの別名でもありません"),
                    &format!("loop out.{local} names no alias of the body"),
                ),
                Some((
                    &format!("collect か、body の別名から選んでください: {list}"),
                    &format!("use collect or one of the body's aliases: {list}"),
                )),
            );
        }
    }
}
