//! Reading and writing plan YAML.
//!
//! Reading goes through [`crate::yaml::parse`] (limits, positions) and then
//! `serde_path_to_error`, so a field of the wrong shape is reported with its JSON pointer and
//! line. Writing uses `yaml_serde`, the maintained fork of the archived `serde_yaml`: it keeps
//! mapping order and emits plain block-style YAML that the v0 tools also read.

use serde_json::Value;

use crate::model::Plan;
use crate::yaml::{self, Position, SourceMap, YamlError};

/// A plan read from text, with where each part came from.
#[derive(Debug, Clone)]
pub struct LoadedPlan {
    pub plan: Plan,
    /// The document as generic data (what the validator walks for references).
    pub raw: Value,
    pub source_map: SourceMap,
}

/// Why a plan could not be read.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    #[error(transparent)]
    Yaml(#[from] YamlError),
    #[error("the plan must be a mapping at the top level")]
    NotAMapping,
    #[error("{pointer}: {message}")]
    Shape {
        pointer: String,
        message: String,
        position: Option<Position>,
    },
}

impl LoadError {
    /// The stable finding code for this error.
    pub fn code(&self) -> crate::FindingCode {
        match self {
            LoadError::Yaml(_) => crate::FindingCode::YamlParse,
            LoadError::NotAMapping | LoadError::Shape { .. } => crate::FindingCode::PlanShape,
        }
    }

    /// The JSON pointer of the offending part.
    pub fn pointer(&self) -> String {
        match self {
            LoadError::Shape { pointer, .. } => pointer.clone(),
            _ => String::new(),
        }
    }

    /// 1-based line and column, when known.
    pub fn position(&self) -> Option<Position> {
        match self {
            LoadError::Yaml(e) => e.position().map(|(line, column)| Position { line, column }),
            LoadError::Shape { position, .. } => *position,
            LoadError::NotAMapping => Some(Position { line: 1, column: 1 }),
        }
    }
}

/// Reads a plan from YAML text.
pub fn load_plan(text: &str) -> Result<LoadedPlan, LoadError> {
    let doc = yaml::parse(text)?;
    if !doc.value.is_object() {
        return Err(LoadError::NotAMapping);
    }
    let plan: Plan = serde_path_to_error::deserialize(&doc.value).map_err(|e| {
        let pointer = path_to_pointer(e.path());
        LoadError::Shape {
            position: doc.source_map.locate(&pointer),
            message: e.inner().to_string(),
            pointer,
        }
    })?;
    Ok(LoadedPlan {
        plan,
        raw: doc.value,
        source_map: doc.source_map,
    })
}

/// Writes a plan as YAML.
pub fn save_plan(plan: &Plan) -> Result<String, SaveError> {
    serde_yaml::to_string(plan).map_err(|e| SaveError(e.to_string()))
}

/// A plan could not be serialised (only possible with values YAML cannot represent).
#[derive(Debug, Clone, thiserror::Error)]
#[error("serialising the plan: {0}")]
pub struct SaveError(String);

/// Converts a `serde_path_to_error` path to a JSON pointer.
pub fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => {
                out.push('/');
                out.push_str(&yaml::escape_pointer(key));
            }
            Segment::Enum { variant } => {
                out.push('/');
                out.push_str(&yaml::escape_pointer(variant));
            }
            Segment::Unknown => {}
        }
    }
    out
}
