//! One HTTP attempt against a provider.
//!
//! [`Provider`] is the seam between the call logic in [`crate::Llm`] (retries, timeouts,
//! cancellation, structured-output strategies) and the wire. [`OpenAiProvider`] implements it
//! for OpenAI, Azure OpenAI and OpenAI-compatible servers with async-openai: async-openai
//! builds the URL, query and auth headers for each provider and serialises the typed request.
//!
//! Two parts of async-openai's default behaviour are replaced, through its middleware hook:
//! its built-in retry layer (retries belong to [`crate::Llm`], which honours `Retry-After`
//! with an injected clock, logs every attempt and can be cancelled), and unbounded body reads
//! (a misbehaving server must not make us buffer gigabytes). The response body is read as
//! plain JSON and parsed leniently, because OpenAI-compatible servers differ in the fields
//! they omit.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use async_openai::config::{AzureConfig, Config, OpenAIConfig};
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use async_openai::types::chat as wire;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::Error;
use crate::chat::{
    ChatRequest, ChatResponse, FinishReason, Message, ResponseFormat, ToolCall, ToolChoice, Usage,
};
use crate::config::{ProviderConfig, ProviderKind};
use crate::embed::{Embeddings, parse_embeddings};
use crate::redact::Redactor;
use crate::retry::RetryAfter;
use crate::time::BoxFuture;

/// The largest successful response body read (a plan is far smaller).
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// The largest error body read; only its message is kept.
const MAX_ERROR_BYTES: usize = 64 * 1024;
/// Provider messages are cut to this many characters in errors and logs.
const MAX_MESSAGE_CHARS: usize = 500;
/// Establishing a connection never takes this long on a working network.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Model and sampling settings sent with each request.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub model: String,
    pub temperature: f32,
}

/// Why one attempt failed. [`crate::Llm`] decides what is retried.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ProviderError {
    /// The server answered with a non-success status.
    Http {
        status: u16,
        /// The provider's message (redacted, shortened).
        message: String,
        /// `error.code`, when sent.
        error_code: Option<String>,
        /// `error.param`, when sent.
        param: Option<String>,
        retry_after: Option<RetryAfter>,
    },
    /// No answer: DNS, connect, TLS or a dropped connection.
    Connection { message: String },
    /// An answer that is not a usable chat completion or embeddings response.
    InvalidResponse { message: String },
    /// The request could not be built or sent as given.
    Request { message: String },
}

/// Sends one request (a chat completion or an embeddings request), once.
pub trait Provider: Send + Sync + fmt::Debug {
    fn kind(&self) -> ProviderKind;

    /// One attempt; no retries, no timeout (the caller owns both).
    fn send<'a>(
        &'a self,
        request: &'a ChatRequest,
        settings: &'a Settings,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>>;

    /// One embeddings attempt for `inputs` (already in wire form: cut, no blanks); no
    /// retries, no timeout. A provider without embeddings refuses the request.
    fn embed<'a>(
        &'a self,
        inputs: &'a [String],
        settings: &'a Settings,
    ) -> BoxFuture<'a, Result<Embeddings, ProviderError>> {
        let _ = (inputs, settings);
        Box::pin(async {
            Err(ProviderError::Request {
                message: "this provider does not serve embeddings".into(),
            })
        })
    }
}

/// OpenAI, Azure OpenAI and OpenAI-compatible servers through async-openai.
pub struct OpenAiProvider {
    kind: ProviderKind,
    client: async_openai::Client<Box<dyn Config>>,
    redactor: Redactor,
}

impl fmt::Debug for OpenAiProvider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiProvider")
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

impl OpenAiProvider {
    /// A provider for `config`. Messages from the server are passed through `redactor` (plus
    /// the configuration's own secrets).
    pub fn new(config: &ProviderConfig, redactor: &Redactor) -> Result<OpenAiProvider, Error> {
        // reqwest is built without a default crypto provider (see the crate docs); ring is
        // installed once for the process. An error only means one is installed already.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|e| Error::Transport {
                reason: e.to_string(),
            })?;
        // Every field is set explicitly: async-openai's defaults read OPENAI_API_KEY,
        // OPENAI_BASE_URL and the organisation from the process environment, which would send
        // an OpenAI key to an OpenAI-compatible server.
        let wire_config: Box<dyn Config> = match config {
            ProviderConfig::Openai { api_key, base_url } => Box::new(
                OpenAIConfig::new()
                    .with_api_base(base_url)
                    .with_api_key(api_key.expose())
                    .with_org_id("")
                    .with_project_id(""),
            ),
            ProviderConfig::OpenaiCompatible { base_url, api_key } => Box::new(
                OpenAIConfig::new()
                    .with_api_base(base_url)
                    .with_api_key(api_key.as_ref().map(|k| k.expose()).unwrap_or_default())
                    .with_org_id("")
                    .with_project_id(""),
            ),
            ProviderConfig::Azure {
                api_key,
                endpoint,
                deployment,
                api_version,
            } => Box::new(
                AzureConfig::new()
                    .with_api_base(endpoint)
                    .with_api_key(api_key.expose())
                    .with_deployment_id(deployment)
                    .with_api_version(api_version),
            ),
        };
        let client =
            async_openai::Client::build(http.clone(), wire_config).with_http_service(BoundedHttp {
                client: http,
                max_body: MAX_RESPONSE_BYTES,
            });
        Ok(OpenAiProvider {
            kind: config.kind(),
            client,
            redactor: Redactor::new(config.secrets()).merged(redactor),
        })
    }

    async fn send_once(
        &self,
        request: &ChatRequest,
        settings: &Settings,
    ) -> Result<ChatResponse, ProviderError> {
        let body = to_wire(request, settings, self.kind);
        let value: Value = self
            .client
            .chat()
            .create_byot(&body)
            .await
            .map_err(|e| self.map_error(e))?;
        parse_response(&value).map_err(|message| ProviderError::InvalidResponse {
            message: self.redactor.redact(&message),
        })
    }

    async fn embed_once(
        &self,
        inputs: &[String],
        settings: &Settings,
    ) -> Result<Embeddings, ProviderError> {
        // Azure's deployment decides the model; the body must not name one.
        let body = match self.kind {
            ProviderKind::Azure => json!({"input": inputs, "encoding_format": "float"}),
            ProviderKind::Openai | ProviderKind::OpenaiCompatible => {
                json!({"model": settings.model, "input": inputs, "encoding_format": "float"})
            }
        };
        let value: Value = self
            .client
            .embeddings()
            .create_byot(&body)
            .await
            .map_err(|e| self.map_error(e))?;
        parse_embeddings(value, inputs.len()).map_err(|message| ProviderError::InvalidResponse {
            message: self.redactor.redact(&message),
        })
    }

    fn map_error(&self, err: OpenAIError) -> ProviderError {
        let redact = |s: &str| shorten(&self.redactor.redact(s));
        match err {
            OpenAIError::Boxed(boxed) => match boxed.downcast::<HttpFailure>() {
                Ok(failure) => {
                    let (message, error_code, param) = error_details(&failure.body);
                    ProviderError::Http {
                        status: failure.status,
                        message: redact(&message),
                        error_code,
                        param,
                        retry_after: failure.retry_after,
                    }
                }
                Err(other) => match other.downcast::<BodyTooLarge>() {
                    Ok(too_large) => ProviderError::InvalidResponse {
                        message: too_large.to_string(),
                    },
                    Err(other) => ProviderError::Connection {
                        message: redact(&other.to_string()),
                    },
                },
            },
            OpenAIError::Reqwest(e) => {
                // The URL is dropped: it could carry a password a user put in the base URL.
                ProviderError::Connection {
                    message: redact(&error_chain(&e.without_url())),
                }
            }
            OpenAIError::ApiError(e) => ProviderError::Http {
                status: e.status_code.as_u16(),
                message: redact(&e.api_error.message),
                error_code: e.api_error.code,
                param: e.api_error.param,
                retry_after: None,
            },
            OpenAIError::JSONDeserialize(e, _) => ProviderError::InvalidResponse {
                message: format!("the body is not JSON ({e})"),
            },
            OpenAIError::InvalidArgument(m) => ProviderError::Request {
                message: redact(&m),
            },
            other => ProviderError::Request {
                message: redact(&other.to_string()),
            },
        }
    }
}

impl Provider for OpenAiProvider {
    fn kind(&self) -> ProviderKind {
        self.kind
    }

    fn send<'a>(
        &'a self,
        request: &'a ChatRequest,
        settings: &'a Settings,
    ) -> BoxFuture<'a, Result<ChatResponse, ProviderError>> {
        Box::pin(self.send_once(request, settings))
    }

    fn embed<'a>(
        &'a self,
        inputs: &'a [String],
        settings: &'a Settings,
    ) -> BoxFuture<'a, Result<Embeddings, ProviderError>> {
        Box::pin(self.embed_once(inputs, settings))
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= MAX_MESSAGE_CHARS {
        return s.to_string();
    }
    let mut out: String = s.chars().take(MAX_MESSAGE_CHARS).collect();
    out.push('…');
    out
}

/// The message, `error.code` and `error.param` of an error body, in the shapes servers use:
/// `{"error": {"message", "code", "param"}}`, `{"error": "text"}`, `{"message": "text"}`,
/// or plain text.
fn error_details(body: &[u8]) -> (String, Option<String>, Option<String>) {
    let text = String::from_utf8_lossy(body);
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        let t = text.trim();
        return (
            if t.is_empty() {
                "(empty body)".into()
            } else {
                t.to_string()
            },
            None,
            None,
        );
    };
    let as_string = |v: Option<&Value>| match v {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let error = v.get("error");
    let message = match error {
        Some(Value::String(s)) => Some(s.clone()),
        Some(e) => as_string(e.get("message")),
        None => as_string(v.get("message")).or_else(|| as_string(v.get("detail"))),
    }
    .unwrap_or_else(|| text.trim().to_string());
    let code = error.and_then(|e| as_string(e.get("code")));
    let param = error.and_then(|e| as_string(e.get("param")));
    (message, code, param)
}

/// Our request as async-openai's wire type.
fn to_wire(
    request: &ChatRequest,
    settings: &Settings,
    kind: ProviderKind,
) -> wire::CreateChatCompletionRequest {
    let messages = request.messages.iter().map(wire_message).collect();
    let tools = (!request.tools.is_empty()).then(|| {
        request
            .tools
            .iter()
            .map(|t| {
                wire::ChatCompletionTools::Function(wire::ChatCompletionTool {
                    function: wire::FunctionObject {
                        name: t.name.clone(),
                        description: t.description.clone(),
                        parameters: Some(t.parameters.clone()),
                        strict: t.strict.then_some(true),
                    },
                })
            })
            .collect()
    });
    let tool_choice = request.tool_choice.as_ref().map(|c| match c {
        ToolChoice::Auto => {
            wire::ChatCompletionToolChoiceOption::Mode(wire::ToolChoiceOptions::Auto)
        }
        ToolChoice::None => {
            wire::ChatCompletionToolChoiceOption::Mode(wire::ToolChoiceOptions::None)
        }
        ToolChoice::Required => {
            wire::ChatCompletionToolChoiceOption::Mode(wire::ToolChoiceOptions::Required)
        }
        ToolChoice::Function { name } => {
            wire::ChatCompletionToolChoiceOption::Function(wire::ChatCompletionNamedToolChoice {
                function: wire::FunctionName { name: name.clone() },
            })
        }
    });
    let response_format = request.response_format.as_ref().map(|f| match f {
        ResponseFormat::Text => wire::ResponseFormat::Text,
        ResponseFormat::JsonObject => wire::ResponseFormat::JsonObject,
        ResponseFormat::JsonSchema {
            name,
            description,
            schema,
            strict,
        } => wire::ResponseFormat::JsonSchema {
            json_schema: wire::ResponseFormatJsonSchema {
                description: description.clone(),
                name: name.clone(),
                schema: schema.clone(),
                strict: Some(*strict),
            },
        },
    });
    // OpenAI's newer models reject `max_tokens`; servers that mimic older versions of the API
    // only know `max_tokens`.
    let (max_tokens, max_completion_tokens) = match kind {
        ProviderKind::OpenaiCompatible => (request.max_tokens, None),
        ProviderKind::Openai | ProviderKind::Azure => (None, request.max_tokens),
    };
    wire::CreateChatCompletionRequest {
        messages,
        model: settings.model.clone(),
        temperature: Some(settings.temperature),
        tools,
        tool_choice,
        parallel_tool_calls: request.parallel_tool_calls,
        response_format,
        max_completion_tokens,
        #[allow(deprecated)]
        max_tokens,
        stream: Some(false),
        ..Default::default()
    }
}

fn wire_message(m: &Message) -> wire::ChatCompletionRequestMessage {
    use wire::ChatCompletionRequestMessage as M;
    match m {
        Message::System { content } => M::System(wire::ChatCompletionRequestSystemMessage {
            content: content.as_str().into(),
            name: None,
        }),
        Message::User { content } => M::User(wire::ChatCompletionRequestUserMessage {
            content: content.as_str().into(),
            name: None,
        }),
        Message::Assistant {
            content,
            tool_calls,
        } => {
            let calls = (!tool_calls.is_empty()).then(|| {
                tool_calls
                    .iter()
                    .map(|c| {
                        wire::ChatCompletionMessageToolCalls::Function(
                            wire::ChatCompletionMessageToolCall {
                                id: c.id.clone(),
                                function: wire::FunctionCall {
                                    name: c.name.clone(),
                                    arguments: c.arguments.clone(),
                                },
                            },
                        )
                    })
                    .collect()
            });
            M::Assistant(wire::ChatCompletionRequestAssistantMessage {
                content: content.as_deref().map(Into::into),
                tool_calls: calls,
                ..Default::default()
            })
        }
        Message::Tool {
            tool_call_id,
            content,
        } => M::Tool(wire::ChatCompletionRequestToolMessage {
            content: content.as_str().into(),
            tool_call_id: tool_call_id.clone(),
        }),
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Option<WireContent>,
    #[serde(default)]
    refusal: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

/// Content is a string, or (on some servers) a list of text parts.
#[derive(Deserialize)]
#[serde(untagged)]
enum WireContent {
    Text(String),
    Parts(Vec<WirePart>),
}

#[derive(Deserialize)]
struct WirePart {
    #[serde(default)]
    text: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    /// A JSON string per the API; some servers send the object itself.
    #[serde(default)]
    arguments: Option<Value>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: Option<u64>,
    #[serde(default)]
    completion_tokens: Option<u64>,
    #[serde(default)]
    total_tokens: Option<u64>,
}

/// The first choice of a chat completion body; `Err` says what is wrong with it.
pub(crate) fn parse_response(value: &Value) -> Result<ChatResponse, String> {
    let resp: WireResponse =
        serde_json::from_value(value.clone()).map_err(|e| format!("unexpected shape ({e})"))?;
    let Some(choice) = resp.choices.into_iter().next() else {
        return Err("no choices".into());
    };
    let Some(message) = choice.message else {
        return Err("the first choice has no message".into());
    };
    let content = match message.content {
        Some(WireContent::Text(s)) => Some(s),
        Some(WireContent::Parts(parts)) => Some(parts.into_iter().filter_map(|p| p.text).collect()),
        None => None,
    };
    let tool_calls = message
        .tool_calls
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: c.id.unwrap_or_else(|| format!("call_{i}")),
            name: c.function.name,
            arguments: match c.function.arguments {
                Some(Value::String(s)) => s,
                Some(other) => other.to_string(),
                None => "{}".to_string(),
            },
        })
        .collect();
    let usage = resp
        .usage
        .map(|u| {
            let prompt = u.prompt_tokens.unwrap_or(0);
            let completion = u.completion_tokens.unwrap_or(0);
            Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: u.total_tokens.unwrap_or(prompt.saturating_add(completion)),
            }
        })
        .unwrap_or_default();
    Ok(ChatResponse {
        content,
        refusal: message.refusal.filter(|r| !r.trim().is_empty()),
        tool_calls,
        finish_reason: choice.finish_reason.as_deref().map(FinishReason::parse),
        usage,
        model: resp.model.unwrap_or_default(),
        attempts: 1,
        duration_ms: 0,
    })
}

/// A non-success HTTP answer, carried through async-openai as a boxed middleware error so the
/// status, body and `Retry-After` survive (its own error type drops the headers).
#[derive(Debug)]
struct HttpFailure {
    status: u16,
    retry_after: Option<RetryAfter>,
    body: Vec<u8>,
}

impl fmt::Display for HttpFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)
    }
}

impl std::error::Error for HttpFailure {}

#[derive(Debug)]
struct BodyTooLarge {
    limit: usize,
}

impl fmt::Display for BodyTooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the response body is over {} bytes", self.limit)
    }
}

impl std::error::Error for BodyTooLarge {}

/// The HTTP service async-openai sends through: one attempt, body read with a size limit,
/// non-success answers turned into [`HttpFailure`].
#[derive(Clone)]
struct BoundedHttp {
    client: reqwest::Client,
    max_body: usize,
}

impl tower_service::Service<HttpRequestFactory> for BoundedHttp {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, factory: HttpRequestFactory) -> Self::Future {
        let client = self.client.clone();
        let max_body = self.max_body;
        Box::pin(async move {
            let request = factory.build().await?;
            let mut response = client
                .execute(request)
                .await
                .map_err(OpenAIError::Reqwest)?;
            let status = response.status();
            let headers = response.headers().clone();
            let limit = if status.is_success() {
                max_body
            } else {
                MAX_ERROR_BYTES
            };
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(OpenAIError::Reqwest)? {
                if body.len() + chunk.len() > limit {
                    if status.is_success() {
                        return Err(OpenAIError::Boxed(Box::new(BodyTooLarge { limit })));
                    }
                    // An error body is only read for its message: keep the start.
                    let room = limit - body.len();
                    body.extend_from_slice(&chunk[..room]);
                    break;
                }
                body.extend_from_slice(&chunk);
            }
            if !status.is_success() {
                let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
                return Err(OpenAIError::Boxed(Box::new(HttpFailure {
                    status: status.as_u16(),
                    retry_after: RetryAfter::parse(header("retry-after"), header("retry-after-ms")),
                    body,
                })));
            }
            let mut rebuilt = http::Response::new(body);
            *rebuilt.status_mut() = status;
            *rebuilt.headers_mut() = headers;
            Ok(reqwest::Response::from(rebuilt))
        })
    }
}
