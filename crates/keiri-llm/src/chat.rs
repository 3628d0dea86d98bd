//! Chat request and response types: messages (including tool calls and tool results), tools,
//! response formats and token usage. They are ours, not async-openai's, so callers (the
//! planner, the chat agent) do not depend on the client library's types and can store them.

use std::ops::{Add, AddAssign};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    /// A model turn: text, tool calls, or both.
    Assistant {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, sent back to the model.
    Tool {
        tool_call_id: String,
        content: String,
    },
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message::System {
            content: content.into(),
        }
    }

    pub fn user(content: impl Into<String>) -> Message {
        Message::User {
            content: content.into(),
        }
    }

    pub fn assistant(content: impl Into<String>) -> Message {
        Message::Assistant {
            content: Some(content.into()),
            tool_calls: Vec::new(),
        }
    }

    /// The result of the tool call `tool_call_id`.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>) -> Message {
        Message::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }
}

/// A function call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCall {
    /// The id to answer with in [`Message::Tool`].
    pub id: String,
    /// The function's name.
    pub name: String,
    /// The arguments as the model wrote them: JSON text, not yet trusted.
    pub arguments: String,
}

impl ToolCall {
    /// The arguments parsed as JSON.
    pub fn arguments_json(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(&self.arguments)
    }
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSpec {
    /// `[a-zA-Z0-9_-]{1,64}`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A JSON Schema object for the arguments.
    pub parameters: Value,
    /// Ask the provider to enforce the schema (OpenAI strict mode).
    #[serde(default)]
    pub strict: bool,
}

/// Whether and which tool the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// Exactly this function.
    Function { name: String },
}

/// The shape of the model's text answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum ResponseFormat {
    Text,
    /// Any JSON object (older "JSON mode").
    JsonObject,
    /// JSON matching `schema` (structured outputs).
    JsonSchema {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        schema: Value,
        strict: bool,
    },
}

/// One chat completion request (model and temperature come from the configuration).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// Upper bound on generated tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages,
            ..ChatRequest::default()
        }
    }

    pub fn with_tools(mut self, tools: Vec<ToolSpec>) -> ChatRequest {
        self.tools = tools;
        self
    }

    pub fn with_tool_choice(mut self, choice: ToolChoice) -> ChatRequest {
        self.tool_choice = Some(choice);
        self
    }

    pub fn with_response_format(mut self, format: ResponseFormat) -> ChatRequest {
        self.response_format = Some(format);
        self
    }

    pub fn with_max_tokens(mut self, max_tokens: u32) -> ChatRequest {
        self.max_tokens = Some(max_tokens);
        self
    }
}

/// Tokens used; adds up over calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema, Hash)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

impl Usage {
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Usage {
        Usage {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens.saturating_add(completion_tokens),
        }
    }

    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }
}

impl Add for Usage {
    type Output = Usage;
    fn add(self, rhs: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(rhs.prompt_tokens),
            completion_tokens: self.completion_tokens.saturating_add(rhs.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(rhs.total_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = *self + rhs;
    }
}

impl std::iter::Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), Add::add)
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    /// The token limit was reached: the output is cut off.
    Length,
    ToolCalls,
    ContentFilter,
    /// Anything else a server sent.
    Other(String),
}

impl FinishReason {
    pub(crate) fn parse(s: &str) -> FinishReason {
        match s {
            "stop" | "eos" => FinishReason::Stop,
            "length" => FinishReason::Length,
            "tool_calls" | "function_call" => FinishReason::ToolCalls,
            "content_filter" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_string()),
        }
    }
}

/// The model's answer to one [`ChatRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ChatResponse {
    pub content: Option<String>,
    /// Set when the model declined (structured outputs report refusals here).
    pub refusal: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    pub finish_reason: Option<FinishReason>,
    pub usage: Usage,
    /// The model the server says answered.
    pub model: String,
    /// HTTP attempts this answer took (1 without retries).
    pub attempts: u32,
    /// Wall time including retries and backoff.
    pub duration_ms: u64,
}

impl ChatResponse {
    /// The answer as an assistant message, to append to the conversation before sending the
    /// tool results.
    pub fn message(&self) -> Message {
        Message::Assistant {
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }
}
