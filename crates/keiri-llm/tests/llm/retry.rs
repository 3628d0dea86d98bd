//! Retries, Retry-After, timeouts and cancellation.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use keiri_llm::testkit::{FakeServer, Reply, TestClock};
use keiri_llm::{
    CallOptions, CancellationToken, ChatRequest, Error, Message, NoJitter, RetryAfter, RetryPolicy,
};

use super::{compatible_env, llm};

fn hello() -> ChatRequest {
    ChatRequest::new(vec![Message::user("こんにちは")])
}

#[track_caller]
fn check_retry_after(retry_after: Option<&str>, retry_after_ms: Option<&str>, expect: Option<f64>) {
    let now: DateTime<Utc> = "2025-01-01T00:00:00Z".parse().unwrap();
    let got =
        RetryAfter::parse(retry_after, retry_after_ms).map(|r| r.delay_from(now).as_secs_f64());
    assert_eq!(
        got, expect,
        "Retry-After {retry_after:?}, retry-after-ms {retry_after_ms:?}"
    );
}

#[test]
fn retry_after_values() {
    check_retry_after(Some("2"), None, Some(2.0));
    check_retry_after(Some(" 0 "), None, Some(0.0));
    check_retry_after(Some("1.5"), None, Some(1.5));
    check_retry_after(Some("2"), Some("250"), Some(0.25));
    check_retry_after(None, Some("1500"), Some(1.5));
    check_retry_after(Some("Wed, 01 Jan 2025 00:00:30 GMT"), None, Some(30.0));
    // A date in the past means "now".
    check_retry_after(Some("Tue, 31 Dec 2024 23:00:00 GMT"), None, Some(0.0));
    check_retry_after(Some("-1"), None, None);
    check_retry_after(Some("inf"), None, None);
    check_retry_after(Some("1e999"), None, None);
    check_retry_after(Some("soon"), Some("x"), None);
    check_retry_after(None, None, None);
}

#[track_caller]
fn check_backoff(retry: u32, jitter: f64, expect_ms: u128) {
    let policy = RetryPolicy::default();
    assert_eq!(
        policy.backoff(retry, jitter).as_millis(),
        expect_ms,
        "retry {retry} jitter {jitter}"
    );
}

#[test]
fn backoff_doubles_caps_and_jitters_down() {
    check_backoff(1, 0.0, 500);
    check_backoff(2, 0.0, 1000);
    check_backoff(3, 0.0, 2000);
    check_backoff(6, 0.0, 16_000);
    check_backoff(7, 0.0, 20_000);
    check_backoff(40, 0.0, 20_000);
    check_backoff(1, 0.5, 375);
    check_backoff(1, f64::NAN, 500);
    check_backoff(2, 7.0, 500);
}

#[tokio::test]
async fn rate_limited_then_success_honours_retry_after() {
    let (url, server) = FakeServer::start(vec![
        Reply::rate_limited("2"),
        Reply::content("ok").with_usage(12, 3),
    ])
    .await
    .unwrap();
    let (llm, clock) = llm(&url);
    let r = llm.chat(&hello(), &CallOptions::new()).await.unwrap();
    assert_eq!(r.content.as_deref(), Some("ok"));
    assert_eq!(r.attempts, 2);
    assert_eq!(r.usage.total_tokens, 15);
    // Retry-After, not the 500 ms backoff.
    assert_eq!(clock.sleeps(), vec![Duration::from_secs(2)]);
    assert_eq!(server.request_count(), 2);
    // The same request was sent twice.
    let reqs = server.requests();
    assert_eq!(reqs[0].body, reqs[1].body);
}

#[tokio::test]
async fn server_errors_back_off_exponentially_then_fail_typed() {
    let (url, server) = FakeServer::start(vec![
        Reply::error(500, "boom"),
        Reply::error(502, "bad gateway"),
        Reply::error(503, "unavailable"),
        Reply::error(503, "still unavailable"),
    ])
    .await
    .unwrap();
    let (llm, clock) = llm(&url);
    let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
    assert_eq!(err.code(), "LLM_SERVER_ERROR");
    match &err {
        Error::ServerError {
            status,
            attempts,
            message,
        } => {
            assert_eq!((*status, *attempts), (503, 4));
            assert_eq!(message, "still unavailable");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        clock.sleeps(),
        [500, 1000, 2000].map(Duration::from_millis).to_vec()
    );
    assert_eq!(server.remaining(), 0);
}

#[tokio::test]
async fn retry_after_beyond_the_limit_fails_at_once() {
    let (url, server) = FakeServer::start(vec![Reply::rate_limited("3600")])
        .await
        .unwrap();
    let (llm, clock) = llm(&url);
    let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
    match err {
        Error::RateLimited {
            attempts,
            retry_after,
            ..
        } => {
            assert_eq!(attempts, 1);
            assert_eq!(retry_after, Some(Duration::from_secs(3600)));
        }
        other => panic!("{other:?}"),
    }
    assert!(clock.sleeps().is_empty());
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn rate_limit_exhausted_is_typed() {
    let (url, _server) =
        FakeServer::start(vec![Reply::rate_limited("1"), Reply::rate_limited("1")])
            .await
            .unwrap();
    let (llm, _clock) = llm(&url);
    let llm = llm.with_retry(RetryPolicy {
        max_retries: 1,
        ..RetryPolicy::default()
    });
    let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
    assert_eq!(err.code(), "LLM_RATE_LIMITED");
    assert!(err.to_string().contains("attempts: 2"), "{err}");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    for (reply, code) in [
        (Reply::error(400, "bad request"), "LLM_REQUEST_REJECTED"),
        (Reply::error(401, "Incorrect API key"), "LLM_UNAUTHORIZED"),
        (Reply::error(403, "forbidden"), "LLM_UNAUTHORIZED"),
        (Reply::error(404, "model not found"), "LLM_REQUEST_REJECTED"),
    ] {
        let (url, server) = FakeServer::start(vec![reply]).await.unwrap();
        let (llm, clock) = llm(&url);
        let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
        assert_eq!(err.code(), code, "{err}");
        assert_eq!(server.request_count(), 1);
        assert!(clock.sleeps().is_empty());
    }
}

#[tokio::test]
async fn a_timeout_is_a_typed_error_after_retries() {
    let slow = Reply::content("late").with_delay(Duration::from_secs(10));
    let (url, server) = FakeServer::start(vec![slow.clone(), slow]).await.unwrap();
    let (llm, clock) = llm(&url);
    let llm = llm
        .with_timeout(Duration::from_millis(200))
        .with_retry(RetryPolicy {
            max_retries: 1,
            ..RetryPolicy::default()
        });
    let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
    match &err {
        Error::Timeout { after, attempts } => {
            assert_eq!(*after, Duration::from_millis(200));
            assert_eq!(*attempts, 2);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.code(), "LLM_TIMEOUT");
    assert_eq!(clock.sleeps(), vec![Duration::from_millis(500)]);
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn timeouts_are_not_retried_when_the_policy_says_so() {
    let (url, server) = FakeServer::start(vec![
        Reply::content("late").with_delay(Duration::from_secs(10)),
    ])
    .await
    .unwrap();
    let (llm, _) = llm(&url);
    let llm = llm
        .with_timeout(Duration::from_millis(100))
        .with_retry(RetryPolicy {
            retry_timeouts: false,
            ..RetryPolicy::default()
        });
    let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
    assert!(matches!(err, Error::Timeout { attempts: 1, .. }), "{err:?}");
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn cancelled_before_sending_sends_nothing() {
    let (url, server) = FakeServer::start(vec![Reply::content("never")])
        .await
        .unwrap();
    let (llm, _) = llm(&url);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = llm
        .chat(&hello(), &CallOptions::new().with_cancel(cancel))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "LLM_CANCELLED");
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn cancellation_interrupts_a_request_in_flight() {
    let (url, server) = FakeServer::start(vec![
        Reply::content("slow").with_delay(Duration::from_secs(30)),
    ])
    .await
    .unwrap();
    let (llm, _) = llm(&url);
    let llm = llm.with_timeout(Duration::from_secs(60));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    // A generous bound: without cancellation the call would wait 30 s.
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        llm.chat(&hello(), &CallOptions::new().with_cancel(cancel)),
    )
    .await
    .expect("cancellation did not end the call");
    assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
    canceller.await.unwrap();
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn cancellation_interrupts_the_backoff_wait() {
    let (url, server) = FakeServer::start(vec![Reply::rate_limited("5"), Reply::content("ok")])
        .await
        .unwrap();
    let clock = Arc::new(TestClock::fixed().never_wakes());
    let llm = keiri_llm::Llm::from_env(&compatible_env(&url))
        .unwrap()
        .with_clock(clock.clone())
        .with_jitter(Arc::new(NoJitter));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        llm.chat(&hello(), &CallOptions::new().with_cancel(cancel)),
    )
    .await
    .expect("cancellation did not end the wait");
    assert!(matches!(result, Err(Error::Cancelled)), "{result:?}");
    assert_eq!(clock.sleeps(), vec![Duration::from_secs(5)]);
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn an_unreachable_server_is_a_connection_error_after_retries() {
    // Bind and drop a listener to get a port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (llm, clock) = llm(&format!("http://127.0.0.1:{port}/v1"));
    let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
    assert!(
        matches!(err, Error::Connection { attempts: 4, .. }),
        "{err:?}"
    );
    assert_eq!(clock.sleeps().len(), 3);
}

#[tokio::test]
async fn a_response_that_is_not_a_completion_is_typed() {
    for body in [
        serde_json::json!({"choices": []}),
        serde_json::json!({"unexpected": true}),
        serde_json::json!("plain text, not JSON"),
        serde_json::json!({"choices": "nope"}),
    ] {
        let (url, _server) = FakeServer::start(vec![Reply::raw(200, body.clone())])
            .await
            .unwrap();
        let (llm, _) = llm(&url);
        let err = llm.chat(&hello(), &CallOptions::new()).await.unwrap_err();
        assert_eq!(err.code(), "LLM_RESPONSE_INVALID", "{body}: {err}");
    }
}
