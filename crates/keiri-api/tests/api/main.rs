#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of keiri-api: every function called through its public surface
//! ([`keiri_api::dispatch`] / [`keiri_api::dispatch_stream`], or the Rust function), one module
//! per area, with the repository's catalog and templates.
mod chat;
mod connection;
mod diff;
mod documents;
mod error;
mod generate;
mod plan;
mod retrieve;
mod run;
mod settings;
mod stream;
mod surface;
mod tools;
mod upload;
mod walls;
mod workbook;

/// The tests' way to call the async API from a plain `#[test]`: on a runtime of its own, as a
/// front-end would, with each event handed to the test's closure as it happens.
pub mod support {
    use std::path::Path;

    use keiri_api::{ApiError, CancellationToken, Context, EventSink};
    use serde_json::Value;

    /// A context on `dir` with the repository's catalog and templates.
    pub fn test_context(dir: &Path) -> Context {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut ctx = Context::new(dir).with_catalog_dirs(vec![root.join("block_specs")]);
        ctx.template_dirs = vec![root.join("templates")];
        ctx
    }

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    }

    /// Runs `f` with a sink whose events reach `on_event` on this thread, in order.
    pub fn drive<E: Send + 'static, T>(
        on_event: &mut dyn FnMut(E),
        f: impl AsyncFnOnce(&EventSink<E>) -> T,
    ) -> T {
        let (sink, events) = keiri_api::events();
        runtime().block_on(events.drive(f(&sink), on_event))
    }

    /// [`keiri_api::dispatch`], blocking.
    pub fn call(ctx: &Context, name: &str, body: Value) -> Result<Value, ApiError> {
        runtime().block_on(keiri_api::dispatch(ctx, name, body))
    }

    /// [`keiri_api::dispatch_stream`], blocking, each event to `on_event` as it happens.
    pub fn call_stream(
        ctx: &Context,
        name: &str,
        body: Value,
        on_event: &mut dyn FnMut(Value),
        cancel: &CancellationToken,
    ) -> Result<Value, ApiError> {
        drive(on_event, async |sink: &EventSink<Value>| {
            keiri_api::dispatch_stream(ctx, name, body, sink.clone(), cancel).await
        })
    }
}
