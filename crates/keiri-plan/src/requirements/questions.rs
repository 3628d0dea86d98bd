//! How a composed plan asks for its template imports, kept in the plan itself: compose writes
//! each unbound import's contract (its description, the template's requirement hint) under
//! `ui.questions.<var>`, and the requirements builder lays it over the question it derives from
//! the block input the var feeds. So a plan reopened later, or rebuilt after an answer (the
//! API's `requirements_answer`), still asks 「通知先」 with the template's example, not
//! 「notify_to / 変数 notify_to の値」.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::ports::short_label;
use super::types::{Requirement, RequirementHint};
use crate::model::Plan;

/// One import's question, as `ui.questions.<var>` holds it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct QuestionMeta {
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_en: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirement: Option<RequirementHint>,
}

/// The key under the plan's `ui` that holds them.
pub const UI_KEY: &str = "questions";

/// The questions a plan keeps. A hand-edited entry that does not read is left out (these only
/// word the questions; the builder's own derivation stands without them).
pub fn of_plan(plan: &Plan) -> IndexMap<String, QuestionMeta> {
    let Some(serde_json::Value::Object(all)) = plan.ui.as_ref().and_then(|u| u.extra.get(UI_KEY))
    else {
        return IndexMap::new();
    };
    all.iter()
        .filter_map(|(var, meta)| {
            serde_json::from_value::<QuestionMeta>(meta.clone())
                .ok()
                .map(|m| (var.clone(), m))
        })
        .collect()
}

/// Lays each var's kept question over the requirement that asks for it.
pub fn overlay(requirements: &mut [Requirement], questions: &IndexMap<String, QuestionMeta>) {
    for r in requirements {
        let Some(meta) = r.target.var.as_deref().and_then(|v| questions.get(v)) else {
            continue;
        };
        r.required = meta.required;
        if !meta.description.trim().is_empty() {
            r.label = short_label(&meta.description);
            r.description = meta.description.clone();
        }
        if let Some(en) = &meta.description_en {
            r.label_en = Some(short_label(en));
            r.description_en = Some(en.clone());
        }
        let Some(hint) = &meta.requirement else {
            continue;
        };
        if let Some(kind) = hint.kind {
            r.kind = kind;
        }
        if let Some(label) = &hint.label {
            r.label = label.clone();
        }
        if hint.label_en.is_some() {
            r.label_en = hint.label_en.clone();
        }
        if hint.accept.is_some() {
            r.accept = hint.accept.clone();
        }
        if !hint.options.is_empty() {
            r.options = hint.options.clone();
        }
        if hint.hint.is_some() {
            r.hint = hint.hint.clone();
        }
        if hint.hint_en.is_some() {
            r.hint_en = hint.hint_en.clone();
        }
        if hint.validation.is_some() {
            r.validation = hint.validation.clone();
        }
    }
}
