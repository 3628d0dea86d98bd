//! Bounded parallelism without a thread-pool dependency: scoped threads pull indices from a
//! shared counter, and results keep the input order.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Maps `f` over `items` on at most `workers` threads; the output order is the input order.
pub(crate) fn map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let workers = workers.clamp(1, items.len().max(1));
    if workers == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let result = f(item);
                    if let Some(Ok(mut slot)) = slots.get(i).map(Mutex::lock) {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    // Every slot is filled: a worker that panicked would have made `scope` panic above.
    slots
        .into_iter()
        .filter_map(|m| m.into_inner().ok().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_order_and_visits_everything() {
        let items: Vec<u32> = (0..100).collect();
        for workers in [1, 2, 4, 16] {
            let out = super::map(&items, workers, |x| x * 2);
            assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
        }
        assert!(super::map(&Vec::<u32>::new(), 4, |x| *x).is_empty());
    }
}
