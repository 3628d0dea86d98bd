//! The questions' data: a [`Requirement`], the kind of answer it wants, and where the answer
//! goes.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::ValueType;

/// The kind of answer a requirement wants (the `type` of `ui.interactive_input`'s items).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RequirementKind {
    Text,
    Select,
    Boolean,
    Number,
    File,
    Table,
    Enum,
}

/// Checks on a text-like answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Validation {
    /// A regular expression the answer must match (anchor it with `^…$` to match all of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
}

/// Where an answer goes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequirementTarget {
    /// The plan var that receives the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub var: Option<String>,
    /// The node whose input the answer feeds (wired to `${vars.<var>}` if it was missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The element of a list input the answer replaces ([`AnswerUse::Column`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The key inside that element when it is an object (`field`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// The column a row expression at the target reads ([`AnswerUse::Column`]): the answer
    /// replaces that column's every reference inside the expression, and the rest of it is
    /// kept (no var: the expression holds the column's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// More expressions of the same input that read `column` (other rules' conditions): the
    /// one answer replaces it in each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<TargetPlace>,
}

/// An element of a list input, or a key inside it, that an answer also goes to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TargetPlace {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

/// What the answer is used as.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AnswerUse {
    /// The answer itself is the value.
    #[default]
    Value,
    /// The answer names one of [`schema_templates`]; its schema is the value.
    SchemaTemplate,
    /// The answer is a column of the file feeding the node: it goes into the var, and the
    /// value naming the wrong column (the input, or its element at `index`/`field`) becomes
    /// `${vars.<var>}` even though it was set. When that value is a row expression reading
    /// the column among others (`target.column`), only the column's name in it is replaced.
    Column,
}

impl AnswerUse {
    fn is_value(&self) -> bool {
        *self == AnswerUse::Value
    }
}

fn required_by_default() -> bool {
    true
}

/// One question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Requirement {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: RequirementKind,
    /// A short Japanese label.
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_en: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_en: Option<String>,
    /// Choices for `select` / `enum`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<Value>,
    /// Whether an answer is needed before the plan can run; the spec's default is `true`,
    /// so a requirement written without the key is required.
    #[serde(default = "required_by_default")]
    pub required: bool,
    /// Accepted extensions for `file`, e.g. `.xlsx,.xlsm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint_en: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    /// The spec's default, shown as the pre-filled answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The JSON type a `text` answer becomes (`object`, `array`), or `integer` for a number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<ValueType>,
    #[serde(default, skip_serializing_if = "AnswerUse::is_value")]
    pub answer_use: AnswerUse,
    pub target: RequirementTarget,
}

/// The last choice of a column question on a rule's expression, for a file that has no such
/// column at all: the answer drops the rules that read it, and the plan's description says
/// which (never a wrong column picked to get past the question).
pub const NO_SUCH_COLUMN: &str = "（ファイルにない：このルールを外す）";

/// The last choice of a column question on an input the block can do without
/// ([`crate::columns::ABSENT_OK`]): the answer leaves the input empty, so the block works
/// without the column (and says so when it runs), and the plan's description says which.
pub const NO_COLUMN: &str = "（ファイルにない：この列を使わない）";

/// How to ask for an unbound import; every field refines what the requirements builder
/// derives from the block input the import feeds.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequirementHint {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<RequirementKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_en: Option<String>,
    /// File extensions for `file`, e.g. `.xlsx,.xlsm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accept: Option<String>,
    /// Choices for `select` / `enum`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint_en: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
}
