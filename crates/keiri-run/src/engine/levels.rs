//! The order a plan level runs in: its nodes grouped by dependency depth, and for each node
//! the last level that reads it (its outputs are released after that level at the top), and
//! the nodes of a level run side by side.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Maps `f` over `items` on at most `limit` scoped threads; results in item order.
pub(super) fn parallel<T: Sync, R: Send>(
    items: &[T],
    limit: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    if limit <= 1 || items.len() <= 1 {
        return items.iter().map(&f).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..limit.min(items.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(item) = items.get(i) else {
                        break;
                    };
                    let r = f(item);
                    *slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}
