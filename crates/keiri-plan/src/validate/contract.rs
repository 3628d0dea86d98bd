//! The validator's data-contract checks: columns a node reads that its rows lack, and loop
//! outputs that name no body alias or more than one.

use std::collections::HashMap;

use super::{Finding, Severity, Validator, pick};
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
            let list = m.columns.join(", ");
            let (by_ja, by_en) = if m.from_default {
                ("（既定値）", " (its default)")
            } else {
                ("", "")
            };
            let (ja, en) = (
                format!(
                    "{} の {}{by_ja} が指定する列「{}」は {file} にありません",
                    m.node_id, m.input, m.wanted
                ),
                format!(
                    "{}.{}{by_en} names the column {:?}, which {file} does not have",
                    m.node_id, m.input, m.wanted
                ),
            );
            let (hint_ja, hint_en) = match &m.same_after_normalizing {
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
                message: pick(lang, (&ja, &en)).to_string(),
                hint: Some(pick(lang, (&hint_ja, &hint_en)).to_string()),
                choices: m.columns.clone(),
                missing_column: Some(m.wanted.clone()),
                line: None,
                column: None,
            });
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
