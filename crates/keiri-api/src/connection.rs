//! `llm_connection_test`: one small, real request to the model in effect (the environment over
//! the saved settings, as every generation and chat uses it), so the settings dialog can say
//! whether the provider answers before the user relies on it.
//!
//! The request is a one-line chat completion of at most a few tokens through keiri-llm, the
//! same client every other model call uses, without retries and with a short timeout: a
//! wrong key or an unreachable server is reported at once instead of after the backoff a
//! generation would wait. The outcome is data, not an error: `ok`, or keiri-llm's stable code
//! (`LLM_UNAUTHORIZED`, `LLM_CONNECTION`, …) with a message in the requested language and the
//! provider's own words (already free of keys) as `detail`. Nothing is written.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::{ApiError, Context, Lang};

/// The longest the test waits for an answer; a model that needs longer for a few tokens
/// would make every generation feel broken anyway.
pub const CONNECTION_TEST_TIMEOUT: Duration = Duration::from_secs(30);

/// Request of `llm_connection_test`.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LlmConnectionTestRequest {
    /// The language of `message`; the context's when absent.
    #[serde(default)]
    pub lang: Option<Lang>,
}

/// What the test found. Never a key.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct LlmConnectionTestResponse {
    /// The provider answered the request.
    pub ok: bool,
    /// The provider tried, when one is configured.
    pub provider: Option<keiri_llm::ProviderKind>,
    pub model: String,
    /// Where the request went (user info and query removed).
    pub base_url: Option<String>,
    /// How long the request took, in milliseconds.
    pub elapsed_ms: u64,
    /// Why it failed: keiri-llm's code (`LLM_UNAUTHORIZED`, `LLM_CONNECTION`, `LLM_TIMEOUT`,
    /// `LLM_NOT_CONFIGURED`, …) or `KEYCHAIN_UNAVAILABLE`; `None` when `ok`.
    pub code: Option<String>,
    /// The outcome for the user, in `lang`.
    pub message: String,
    /// The provider's or the client's own words on a failure (English, no keys).
    pub detail: Option<String>,
}

/// `llm_connection_test`: one tiny chat completion to the configured model.
pub async fn llm_connection_test(
    ctx: &Context,
    req: LlmConnectionTestRequest,
) -> Result<LlmConnectionTestResponse, ApiError> {
    let lang = req.lang.unwrap_or(ctx.lang);
    let failed = |code: &str, detail: String, status: Option<keiri_llm::StatusResponse>| {
        let status = status.unwrap_or_else(|| keiri_llm::StatusResponse::unconfigured(None));
        LlmConnectionTestResponse {
            ok: false,
            provider: status.provider,
            model: status.model,
            base_url: status.base_url,
            elapsed_ms: 0,
            code: Some(code.to_string()),
            message: failure_message(lang, code),
            detail: Some(detail),
        }
    };
    // The settings file and the keychain: blocking reads.
    let env = crate::stream::blocking(ctx, |ctx| Ok(crate::llm_env(ctx))).await?;
    let env = match env {
        Ok(env) => env,
        Err(e) => {
            // A malformed `.env` carries keiri-llm's own code in its details.
            let code = e
                .details
                .as_ref()
                .and_then(|d| d.get("code"))
                .and_then(|c| c.as_str())
                .map_or_else(|| e.code.as_str().to_string(), str::to_string);
            return Ok(failed(&code, e.message, None));
        }
    };
    let config = match keiri_llm::LlmConfig::from_env(&env) {
        Ok(config) => config,
        Err(e) => return Ok(failed(e.code(), e.to_string(), None)),
    };
    let status = config.status();
    let llm = keiri_llm::Llm::new(&config)
        .map_err(|e| ApiError::new(crate::ErrorCode::LlmFailed, e.to_string()))?
        .with_retry(keiri_llm::RetryPolicy {
            max_retries: 0,
            ..config.retry.clone()
        })
        .with_timeout(config.timeout.min(CONNECTION_TEST_TIMEOUT));
    // A handful of tokens: enough for any model to answer, too few to cost anything.
    let request = keiri_llm::ChatRequest::new(vec![keiri_llm::Message::user(
        "This is a connection test. Reply with OK.",
    )])
    .with_max_tokens(16);
    let options = keiri_llm::CallOptions::new().with_stage("connection_test");
    let started = Instant::now();
    let outcome = llm.chat(&request, &options).await;
    let elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(match outcome {
        Ok(_) => LlmConnectionTestResponse {
            ok: true,
            message: ok_message(lang, &status, elapsed_ms),
            provider: status.provider,
            model: status.model,
            base_url: status.base_url,
            elapsed_ms,
            code: None,
            detail: None,
        },
        Err(e) => LlmConnectionTestResponse {
            elapsed_ms,
            ..failed(e.code(), e.to_string(), Some(status))
        },
    })
}
crate::surface::function!(awaited llm_connection_test(crate::LlmConnectionTestRequest) -> crate::LlmConnectionTestResponse);

fn provider_name(lang: Lang, kind: Option<keiri_llm::ProviderKind>) -> String {
    match (kind, lang) {
        (Some(keiri_llm::ProviderKind::OpenaiCompatible), Lang::Ja) => "OpenAI互換サーバー".into(),
        (Some(kind), _) => kind.to_string(),
        (None, Lang::Ja) => "AIモデル".into(),
        (None, Lang::En) => "the AI model".into(),
    }
}

fn ok_message(lang: Lang, status: &keiri_llm::StatusResponse, ms: u64) -> String {
    let provider = provider_name(lang, status.provider);
    match lang {
        Lang::Ja => format!(
            "接続できました（{provider}・モデル {}、{ms} ミリ秒）",
            status.model
        ),
        Lang::En => format!("Connected ({provider}, model {}, {ms} ms)", status.model),
    }
}

/// What a failure means for the user and what to check, by code.
fn failure_message(lang: Lang, code: &str) -> String {
    let (ja, en) = match code {
        "LLM_UNAUTHORIZED" => (
            "APIキーが認められませんでした。キーが正しいか確認してください",
            "The API key was not accepted. Check that the key is correct",
        ),
        "LLM_CONNECTION" | "LLM_TRANSPORT" => (
            "サーバーに接続できませんでした。URLと、サーバーが起動しているかを確認してください",
            "Could not reach the server. Check the URL and that the server is running",
        ),
        "LLM_TIMEOUT" => (
            "時間内に応答がありませんでした。サーバーの状態を確認してください",
            "The server did not answer in time. Check the server",
        ),
        "LLM_RATE_LIMITED" => (
            "利用上限に達しています。しばらく待ってからもう一度試してください",
            "The usage limit was reached. Wait a while and try again",
        ),
        "LLM_SERVER_ERROR" => (
            "接続先のサーバーでエラーが発生しました。しばらくしてから試してください",
            "The server reported an error. Try again later",
        ),
        "LLM_REQUEST_REJECTED" => (
            "接続はできましたが、要求が受け付けられませんでした。モデル名（デプロイ名）を確認してください",
            "The server was reached but refused the request. Check the model (deployment) name",
        ),
        "LLM_NOT_CONFIGURED" => (
            "AIモデルの接続先が設定されていません",
            "No AI model provider is configured",
        ),
        "LLM_CONFIG_INCOMPLETE" | "LLM_CONFIG_INVALID" => (
            "接続先の設定が足りないか、誤っています",
            "The provider settings are incomplete or invalid",
        ),
        "KEYCHAIN_UNAVAILABLE" => (
            "OSのキーチェーンを利用できないため、保存したAPIキーを読み取れません。キーを入力し「このセッションだけ使う」で保存してください",
            "The OS keychain is not available, so the saved API key cannot be read. Enter the key and save it for this session only",
        ),
        "LLM_RESPONSE_INVALID" | "LLM_REFUSED" => (
            "サーバーの応答を読み取れませんでした。OpenAI互換のサーバーか確認してください",
            "The server's answer could not be read. Check that it is OpenAI-compatible",
        ),
        _ => ("接続テストに失敗しました", "The connection test failed"),
    };
    lang.pick(ja, en).to_string()
}
