//! Typed JSON output: JSON Schema `response_format` (strict) first, function calling second,
//! free-form JSON extraction last, with the strategy that worked recorded.
//!
//! A strategy is abandoned for the next when the provider rejects the request shape (HTTP
//! 400/422 that is not about the prompt's size) or when its answer holds no JSON matching the
//! schema. A rejection that names the feature (`response_format`, `tools`) is remembered for
//! the session, so later calls go straight to what works. Timeouts, rate limits, server
//! errors, bad credentials and cancellation end the call: another output mode would not help.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;
use crate::chat::{
    ChatRequest, FinishReason, Message, ResponseFormat, ToolChoice, ToolSpec, Usage,
};
use crate::client::{CallOptions, Llm};
use crate::extract::extract_json;
use crate::schema::{Violation, strict_problems, validate};
use crate::strategy::{Strategy, StrategyFailure};

/// The schema the output must match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputSchema {
    /// `[a-zA-Z0-9_-]{1,64}`; also the function's name in the function-calling strategy.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema whose root is an object.
    pub schema: Value,
    /// Ask the provider to enforce the schema. The schema must then follow the strict-mode
    /// rules (checked before sending, see [`crate::schema::strict_problems`]).
    pub strict: bool,
}

impl OutputSchema {
    /// A strict schema.
    pub fn new(name: impl Into<String>, schema: Value) -> OutputSchema {
        OutputSchema {
            name: name.into(),
            description: None,
            schema,
            strict: true,
        }
    }

    pub fn with_description(mut self, description: impl Into<String>) -> OutputSchema {
        self.description = Some(description.into());
        self
    }

    /// Not enforced by the provider (the output is still validated here).
    pub fn lenient(mut self) -> OutputSchema {
        self.strict = false;
        self
    }
}

/// A request for typed output.
#[derive(Debug, Clone, PartialEq)]
pub struct StructuredRequest {
    pub messages: Vec<Message>,
    pub schema: OutputSchema,
    pub max_tokens: Option<u32>,
    /// Strategies to try, in order (all three by default).
    pub strategies: Vec<Strategy>,
}

impl StructuredRequest {
    pub fn new(messages: Vec<Message>, schema: OutputSchema) -> StructuredRequest {
        StructuredRequest {
            messages,
            schema,
            max_tokens: None,
            strategies: Strategy::ALL.to_vec(),
        }
    }

    pub fn with_max_tokens(mut self, max_tokens: u32) -> StructuredRequest {
        self.max_tokens = Some(max_tokens);
        self
    }

    pub fn with_strategies(mut self, strategies: Vec<Strategy>) -> StructuredRequest {
        self.strategies = strategies;
        self
    }
}

/// Typed output and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct Structured<T> {
    pub value: T,
    /// The JSON the value was read from.
    pub json: Value,
    /// The strategy that produced it.
    pub strategy: Strategy,
    /// Tokens of every request of the call, including failed strategies.
    pub usage: Usage,
    /// HTTP requests made, retries included.
    pub requests: u32,
    /// Strategies that were tried (or skipped) before, and why they failed.
    pub fallbacks: Vec<StrategyFailure>,
    pub duration_ms: u64,
}

const FREE_FORM_INSTRUCTION: &str = "Answer with one JSON value and nothing else: no prose, no \
     code fence. The value must match this JSON Schema exactly, with no other properties:";

impl Llm {
    /// Asks for output matching `request.schema` and parses it as `T`.
    ///
    /// The output is validated against the schema here too (providers that do not enforce it,
    /// free-form text), then deserialised; a strategy whose output fails either is abandoned
    /// for the next. [`Error::StructuredOutput`] lists every strategy's failure.
    pub async fn structured<T: DeserializeOwned>(
        &self,
        request: &StructuredRequest,
        options: &CallOptions,
    ) -> Result<Structured<T>, Error> {
        check_schema(&request.schema)?;
        let started = self.clock().monotonic();
        let strategies: &[Strategy] = if request.strategies.is_empty() {
            &Strategy::ALL
        } else {
            &request.strategies
        };
        let mut usage = Usage::default();
        let mut requests = 0;
        let mut failures: Vec<StrategyFailure> = Vec::new();
        for &strategy in strategies {
            if self.capabilities.rejected(strategy) {
                failures.push(StrategyFailure {
                    strategy,
                    code: "LLM_REQUEST_REJECTED".into(),
                    message: "skipped: the provider rejected this mode earlier in the session"
                        .into(),
                    violations: Vec::new(),
                    skipped: true,
                });
                continue;
            }
            let chat = build_request(request, strategy);
            let response = match self.chat(&chat, options).await {
                Ok(r) => r,
                Err(err) => match rejection(&err, strategy) {
                    Some(remember) => {
                        requests += 1;
                        if remember {
                            self.capabilities.remember_rejected(strategy);
                        }
                        failures.push(StrategyFailure {
                            strategy,
                            code: err.code().into(),
                            message: err.to_string(),
                            violations: Vec::new(),
                            skipped: false,
                        });
                        continue;
                    }
                    None => return Err(self.log_structured_failure(options, err, usage)),
                },
            };
            usage += response.usage;
            requests += response.attempts;
            let output = match strategy {
                Strategy::JsonSchema | Strategy::FreeForm => match response.content.as_deref() {
                    Some(text) => extract_json(text)
                        .map(|(v, _)| v)
                        .ok_or("the answer holds no JSON value"),
                    None => Err("the answer has no text"),
                },
                Strategy::FunctionCall => match response
                    .tool_calls
                    .iter()
                    .find(|c| c.name == request.schema.name)
                    .or(response.tool_calls.first())
                {
                    Some(call) => call
                        .arguments_json()
                        .map_err(|_| "the function arguments are not JSON"),
                    None => Err("the model did not call the function"),
                },
            };
            let failure = |message: String, violations: Vec<Violation>| StrategyFailure {
                strategy,
                code: if response.finish_reason == Some(FinishReason::Length) {
                    "LLM_OUTPUT_TRUNCATED".into()
                } else {
                    "LLM_OUTPUT_INVALID".into()
                },
                message,
                violations,
                skipped: false,
            };
            let json = match output {
                Ok(json) => json,
                Err(reason) => {
                    if let Some(refusal) = &response.refusal {
                        let err = Error::Refused {
                            message: refusal.clone(),
                        };
                        return Err(self.log_structured_failure(options, err, usage));
                    }
                    failures.push(failure(reason.to_string(), Vec::new()));
                    if response.finish_reason == Some(FinishReason::Length) {
                        // Another output mode hits the same token limit.
                        break;
                    }
                    continue;
                }
            };
            let violations = validate(&request.schema.schema, &json);
            if !violations.is_empty() {
                failures.push(failure(
                    format!(
                        "the output does not match the schema ({} violations)",
                        violations.len()
                    ),
                    violations,
                ));
                continue;
            }
            match serde_json::from_value::<T>(json.clone()) {
                Ok(value) => {
                    let duration_ms =
                        u64::try_from(self.clock().monotonic().saturating_sub(started).as_millis())
                            .unwrap_or(u64::MAX);
                    if let Some(log) = &options.log {
                        log.record_lossy(
                            self.event(options, "llm.structured")
                                .ok()
                                .strategy(strategy)
                                .usage(usage)
                                .with("requests", requests)
                                .with("fallbacks", failures.len())
                                .with("duration_ms", duration_ms),
                        );
                    }
                    return Ok(Structured {
                        value,
                        json,
                        strategy,
                        usage,
                        requests,
                        fallbacks: failures,
                        duration_ms,
                    });
                }
                Err(e) => {
                    failures.push(failure(
                        format!("the output does not fit the expected type: {e}"),
                        Vec::new(),
                    ));
                }
            }
        }
        let err = Error::StructuredOutput { failures };
        Err(self.log_structured_failure(options, err, usage))
    }

    fn log_structured_failure(&self, options: &CallOptions, err: Error, usage: Usage) -> Error {
        if let Some(log) = &options.log {
            log.record_lossy(
                self.event(options, "llm.structured")
                    .failed(&err)
                    .usage(usage),
            );
        }
        err
    }
}

fn check_schema(schema: &OutputSchema) -> Result<(), Error> {
    let mut problems = Vec::new();
    let name_ok = !schema.name.is_empty()
        && schema.name.len() <= 64
        && schema
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !name_ok {
        problems.push(format!(
            "the name {:?} must be 1-64 letters, digits, '_' or '-'",
            schema.name
        ));
    }
    if schema.strict {
        problems.extend(strict_problems(&schema.schema));
    } else if !schema.schema.is_object() {
        problems.push("the schema must be a JSON object".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Error::InvalidSchema { problems })
    }
}

/// The chat request for one strategy.
fn build_request(request: &StructuredRequest, strategy: Strategy) -> ChatRequest {
    let schema = &request.schema;
    let mut chat = ChatRequest::new(request.messages.clone());
    chat.max_tokens = request.max_tokens;
    match strategy {
        Strategy::JsonSchema => {
            chat.response_format = Some(ResponseFormat::JsonSchema {
                name: schema.name.clone(),
                description: schema.description.clone(),
                schema: schema.schema.clone(),
                strict: schema.strict,
            });
        }
        Strategy::FunctionCall => {
            chat.tools = vec![ToolSpec {
                name: schema.name.clone(),
                description: schema.description.clone(),
                parameters: schema.schema.clone(),
                strict: schema.strict,
            }];
            chat.tool_choice = Some(ToolChoice::Function {
                name: schema.name.clone(),
            });
        }
        Strategy::FreeForm => {
            let instruction = format!("{FREE_FORM_INSTRUCTION}\n{}", schema.schema);
            // Chat templates of local servers often accept a single, leading system message.
            match chat.messages.first_mut() {
                Some(Message::System { content }) => {
                    content.push_str("\n\n");
                    content.push_str(&instruction);
                }
                _ => chat.messages.insert(0, Message::system(instruction)),
            }
        }
    }
    chat
}

/// `Some(remember)` when `err` means the provider does not accept this strategy's request
/// shape (so the next strategy may work); `remember` when the message names the feature.
fn rejection(err: &Error, strategy: Strategy) -> Option<bool> {
    let Error::Rejected {
        status,
        message,
        error_code,
        param,
    } = err
    else {
        return None;
    };
    if !matches!(status, 400 | 422) {
        return None;
    }
    // These are about the prompt or the account, not the output mode.
    const NOT_ABOUT_MODE: &[&str] = &[
        "context_length_exceeded",
        "string_above_max_length",
        "model_not_found",
        "invalid_api_key",
        "insufficient_quota",
    ];
    if error_code
        .as_deref()
        .is_some_and(|c| NOT_ABOUT_MODE.contains(&c))
    {
        return None;
    }
    let text = format!(
        "{} {}",
        message.to_ascii_lowercase(),
        param.as_deref().unwrap_or("").to_ascii_lowercase()
    );
    let keywords: &[&str] = match strategy {
        Strategy::JsonSchema => &["response_format", "json_schema", "structured output"],
        Strategy::FunctionCall => &["tool", "function"],
        Strategy::FreeForm => &[],
    };
    Some(keywords.iter().any(|k| text.contains(k)))
}
