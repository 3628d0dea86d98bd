//! Rate limits, timeouts and a missing provider, as the planner sees them.

use std::time::Duration;

use keiri_design::{ApplyMode, Context, Status};
use keiri_llm::testkit::Reply;
use keiri_llm::{Env, Llm, RetryPolicy};
use serde_json::json;

use super::*;

#[tokio::test]
async fn a_429_then_success_is_retried() {
    let scripted = Scripted::start(vec![
        Reply::rate_limited("2"),
        Reply::json_content(&skeleton(json!([]))),
        Reply::json_content(&wiring("invoices.csv", "${read.rows}", json!([]))),
    ])
    .await;
    let result = scripted.generate(&options()).await.unwrap();
    assert_eq!(result.status, Status::Valid, "{:?}", result.errors);
    assert_eq!(scripted.server.request_count(), 3);
    assert_eq!(scripted.clock.sleeps(), vec![Duration::from_secs(2)]);
}

#[tokio::test]
async fn a_timeout_is_a_typed_error() {
    let slow = Reply::json_content(&skeleton(json!([]))).with_delay(Duration::from_secs(10));
    let mut scripted = Scripted::start(vec![slow.clone(), slow]).await;
    scripted.llm = scripted
        .llm
        .clone()
        .with_timeout(Duration::from_millis(200))
        .with_retry(RetryPolicy {
            max_retries: 1,
            ..RetryPolicy::default()
        });
    let err = scripted.generate(&options()).await.unwrap_err();
    assert_eq!(err.code(), "LLM_TIMEOUT", "{err}");
    assert!(
        matches!(
            err,
            keiri_design::Error::Llm {
                stage: "skeleton",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn no_provider_gives_a_message_naming_the_variables() {
    let err = Llm::from_env(&Env::from_pairs::<[(&str, &str); 0], _, _>([])).unwrap_err();
    assert_eq!(err.code(), "LLM_NOT_CONFIGURED");
    let (catalog, templates) = (catalog(), templates());
    for mode in [ApplyMode::Hint, ApplyMode::LlmOnly] {
        let options = GenerateOptions {
            apply_mode: mode,
            ..options()
        };
        let err = keiri_design::generate_plan(
            INSTRUCTION,
            "",
            &options,
            &Context::new(&catalog, &templates),
        )
        .await
        .unwrap_err();
        assert_eq!(err.code(), "LLM_NOT_CONFIGURED");
        let message = err.to_string();
        for var in [
            "OPENAI_API_KEY",
            "AZURE_OPENAI_API_KEY",
            "KEIRI_LLM_BASE_URL",
            "compose",
        ] {
            assert!(message.contains(var), "{var} missing from {message}");
        }
    }
}
