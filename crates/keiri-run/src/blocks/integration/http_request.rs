//! `http.request`, and the one guarded HTTP client that `notify.send` webhooks use too.
//!
//! * **Allowlist.** The URL's scheme, host and port must be on [`BlockContext::allow_hosts`]
//!   ([`crate::allow_hosts`]: `api.example.com` means ports 80 and 443 only,
//!   `127.0.0.1:8080` that port); otherwise `HOST_NOT_ALLOWED`, before any connection is made.
//! * **Redirects** are followed only to a URL the allowlist allows too, never from https to
//!   http, at most [`MAX_REDIRECTS`], and not at all with `follow_redirects: false` (the
//!   redirect is then the response); a refused redirect is `HOST_NOT_ALLOWED`. Every redirect
//!   and what was done about it is a `redirect` event of the run.
//! * **Bounds.** `timeout_ms` (at most [`MAX_TIMEOUT_MS`]) covers the whole request; a
//!   response body over [`MAX_RESPONSE_BYTES`] fails instead of filling memory.
//! * **Proxies** come from the environment (`HTTPS_PROXY`, `NO_PROXY`, …) as in every reqwest
//!   client, except for loopback hosts, which a proxy could not reach.
//! * A response's `Set-Cookie` values are replaced by `(redacted)` in the `headers` output,
//!   because outputs are saved in the run records.

use std::io::Read;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use reqwest::Url;
use reqwest::blocking::{Client, RequestBuilder};
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::redirect::Policy;
use serde_json::{Value as Json, json};

use crate::allow_hosts::{host_key, site, url_allowed};
use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs, Redirect};

/// The largest response body read, in bytes (10 MB).
pub(super) const MAX_RESPONSE_BYTES: u64 = 10 * 1024 * 1024;
/// The longest `timeout_ms` a plan may ask for (5 minutes).
pub(super) const MAX_TIMEOUT_MS: u64 = 300_000;
/// Redirects followed (same host only) before giving up.
pub(super) const MAX_REDIRECTS: usize = 5;
/// How long connecting may take at most, within the request's timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `HOST_NOT_ALLOWED` for `host`, with the hint to allow it in settings.
pub(super) fn host_not_allowed(host: &str, via_redirect: bool) -> BlockError {
    let (ja, en) = if via_redirect {
        (
            format!("ホスト {host} へのリダイレクトは許可されていません"),
            format!("the redirect to host {host} is not allowed"),
        )
    } else {
        (
            format!("ホスト {host} への通信は許可されていません"),
            format!("host {host} is not allowed"),
        )
    };
    BlockError::new(ErrorCode::HostNotAllowed, ja, en).with_hint(
        format!("このホストを使うには、設定の「通信を許可するホスト」に {host} を追加してください"),
        format!("to use this host, add {host} to the allowed hosts in settings"),
    )
}

/// Parses `text` (input `key`) as an http(s) URL whose host is allowed.
pub(super) fn allowed_url(
    ctx: &BlockContext<'_>,
    key: &str,
    text: &str,
) -> Result<Url, BlockError> {
    let url = Url::parse(text.trim()).map_err(|e| {
        BlockError::input_invalid(
            key,
            &format!("URLとして読めません（{e}）"),
            &format!("not a URL ({e})"),
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(BlockError::input_invalid(
            key,
            "http か https のURLが必要です",
            "expected an http or https URL",
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(BlockError::input_invalid(
            key,
            "URLにホストがありません",
            "the URL has no host",
        ));
    }
    if !url_allowed(&url, ctx.allow_hosts) {
        return Err(host_not_allowed(&site(&url), false));
    }
    Ok(url)
}

/// A finished exchange: status, headers and the body (at most [`MAX_RESPONSE_BYTES`]).
pub(super) struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// Sends a request to `url` (already checked by [`allowed_url`]) with the guarded client:
/// `build` adds the method, headers and body. Messages name the URL as `shown`.
///
/// A redirect is followed only when `follow` is on and its target (scheme, host and port) is
/// on the allowlist too, never from https to http, at most [`MAX_REDIRECTS`] times. Each
/// redirect's decision is reported on [`BlockContext::calls`] (a `redirect` event, its URLs
/// as `show` writes them). With `follow` off the redirect itself is the response.
pub(super) fn send(
    ctx: &BlockContext<'_>,
    url: &Url,
    shown: &str,
    timeout: Duration,
    follow: bool,
    show: fn(&Url) -> String,
    build: impl FnOnce(&Client) -> RequestBuilder,
) -> Result<Response, BlockError> {
    // The site a refused redirect wanted, to report it as HOST_NOT_ALLOWED.
    let refused: Arc<Mutex<Option<String>>> = Arc::default();
    let decisions: Arc<Mutex<Vec<Redirect>>> = Arc::default();
    let refused_in_policy = Arc::clone(&refused);
    let decisions_in_policy = Arc::clone(&decisions);
    let allow_hosts = ctx.allow_hosts.to_vec();
    let policy = Policy::custom(move |attempt| {
        let target = attempt.url().clone();
        let from = attempt.previous().last().cloned();
        let reason = redirect_reason(follow, attempt.previous(), &target, &allow_hosts);
        decisions_in_policy
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Redirect {
                from: from.as_ref().map(show).unwrap_or_default(),
                to: show(&target),
                followed: reason == "allowed",
                reason: reason.to_string(),
            });
        match reason {
            "allowed" => attempt.follow(),
            "disabled" => attempt.stop(),
            "too_many" => attempt.error("too many redirects"),
            _ => {
                *refused_in_policy
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner) = Some(site(&target));
                attempt.error("redirect to a site that is not allowed")
            }
        }
    });
    let result = send_with(url, shown, timeout, policy, &refused, build);
    for decision in std::mem::take(&mut *decisions.lock().unwrap_or_else(PoisonError::into_inner)) {
        ctx.calls.redirect(decision);
    }
    result
}

/// What to do with a redirect to `target` after the requests of `chain` (the first one
/// included): `allowed`, or why not (`disabled`, `downgrade`, `not_allowed`, `too_many`).
fn redirect_reason(
    follow: bool,
    chain: &[Url],
    target: &Url,
    allow_hosts: &[String],
) -> &'static str {
    if !follow {
        "disabled"
    } else if chain.iter().any(|u| u.scheme() == "https") && target.scheme() != "https" {
        "downgrade"
    } else if !url_allowed(target, allow_hosts) {
        "not_allowed"
    } else if chain.len() >= MAX_REDIRECTS {
        "too_many"
    } else {
        "allowed"
    }
}

fn send_with(
    url: &Url,
    shown: &str,
    timeout: Duration,
    policy: Policy,
    refused: &Mutex<Option<String>>,
    build: impl FnOnce(&Client) -> RequestBuilder,
) -> Result<Response, BlockError> {
    let mut builder = Client::builder()
        .redirect(policy)
        .timeout(timeout)
        .connect_timeout(timeout.min(CONNECT_TIMEOUT))
        .user_agent(concat!("keiri-studio/", env!("CARGO_PKG_VERSION")));
    if is_loopback(url) {
        builder = builder.no_proxy();
    }
    let failed = |ja: String, en: String| BlockError::failed(ja, en);
    let client = builder.build().map_err(|e| {
        failed(
            format!("HTTPクライアントを準備できません: {e}"),
            format!("cannot set up the HTTP client: {e}"),
        )
    })?;
    let request_error = |e: reqwest::Error| {
        if let Some(host) = refused
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            return host_not_allowed(&host, true);
        }
        if e.is_timeout() {
            return BlockError::new(
                ErrorCode::Timeout,
                format!(
                    "{shown} が {} ミリ秒以内に応答しませんでした",
                    timeout.as_millis()
                ),
                format!("{shown} did not answer within {} ms", timeout.as_millis()),
            );
        }
        failed(
            format!("{shown} に接続できませんでした: {e}"),
            format!("request to {shown} failed: {e}"),
        )
    };
    let response = build(&client).send().map_err(request_error)?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let too_large = || {
        failed(
            format!("{shown} の応答が大きすぎます（上限 {MAX_RESPONSE_BYTES} バイト）"),
            format!("the response of {shown} is over the limit of {MAX_RESPONSE_BYTES} bytes"),
        )
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_RESPONSE_BYTES)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    response
        .take(MAX_RESPONSE_BYTES + 1)
        .read_to_end(&mut body)
        .map_err(|e| {
            if refused
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some()
            {
                return host_not_allowed(&site(url), true);
            }
            failed(
                format!("{shown} の応答を読めませんでした: {e}"),
                format!("cannot read the response of {shown}: {e}"),
            )
        })?;
    if body.len() as u64 > MAX_RESPONSE_BYTES {
        return Err(too_large());
    }
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// Whether the URL's host is this machine (a proxy could not reach it).
fn is_loopback(url: &Url) -> bool {
    let host = host_key(url.host_str().unwrap_or_default());
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// A webhook URL as shown in messages and records: scheme and host only, because the path
/// of an incoming webhook is its secret.
pub(super) fn origin(url: &Url) -> String {
    format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default())
}

/// The URL as shown in messages: without its query (tokens live there) or credentials.
pub(super) fn redacted(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.to_string()
}

// ---------------------------------------------------------------------------------------
// http.request

/// A JSON scalar as the text a header or query parameter carries.
fn scalar_text(value: &Json) -> Option<String> {
    match value {
        Json::String(s) => Some(s.clone()),
        Json::Number(n) => Some(n.to_string()),
        Json::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn object(inputs: &Inputs, key: &str) -> Result<serde_json::Map<String, Json>, BlockError> {
    match inputs.json(key) {
        None => Ok(serde_json::Map::new()),
        Some(Json::Object(map)) => Ok(map),
        Some(_) => Err(BlockError::input_invalid(
            key,
            "オブジェクト（名前と値の組）が必要です",
            "expected an object of names and values",
        )),
    }
}

pub(super) fn http_request(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let method_text = inputs.str("method")?.unwrap_or("GET").to_ascii_uppercase();
    let method = match method_text.as_str() {
        "GET" => reqwest::Method::GET,
        "POST" => reqwest::Method::POST,
        "PUT" => reqwest::Method::PUT,
        "PATCH" => reqwest::Method::PATCH,
        "DELETE" => reqwest::Method::DELETE,
        _ => {
            return Err(BlockError::input_invalid(
                "method",
                "GET・POST・PUT・PATCH・DELETE のどれかです",
                "expected GET, POST, PUT, PATCH or DELETE",
            ));
        }
    };
    let mut url = allowed_url(ctx, "url", inputs.require_str("url")?)?;
    let query = object(inputs, "query")?;
    if !query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (name, value) in &query {
            let values = match value {
                Json::Null => Vec::new(),
                Json::Array(items) => items.clone(),
                other => vec![other.clone()],
            };
            for v in &values {
                let text = scalar_text(v).ok_or_else(|| {
                    BlockError::input_invalid(
                        "query",
                        &format!("{name} の値は文字列・数値・真偽値（またはその配列）です"),
                        &format!("the value of {name} must be a string, number or boolean (or a list of them)"),
                    )
                })?;
                pairs.append_pair(name, &text);
            }
        }
    }
    let mut headers = HeaderMap::new();
    for (name, value) in object(inputs, "headers")? {
        let bad = || {
            BlockError::input_invalid(
                "headers",
                &format!("ヘッダー {name} が不正です"),
                &format!("header {name} is not valid"),
            )
        };
        let text = scalar_text(&value).ok_or_else(bad)?;
        let header = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| bad())?;
        let value = HeaderValue::from_str(text.trim()).map_err(|_| bad())?;
        headers.append(header, value);
    }
    let timeout_ms = inputs.i64("timeout_ms")?.unwrap_or(30_000);
    let timeout_ms = u64::try_from(timeout_ms)
        .ok()
        .filter(|t| (1..=MAX_TIMEOUT_MS).contains(t))
        .ok_or_else(|| {
            BlockError::input_invalid(
                "timeout_ms",
                &format!("1〜{MAX_TIMEOUT_MS} ミリ秒で指定してください"),
                &format!("expected 1 to {MAX_TIMEOUT_MS} milliseconds"),
            )
        })?;
    let expected: Option<Vec<u16>> = match inputs.json("expected_status") {
        None => None,
        Some(Json::Array(items)) => Some(
            items
                .iter()
                .map(|i| {
                    i.as_u64()
                        .filter(|s| (100..=599).contains(s))
                        .map(|s| s as u16)
                })
                .collect::<Option<Vec<u16>>>()
                .ok_or_else(|| {
                    BlockError::input_invalid(
                        "expected_status",
                        "100〜599 のステータスコードの配列が必要です",
                        "expected a list of status codes from 100 to 599",
                    )
                })?,
        ),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "expected_status",
                "ステータスコードの配列が必要です",
                "expected a list of status codes",
            ));
        }
    };
    let body = inputs.json("body");
    super::cancelled(ctx)?;

    let follow = inputs.bool("follow_redirects")?.unwrap_or(true);
    let response = send(
        ctx,
        &url,
        &redacted(&url),
        Duration::from_millis(timeout_ms),
        follow,
        redacted,
        |client| {
            let mut request = client.request(method, url.clone()).headers(headers.clone());
            match body {
                None => {}
                Some(Json::String(text)) => {
                    if !headers.contains_key(CONTENT_TYPE) {
                        request = request.header(CONTENT_TYPE, "text/plain; charset=utf-8");
                    }
                    request = request.body(text);
                }
                Some(value) => {
                    if !headers.contains_key(CONTENT_TYPE) {
                        request = request.header(CONTENT_TYPE, "application/json");
                    }
                    request = request.body(value.to_string());
                }
            }
            request
        },
    )?;

    let body = response_body(&response);
    let ok = match &expected {
        Some(list) => list.contains(&response.status),
        None => (200..=299).contains(&response.status),
    };
    if !ok {
        let excerpt: String = match &body {
            Json::String(s) => s.chars().take(200).collect(),
            other => other.to_string().chars().take(200).collect(),
        };
        let shown = redacted(&url);
        return Err(BlockError::failed(
            format!(
                "{method_text} {shown} の応答ステータス {} は想定外です: {excerpt}",
                response.status
            ),
            format!(
                "{method_text} {shown} answered with unexpected status {}: {excerpt}",
                response.status
            ),
        )
        .with_hint(
            "成功とみなすステータスは expected_status で指定できます",
            "the statuses treated as success can be set in expected_status",
        ));
    }
    Ok(Outputs::new()
        .with("status", json!(response.status))
        .with("body", body)
        .with("headers", headers_json(&response.headers)))
}

builtin!("http.request", http_request);

/// The response body: parsed when the server says JSON and it parses, else text decoded by
/// the `charset` of its content type (UTF-8 when none is given).
fn response_body(response: &Response) -> Json {
    let content_type = response
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let essence = content_type.split(';').next().unwrap_or("").trim();
    if (essence == "application/json" || essence.ends_with("+json"))
        && let Ok(value) = serde_json::from_slice::<Json>(&response.body)
    {
        return value;
    }
    let charset = content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("charset="))
        .next()
        .map(|c| c.trim_matches('"'));
    let encoding = charset
        .and_then(|c| encoding_rs::Encoding::for_label(c.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(&response.body);
    Json::String(text.into_owned())
}

/// Response headers as an object; repeated headers joined with `, `.
fn headers_json(headers: &HeaderMap) -> Json {
    let mut out = serde_json::Map::new();
    for name in headers.keys() {
        let value = if name == reqwest::header::SET_COOKIE {
            "(redacted)".to_string()
        } else {
            headers
                .get_all(name)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.insert(name.as_str().to_string(), Json::String(value));
    }
    Json::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_redirect_is_followed_only_to_an_allowed_site_and_never_down_to_http() {
        let url = |u: &str| Url::parse(u).unwrap();
        let allow = ["api.example.com".to_string(), "127.0.0.1:8080".to_string()];
        let https = [url("https://api.example.com/a")];
        let reason = |follow, chain: &[Url], target: &str| {
            redirect_reason(follow, chain, &url(target), &allow)
        };
        assert_eq!(reason(true, &https, "https://api.example.com/b"), "allowed");
        assert_eq!(
            reason(true, &https, "http://api.example.com/b"),
            "downgrade"
        );
        assert_eq!(
            reason(true, &https, "https://api.example.com:8443/b"),
            "not_allowed"
        );
        assert_eq!(
            reason(true, &https, "https://other.example.com/b"),
            "not_allowed"
        );
        assert_eq!(
            reason(false, &https, "https://api.example.com/b"),
            "disabled"
        );
        let local = [url("http://127.0.0.1:8080/a")];
        assert_eq!(reason(true, &local, "http://127.0.0.1:8080/b"), "allowed");
        assert_eq!(
            reason(true, &local, "http://127.0.0.1:8081/b"),
            "not_allowed"
        );
        assert_eq!(
            reason(true, &local, "http://169.254.169.254/latest"),
            "not_allowed"
        );
        let long: Vec<Url> = (0..MAX_REDIRECTS)
            .map(|_| url("http://127.0.0.1:8080/a"))
            .collect();
        assert_eq!(reason(true, &long, "http://127.0.0.1:8080/b"), "too_many");
    }
}
