//! One module per subcommand group.

pub mod apply_patch;
pub mod chat;
pub mod eval;
pub mod extract;
pub mod generate;
pub mod llm;
pub mod mcp;
pub mod patch;
pub mod plan;
pub mod retrieve;
pub mod run;
pub mod serve;

use std::future::Future;

use keiri_api::EventSink;

/// The events of one API call, for a command that shows them on the terminal as they come.
///
/// The API's streaming calls are `async` and send their events to an [`EventSink`] from
/// whichever thread does the work; a progress bar or a prompt wants them on the command's own
/// thread. [`Events::drive`] runs the call on the CLI's runtime and hands each event to the
/// command there, in order, before the result.
pub struct Events<E> {
    rx: tokio::sync::mpsc::UnboundedReceiver<E>,
}

/// A sink for a call and the [`Events`] that receive what it sends.
pub fn events<E: Send + 'static>() -> (EventSink<E>, Events<E>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let sink = EventSink::new(move |event| {
        // The receiver lives until the call is driven to its end.
        let _ = tx.send(event);
    });
    (sink, Events { rx })
}

impl<E> Events<E> {
    /// Runs `call` to its end on `runtime`, passing each event to `on_event` on this thread.
    pub fn drive<T>(
        mut self,
        runtime: &tokio::runtime::Runtime,
        call: impl Future<Output = T>,
        mut on_event: impl FnMut(E),
    ) -> T {
        runtime.block_on(async {
            let mut call = std::pin::pin!(call);
            loop {
                tokio::select! {
                    biased;
                    Some(event) = self.rx.recv() => on_event(event),
                    out = &mut call => {
                        // What was sent just before the end, still in the channel.
                        while let Ok(event) = self.rx.try_recv() {
                            on_event(event);
                        }
                        return out;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_reaches_the_command_in_order_before_the_result() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (sink, events) = events::<u32>();
        let mut seen = Vec::new();
        // Sent from the blocking pool, as a run's blocks send theirs, the last ones just
        // before the call ends.
        let out = events.drive(
            &runtime,
            async {
                let sink = sink.clone();
                tokio::task::spawn_blocking(move || (0..500).for_each(|i| sink.send(i)))
                    .await
                    .unwrap();
                "done"
            },
            |e| seen.push(e),
        );
        assert_eq!(out, "done");
        assert_eq!(seen, (0..500).collect::<Vec<_>>());
    }
}
