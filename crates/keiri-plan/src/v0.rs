//! The predecessor's (keiri_agent v0) block ids and what they became here: the one table
//! behind "did you mean" for an unknown v0 id and behind [`import_v0`], which rewrites a v0
//! plan's block ids and the input and output keys that map one to one, and lists precisely
//! what does not.
//!
//! Only keys whose values keep their shape are mapped (`items` → `rows`, `has_header` →
//! `header`): an input whose meaning or shape changed (v0's `conditions` list against our
//! `condition` expression, seconds against milliseconds, a workbook's bytes against a path) is
//! left as it was and listed, so the validator points at it and nothing is guessed.

use serde::Serialize;

use crate::catalog::Catalog;
use crate::model::{Node, Plan};

/// One v0 block and its successor here.
#[derive(Debug, Clone, Copy)]
pub struct V0Block {
    /// The v0 block id.
    pub from: &'static str,
    /// The block that does its job here; `None` when nothing does.
    pub to: Option<&'static str>,
    /// Blocks to look at when `to` is `None` or does only part of the job.
    pub see_also: &'static [&'static str],
    /// `(v0 input, our input)` for the inputs whose values keep their shape.
    pub inputs: &'static [(&'static str, &'static str)],
    /// `(v0 output, our output)` likewise.
    pub outputs: &'static [(&'static str, &'static str)],
}

const fn same(
    from: &'static str,
    inputs: &'static [(&'static str, &'static str)],
    outputs: &'static [(&'static str, &'static str)],
) -> V0Block {
    V0Block {
        from,
        to: Some(from),
        see_also: &[],
        inputs,
        outputs,
    }
}

const fn renamed(
    from: &'static str,
    to: &'static str,
    inputs: &'static [(&'static str, &'static str)],
    outputs: &'static [(&'static str, &'static str)],
) -> V0Block {
    V0Block {
        from,
        to: Some(to),
        see_also: &[],
        inputs,
        outputs,
    }
}

const fn gone(from: &'static str, see_also: &'static [&'static str]) -> V0Block {
    V0Block {
        from,
        to: None,
        see_also,
        inputs: &[],
        outputs: &[],
    }
}

/// Every block of v0's catalog (47 specs), read side by side with ours.
pub const V0_BLOCKS: &[V0Block] = &[
    renamed(
        "file.read_csv",
        "csv.read",
        &[
            ("path", "path"),
            ("encoding", "encoding"),
            ("delimiter", "delimiter"),
            ("has_header", "header"),
        ],
        &[("rows", "rows"), ("summary", "summary")],
    ),
    renamed(
        "transforms.filter",
        "transforms.filter_rows",
        &[("items", "rows")],
        &[("filtered", "rows"), ("excluded", "excluded")],
    ),
    renamed(
        "transforms.rename_fields",
        "transforms.rename_columns",
        &[("items", "rows"), ("rename", "mapping")],
        &[("rows", "rows")],
    ),
    renamed(
        "table.pivot",
        "transforms.pivot",
        &[
            ("rows", "rows"),
            ("index", "index"),
            ("columns", "columns"),
            ("values", "values"),
            ("aggfunc", "aggfunc"),
            ("fill_value", "fill_value"),
        ],
        &[("rows", "rows")],
    ),
    renamed(
        "table.unpivot",
        "transforms.unpivot",
        &[
            ("rows", "rows"),
            ("id_vars", "id_fields"),
            ("value_vars", "value_fields"),
            ("var_name", "variable_name"),
            ("value_name", "value_name"),
        ],
        &[("rows", "rows")],
    ),
    renamed(
        "transforms.group_by_agg",
        "transforms.group_aggregate",
        &[
            ("items", "rows"),
            ("by", "by"),
            ("aggregations", "aggregations"),
        ],
        &[("rows", "rows")],
    ),
    renamed(
        "transforms.pick",
        "transforms.pick_value",
        &[("source", "source"), ("path", "path")],
        &[("value", "value")],
    ),
    renamed(
        "transforms.coerce_values",
        "transforms.coerce_types",
        &[("items", "rows")],
        &[("rows", "rows")],
    ),
    renamed(
        "transforms.compute_fiscal_quarter",
        "transforms.fiscal_period",
        &[("start_month", "fiscal_year_start_month")],
        &[("period", "period")],
    ),
    renamed(
        "excel.read_data",
        "excel.read_workbook",
        &[],
        &[("rows", "rows"), ("summary", "summary")],
    ),
    renamed("excel.write", "excel.write_table", &[], &[]),
    renamed("excel.update_workbook", "excel.patch_workbook", &[], &[]),
    renamed(
        "notifier.notify",
        "notify.send",
        &[("attachments", "attachments")],
        &[],
    ),
    renamed(
        "scheduler.trigger",
        "schedule.trigger",
        &[],
        &[("next_run_at", "next_run_at")],
    ),
    renamed(
        "external.api.http",
        "http.request",
        &[
            ("method", "method"),
            ("url", "url"),
            ("headers", "headers"),
            ("params", "query"),
            ("body", "body"),
        ],
        &[("status", "status"), ("headers", "headers")],
    ),
    renamed(
        "data.quality.validate_rules",
        "control.data_quality",
        &[("items", "rows")],
        &[("summary", "summary")],
    ),
    renamed("file.parse_zip_2tier", "file.unzip_evidence", &[], &[]),
    renamed("evidence.vault.store", "evidence.archive", &[], &[]),
    renamed(
        "matching.record_linkage",
        "matching.fuzzy_match",
        &[("left", "left"), ("right", "right")],
        &[("matches", "matches"), ("summary", "summary")],
    ),
    same(
        "transforms.join",
        &[("left", "left"), ("right", "right")],
        &[("rows", "rows"), ("summary", "summary")],
    ),
    same("matching.semantic_topk", &[("top_k", "top_k")], &[]),
    same(
        "ai.process_llm",
        &[
            ("prompt", "prompt"),
            ("instruction", "instruction"),
            ("system_prompt", "system_prompt"),
            ("output_schema", "output_schema"),
        ],
        &[("results", "results"), ("summary", "summary")],
    ),
    same(
        "ui.interactive_input",
        &[
            ("mode", "mode"),
            ("requirements", "requirements"),
            ("message", "message"),
            ("context", "context"),
        ],
        &[
            ("collected_data", "collected_data"),
            ("approved", "approved"),
            ("response", "response"),
            ("metadata", "metadata"),
        ],
    ),
    same(
        "ui.confirmation",
        &[("message", "message")],
        &[("approved", "approved"), ("comment", "comment")],
    ),
    same(
        "ui.diff_viewer",
        &[("before", "before"), ("after", "after")],
        &[("diffs", "diffs"), ("approved", "approved")],
    ),
    same(
        "control.sampling",
        &[
            ("population", "population"),
            ("method", "method"),
            ("size", "size"),
            ("seed", "seed"),
        ],
        &[("samples", "samples"), ("summary", "summary")],
    ),
    same(
        "control.sod_check",
        &[("assignments", "assignments")],
        &[("violations", "violations"), ("summary", "summary")],
    ),
    same("control.approval", &[], &[("approved", "approved")]),
    same(
        "control.policy_enforce",
        &[("items", "rows")],
        &[
            ("violations", "violations"),
            ("passed", "passed"),
            ("summary", "summary"),
        ],
    ),
    gone(
        "file.extract_texts",
        &["pdf.extract_text", "docx.extract_text", "file.list_folder"],
    ),
    gone("nlp.summarize_structured", &["ai.summarize_documents"]),
    gone("nlp.chunk_texts", &["ai.summarize_documents"]),
    gone("nlp.embed_texts", &["matching.semantic_topk"]),
    gone("matching.similarity_cluster", &["matching.fuzzy_match"]),
    gone("transforms.group_evidence", &["file.unzip_evidence"]),
    gone("transforms.flatten_items", &["transforms.select_columns"]),
    gone("transforms.replace_values", &["transforms.compute_columns"]),
    gone("transforms.attach_context", &["transforms.compute_columns"]),
    gone("transforms.select_by_indices", &["transforms.filter_rows"]),
    gone(
        "transforms.compute_features",
        &["transforms.compute_columns"],
    ),
    gone("table.from_rows", &[]),
    gone("table.pandas_agent", &["ai.process_llm"]),
    gone("data.schema.diff", &["ui.diff_viewer"]),
    gone("data.provenance.capture", &["control.audit_log"]),
    gone("security.attestation.sign_manifest", &["evidence.archive"]),
    gone("file.encode_base64", &[]),
    gone("ui.placeholder", &["ui.interactive_input"]),
];

/// The v0 block `id`, if v0 had it.
pub fn v0_block(id: &str) -> Option<&'static V0Block> {
    V0_BLOCKS.iter().find(|b| b.from == id)
}

/// What became of a v0 block id here, best first: its successor, then the blocks worth a look.
pub fn v0_successors(id: &str) -> Vec<&'static str> {
    v0_block(id)
        .map(|b| b.to.into_iter().chain(b.see_also.iter().copied()).collect())
        .unwrap_or_default()
}

/// Blocks to suggest for the unknown id `wanted`: what a v0 id became (`file.read_csv` →
/// `csv.read`) first, then blocks of the same family or the same last word; at most five.
pub(crate) fn similar_blocks(catalog: &Catalog, wanted: &str) -> Vec<String> {
    let head = wanted.split('.').next().unwrap_or(wanted);
    let tail = wanted.rsplit('.').next().unwrap_or(wanted);
    let mut similar: Vec<String> = v0_successors(wanted)
        .into_iter()
        .filter(|id| catalog.get(id).is_some())
        .map(str::to_string)
        .collect();
    for b in catalog.blocks() {
        if (b.id.starts_with(&format!("{head}.")) || b.id.ends_with(&format!(".{tail}")))
            && !similar.contains(&b.id)
        {
            similar.push(b.id.clone());
        }
    }
    similar.truncate(5);
    similar
}

/// One thing [`import_v0`] changed or could not change, at a node.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ImportItem {
    /// The node's id, with its loop's id before it for a node inside a loop body (`loop/node`).
    pub node_id: String,
    /// What it is about: the block id, or the input or output key.
    pub subject: String,
    /// What happened, or why it could not (English).
    pub detail: String,
}

/// What [`import_v0`] did to a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The plan with the block ids and the keys that map one to one rewritten.
    pub plan: Plan,
    /// What was rewritten.
    pub rewritten: Vec<ImportItem>,
    /// What has no one-to-one equivalent and was left as it was, for the user to rewrite.
    pub unmapped: Vec<ImportItem>,
}

/// Rewrites a v0 plan for this catalog (see the module doc): block ids, and the input and
/// output keys that map one to one, in every node including loop bodies. A block that is
/// neither a v0 block nor in `catalog` is listed as unknown.
pub fn import_v0(plan: &Plan, catalog: &Catalog) -> Imported {
    let mut out = Imported {
        plan: plan.clone(),
        rewritten: Vec::new(),
        unmapped: Vec::new(),
    };
    let mut graph = std::mem::take(&mut out.plan.graph);
    import_graph(&mut graph, "", catalog, &mut out);
    out.plan.graph = graph;
    out
}

fn import_graph(graph: &mut [Node], base: &str, catalog: &Catalog, out: &mut Imported) {
    for node in graph {
        let node_id = format!("{base}{}", node.id);
        if let Some(body) = node.body.as_mut() {
            import_graph(&mut body.plan.graph, &format!("{node_id}/"), catalog, out);
        }
        let Some(block) = node.block.clone() else {
            continue;
        };
        let item = |subject: &str, detail: String| ImportItem {
            node_id: node_id.clone(),
            subject: subject.to_string(),
            detail,
        };
        let Some(v0) = v0_block(&block) else {
            if catalog.get(&block).is_none() {
                out.unmapped.push(item(
                    &block,
                    "neither a v0 block nor in this catalog".to_string(),
                ));
            }
            continue;
        };
        let Some(to) = v0.to else {
            let look = if v0.see_also.is_empty() {
                String::new()
            } else {
                format!("; see {}", v0.see_also.join(", "))
            };
            out.unmapped.push(item(
                &block,
                format!("v0's {block} has no equivalent here: the node must be rewritten{look}"),
            ));
            continue;
        };
        if to != block {
            node.block = Some(to.to_string());
            out.rewritten
                .push(item(&block, format!("block {block} is now {to}")));
        }
        node.inputs = rename_keys(&node.inputs, v0.inputs, |key, renamed| match renamed {
            Some(ours) if ours != key => out
                .rewritten
                .push(item(key, format!("input {key} is now {ours}"))),
            Some(_) => {}
            None => out.unmapped.push(item(
                key,
                format!("input {key} of v0's {block} has no one-to-one equivalent in {to}"),
            )),
        });
        node.out = rename_keys(&node.out, v0.outputs, |key, renamed| match renamed {
            Some(ours) if ours != key => out
                .rewritten
                .push(item(key, format!("output {key} is now {ours}"))),
            Some(_) => {}
            None => out.unmapped.push(item(
                key,
                format!("output {key} of v0's {block} has no one-to-one equivalent in {to}"),
            )),
        });
    }
}

/// `map` with its keys renamed by `table` (kept in order; a key the table lacks is kept as it
/// is), telling `seen` what became of each key.
fn rename_keys<V: Clone>(
    map: &indexmap::IndexMap<String, V>,
    table: &[(&str, &'static str)],
    mut seen: impl FnMut(&str, Option<&'static str>),
) -> indexmap::IndexMap<String, V> {
    map.iter()
        .map(|(key, value)| {
            let renamed = table
                .iter()
                .find(|(v0, _)| v0 == key)
                .map(|(_, ours)| *ours);
            seen(key, renamed);
            (renamed.unwrap_or(key).to_string(), value.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_successor_named_is_a_block_of_the_shipped_catalog() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
        let (catalog, _) = Catalog::load(&[dir]);
        for b in V0_BLOCKS {
            for id in b.to.iter().chain(b.see_also) {
                assert!(catalog.get(id).is_some(), "{} -> {id}", b.from);
            }
            if let Some(to) = b.to {
                let spec = catalog.get(to).unwrap();
                for (_, ours) in b.inputs {
                    assert!(spec.inputs.contains_key(*ours), "{to} has no input {ours}");
                }
                for (_, ours) in b.outputs {
                    assert!(
                        spec.outputs.contains_key(*ours),
                        "{to} has no output {ours}"
                    );
                }
            }
        }
    }
}
