//! The order a plan level runs in: its nodes grouped by dependency depth, and for each node
//! the last level that reads it (its outputs are released after that level at the top).

use std::collections::HashMap;

use keiri_plan::model::Plan;

/// Nodes grouped by dependency depth; each level in file order.
pub(super) fn levels(plan: &Plan) -> Vec<Vec<usize>> {
    let order = keiri_plan::dry_run::topological_order(plan);
    let index: HashMap<&str, usize> = plan
        .graph
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id.as_str(), i))
        .collect();
    let mut depth = vec![0usize; plan.graph.len()];
    for &i in &order {
        let deps = keiri_plan::dry_run::dependencies(&plan.graph[i], plan);
        depth[i] = deps
            .iter()
            .filter_map(|d| index.get(d.as_str()))
            .filter(|&&d| d != i)
            .map(|&d| depth[d] + 1)
            .max()
            .unwrap_or(0);
    }
    let max = depth.iter().copied().max().unwrap_or(0);
    let mut levels = vec![Vec::new(); if plan.graph.is_empty() { 0 } else { max + 1 }];
    for (i, d) in depth.into_iter().enumerate() {
        levels[d].push(i);
    }
    levels
}

/// For each node that others refer to, the last level (index into `levels`) of a node that
/// refers to it.
pub(super) fn last_uses(plan: &Plan, levels: &[Vec<usize>]) -> HashMap<String, usize> {
    let mut last = HashMap::new();
    for (level_index, level) in levels.iter().enumerate() {
        for &i in level {
            for dep in keiri_plan::dry_run::dependencies(&plan.graph[i], plan) {
                let entry = last.entry(dep).or_insert(level_index);
                *entry = (*entry).max(level_index);
            }
        }
    }
    last
}
