//! The tool contract: the definition a model sees, the typed input and result, and the API
//! request. These types are what the agent, the API, the CLI and the MCP server share.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{BackendKind, Error};

/// The tool's name.
pub const TOOL_NAME: &str = "apply_patch";

/// The tool's description, word for word as the model sees it.
pub const TOOL_DESCRIPTION: &str =
    "Applies a unified diff patch to a file. Best for making precise code changes.";

/// A tool definition as an LLM tool-calling API takes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinition {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// The JSON Schema of the tool's parameters, exactly as specified: `filePath` and `patch`,
/// both strings, both required.
pub fn tool_parameters() -> Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "filePath": {"type": "string", "description": "Target file path"},
            "patch": {"type": "string", "description": "Unified diff content"}
        },
        "required": ["filePath", "patch"]
    })
}

/// The `apply_patch` tool definition.
pub fn tool_definition() -> ToolDefinition {
    ToolDefinition {
        name: TOOL_NAME.to_string(),
        description: TOOL_DESCRIPTION.to_string(),
        parameters: tool_parameters(),
    }
}

/// The tool's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchInput {
    /// Target file path
    pub file_path: String,
    /// Unified diff content
    pub patch: String,
}

impl ApplyPatchInput {
    /// Reads the arguments of a tool call. The model's JSON is untrusted, so every way it can
    /// be wrong is an `INVALID_ARGUMENT` with a message the model can act on; extra keys are
    /// ignored.
    pub fn from_json(args: &Value) -> Result<ApplyPatchInput, Error> {
        let Some(object) = args.as_object() else {
            return Err(Error::invalid(format!(
                "arguments must be an object with filePath and patch, got {}",
                json_kind(args)
            )));
        };
        let file_path = match object.get("filePath") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) => return Err(Error::invalid("filePath is empty")),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "filePath must be a string, got {}",
                    json_kind(other)
                )));
            }
            None => return Err(Error::invalid("filePath is missing")),
        };
        let patch = match object.get("patch") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(Error::invalid(format!(
                    "patch must be a string, got {}",
                    json_kind(other)
                )));
            }
            None => return Err(Error::invalid("patch is missing")),
        };
        Ok(ApplyPatchInput { file_path, patch })
    }
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The `apply_patch` request of the API and CLI: the tool input plus how to run it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchRequest {
    /// Target file path, relative to the workspace or absolute inside it.
    #[serde(alias = "file_path")]
    pub file_path: String,
    /// Unified diff content.
    pub patch: String,
    /// `native` (default) or `git`.
    #[serde(default)]
    pub backend: BackendKind,
    /// Compute and report the result without writing the file.
    #[serde(default, alias = "dry_run")]
    pub dry_run: bool,
}

/// What `apply_patch` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyPatchResult {
    /// The path as it was given.
    pub file_path: String,
    /// The file, relative to the workspace root, `/`-separated.
    pub path: String,
    /// Which backend applied the patch.
    pub backend: BackendKind,
    /// Whether the content differs from before (by its SHA-256).
    pub changed: bool,
    /// Whether the new content was written (not in a dry run, not when nothing changed).
    pub written: bool,
    /// Number of hunks applied.
    pub hunks: usize,
    /// `sha256:<hex>` of the content before.
    pub sha256_before: String,
    /// `sha256:<hex>` of the content after.
    pub sha256_after: String,
    /// The backend's failing exit code when it reported failure but the content changed
    /// anyway (which counts as applied).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Notes: hunk offsets, whitespace corrections, line-ending conversion, git's warnings.
    pub messages: Vec<String>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use serde_json::json;

    fn check(args: Value, expect: Result<(&str, &str), &str>) {
        match (ApplyPatchInput::from_json(&args), expect) {
            (Ok(input), Ok((path, patch))) => {
                assert_eq!(
                    (input.file_path.as_str(), input.patch.as_str()),
                    (path, patch)
                )
            }
            (Err(e), Err(fragment)) => {
                assert_eq!(e.code(), "INVALID_ARGUMENT");
                assert!(e.to_string().contains(fragment), "{e}");
            }
            (got, want) => panic!("{args}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn input_from_json() {
        check(
            json!({"filePath": "a.txt", "patch": "@@"}),
            Ok(("a.txt", "@@")),
        );
        check(
            json!({"filePath": "a.txt", "patch": "", "extra": 1}),
            Ok(("a.txt", "")),
        );
        check(
            json!({"filePath": "", "patch": "x"}),
            Err("filePath is empty"),
        );
        check(
            json!({"filePath": "  ", "patch": "x"}),
            Err("filePath is empty"),
        );
        check(
            json!({"filePath": 3, "patch": "x"}),
            Err("filePath must be a string, got a number"),
        );
        check(json!({"patch": "x"}), Err("filePath is missing"));
        check(
            json!({"filePath": "a", "patch": ["x"]}),
            Err("patch must be a string, got an array"),
        );
        check(
            json!({"filePath": "a", "patch": null}),
            Err("patch must be a string, got null"),
        );
        check(json!({"filePath": "a"}), Err("patch is missing"));
        check(json!("a.txt"), Err("arguments must be an object"));
    }

    #[test]
    fn definition_is_exactly_the_specified_text() {
        let definition = serde_json::to_value(tool_definition()).unwrap();
        assert_eq!(
            definition,
            json!({
                "name": "apply_patch",
                "description": "Applies a unified diff patch to a file. Best for making precise code changes.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "filePath": {"type": "string", "description": "Target file path"},
                        "patch": {"type": "string", "description": "Unified diff content"}
                    },
                    "required": ["filePath", "patch"]
                }
            })
        );
    }

    #[test]
    fn derived_schema_agrees_with_the_definition() {
        let derived = serde_json::to_value(schemars::schema_for!(ApplyPatchInput)).unwrap();
        let stated = tool_parameters();
        assert_eq!(derived["type"], stated["type"]);
        assert_eq!(derived["properties"], stated["properties"]);
        let mut required: Vec<_> = derived["required"].as_array().unwrap().clone();
        required.sort_by_key(|v| v.as_str().map(str::to_string));
        assert_eq!(Value::Array(required), stated["required"]);
    }
}
