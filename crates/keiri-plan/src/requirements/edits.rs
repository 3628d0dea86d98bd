//! Edits that answers make to a plan beyond setting a value: rules dropped and inputs left
//! out for columns the file lacks (said in the plan's description), and the walk to the slot
//! an answer fills.

use indexmap::IndexMap;
use serde_json::Value;

use super::types::TargetPlace;
use crate::model::{Node, Plan};

/// Removes the rules whose column the file does not have (after every other answer, which
/// names elements by their first index), and says which in the plan's description: a rule
/// left out is never silent.
pub(super) fn drop_rules(
    plan: &mut Plan,
    dropped: IndexMap<(String, String), Vec<(usize, String)>>,
) {
    let mut said = Vec::new();
    for ((node_id, input), mut places) in dropped {
        let Some(Value::Array(rules)) =
            find_node_mut(&mut plan.graph, &node_id).and_then(|n| n.inputs.get_mut(&input))
        else {
            continue;
        };
        places.sort_by_key(|p| std::cmp::Reverse(p.0));
        let mut gone = Vec::new();
        for (i, column) in places {
            if i < rules.len() {
                let rule = rules.remove(i);
                let name = ["id", "description"]
                    .iter()
                    .find_map(|k| rule.get(*k).and_then(Value::as_str))
                    .map_or_else(|| format!("{}", i + 1), str::to_string);
                gone.push(format!("{name}（列「{column}」）"));
            }
        }
        gone.reverse();
        if !gone.is_empty() {
            said.push(format!("{node_id}.{input}: {}", gone.join("、")));
        }
    }
    if said.is_empty() {
        return;
    }
    let note = format!(
        "ファイルにない列を読むため外したルール / rules dropped for columns the file lacks: {}",
        said.join("; ")
    );
    say_in_description(plan, note);
}

/// Adds a line to the plan's description.
pub(super) fn say_in_description(plan: &mut Plan, note: String) {
    plan.description = Some(match plan.description.take() {
        Some(d) if !d.trim().is_empty() => format!("{}\n{note}", d.trim_end()),
        _ => note,
    });
}

/// The value at `place` of `node`'s input `input`: the input, its element, or a key of it.
pub(super) fn slot_mut<'n>(
    node: &'n mut Node,
    input: &str,
    place: &TargetPlace,
) -> Option<&'n mut Value> {
    if let (None, Some(key)) = (place.index, &place.field) {
        // A mapping's key (`field_map`'s `po_no`), the mapping made when the plan left it out.
        let map = node
            .inputs
            .entry(input.to_string())
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        return Some(
            map.as_object_mut()?
                .entry(key.clone())
                .or_insert(Value::Null),
        );
    }
    let slot = node.inputs.get_mut(input)?;
    match (place.index, &place.field) {
        (None, _) => Some(slot),
        (Some(i), None) => slot.get_mut(i),
        (Some(i), Some(f)) => slot.get_mut(i)?.get_mut(f),
    }
}

pub(super) fn find_node_mut<'p>(graph: &'p mut [Node], id: &str) -> Option<&'p mut Node> {
    for node in graph {
        if node.id == id {
            return Some(node);
        }
        if let Some(body) = &mut node.body
            && let Some(found) = find_node_mut(&mut body.plan.graph, id)
        {
            return Some(found);
        }
    }
    None
}

/// Replaces every value that is exactly `reference` (`${vars.q}`) in the plan's graph, loop
/// bodies included, with an empty text; returns the places (`node.input`) it changed.
pub(super) fn clear_var_refs(graph: &mut [Node], reference: &str) -> Vec<String> {
    fn clear(value: &mut Value, reference: &str) -> bool {
        match value {
            Value::String(s) if s == reference => {
                s.clear();
                true
            }
            Value::Array(items) => items.iter_mut().fold(false, |c, v| clear(v, reference) | c),
            Value::Object(map) => map.values_mut().fold(false, |c, v| clear(v, reference) | c),
            _ => false,
        }
    }
    let mut places = Vec::new();
    for node in graph {
        for (input, value) in node.inputs.iter_mut() {
            if clear(value, reference) {
                places.push(format!("{}.{input}", node.id));
            }
        }
        if let Some(body) = &mut node.body {
            places.extend(clear_var_refs(&mut body.plan.graph, reference));
        }
    }
    places
}
