//! [`FindingCode`]: every rule a plan finding can name, defined once.
//!
//! The codes are the contract between the validator, the planner's repair loop, the API, the
//! CLI and the UI, so they are one enum rather than string literals compared across crates.
//! On the wire (JSON, YAML, logs) each is its dotted string, exactly as before the enum
//! existed (`column.unknown`, `ref.undefined_var`, …).

use std::fmt;
use std::str::FromStr;

macro_rules! finding_codes {
    ($( $(#[$doc:meta])* $variant:ident = $text:literal, )*) => {
        /// The rule a finding names. Serialised as its dotted string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum FindingCode {
            $( $(#[$doc])* $variant, )*
        }

        impl FindingCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [FindingCode] = &[ $( FindingCode::$variant, )* ];

            /// The dotted string, as written in JSON and shown to users.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( FindingCode::$variant => $text, )*
                }
            }
        }

        impl FromStr for FindingCode {
            type Err = UnknownFindingCode;

            fn from_str(s: &str) -> Result<FindingCode, UnknownFindingCode> {
                match s {
                    $( $text => Ok(FindingCode::$variant), )*
                    _ => Err(UnknownFindingCode(s.to_string())),
                }
            }
        }
    };
}

finding_codes! {
    /// The YAML does not parse.
    YamlParse = "yaml.parse",
    /// The YAML parses but is not a plan (wrong shape of a field).
    PlanShape = "plan.shape",
    PlanMissingId = "plan.missing_id",
    NodeMissingId = "node.missing_id",
    NodeDuplicateId = "node.duplicate_id",
    NodeUnknownType = "node.unknown_type",
    NodeMissingBlock = "node.missing_block",
    NodeLoopKeyOnNonLoop = "node.loop_key_on_non_loop",
    NodeFeedsNothing = "node.feeds_nothing",
    BlockUnknown = "block.unknown",
    InputUnknownKey = "input.unknown_key",
    InputEnumMismatch = "input.enum_mismatch",
    InputMissingRequired = "input.missing_required",
    InputTypeMismatch = "input.type_mismatch",
    OutputUnknownKey = "output.unknown_key",
    OutputUnused = "output.unused",
    OutAliasInvalid = "out.alias_invalid",
    RefMalformed = "ref.malformed",
    RefUndefinedVar = "ref.undefined_var",
    RefUnknownNode = "ref.unknown_node",
    RefUnknownAlias = "ref.unknown_alias",
    RefTypeMismatch = "ref.type_mismatch",
    WhenInvalidExpr = "when.invalid_expr",
    LoopForeachAndWhile = "loop.foreach_and_while",
    LoopWhileMaxIterations = "loop.while_max_iterations",
    LoopMaxConcurrency = "loop.max_concurrency",
    LoopMissingIteration = "loop.missing_iteration",
    LoopForeachNotIterable = "loop.foreach_not_iterable",
    LoopMissingBody = "loop.missing_body",
    /// A loop `out` key (other than `collect`) that names no alias of the body's nodes.
    LoopOutUnknownAlias = "loop.out_unknown_alias",
    /// Two nodes of a loop body publishing the same alias.
    LoopBodyAliasDuplicate = "loop.body_alias_duplicate",
    SubflowMissingPlanId = "subflow.missing_plan_id",
    SubflowUnknownPlan = "subflow.unknown_plan",
    AiProcessLlm = "ai.process_llm",
    AiOutputSchemaRequired = "ai.output_schema_required",
    AiPromptRequired = "ai.prompt_required",
    UiLayoutUnknownNode = "ui.layout_unknown_node",
    /// A column a node names that the attached file feeding it lacks.
    ColumnUnknown = "column.unknown",
    GraphCycle = "graph.cycle",
    /// A bound of 0 in the plan's `policy.limits`.
    PolicyLimitZero = "policy.limit_zero",
    /// `policy.limits` on a node or a loop body, where it is not used.
    PolicyLimitsNotPlan = "policy.limits_not_plan",
    // The planner's own: a drafted wiring that names what the catalog does not have
    // (keiri-design's stage-2 contract check).
    /// A node names a block the catalog does not have.
    DesignUnknownBlock = "design.unknown_block",
    /// A node sets an input its block does not have.
    DesignUnknownInput = "design.unknown_input",
    /// A node reads an output its block does not have.
    DesignUnknownOutput = "design.unknown_output",
    /// An `ai.process_llm` node without the contract it needs.
    DesignProcessLlmContract = "design.process_llm_contract",
    /// A subflow of a plan that is not registered.
    DesignUnknownPlan = "design.unknown_plan",
    /// A node of a type plans do not have.
    DesignUnknownNodeType = "design.unknown_node_type",
    // A verification run's failures the planner can repair (keiri-design's
    // `REPAIRABLE_AT_RUN_TIME`): `run.` and the run error's code.
    /// A block failed on the attached files.
    RunBlockFailed = "run.block_failed",
    /// A block refused an input's value.
    RunInputInvalid = "run.input_invalid",
    /// A node read a column the attached file does not have.
    RunColumnNotFound = "run.column_not_found",
    /// A reference could not be resolved at run time.
    RunRefUnresolved = "run.ref_unresolved",
    /// An expression could not be evaluated.
    RunExprInvalid = "run.expr_invalid",
    /// A node went past a run limit.
    RunLimitExceeded = "run.limit_exceeded",
}

/// A string that is not a finding code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown finding code {0:?}")]
pub struct UnknownFindingCode(pub String);

impl fmt::Display for FindingCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for FindingCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for FindingCode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FindingCode, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The schema is the closed set of strings the codes serialise to, so generated clients (the
/// UI's TypeScript) get them as a union.
impl schemars::JsonSchema for FindingCode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "FindingCode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = FindingCode::ALL.iter().map(|c| c.as_str()).collect();
        schemars::json_schema!({
            "description": "The rule a plan finding names.",
            "type": "string",
            "enum": codes,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;

    #[test]
    fn every_code_round_trips_through_its_string_and_json() {
        let mut seen = std::collections::HashSet::new();
        for &code in FindingCode::ALL {
            assert!(seen.insert(code.as_str()), "{code} twice");
            assert_eq!(code.as_str().parse::<FindingCode>(), Ok(code));
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::json!(code.as_str()));
            assert_eq!(serde_json::from_value::<FindingCode>(json).unwrap(), code);
        }
        assert!("column.nope".parse::<FindingCode>().is_err());
        assert!(serde_json::from_value::<FindingCode>(serde_json::json!("x.y")).is_err());
    }
}
