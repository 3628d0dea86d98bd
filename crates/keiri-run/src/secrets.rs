//! Keeping the values of `${env.X}` out of what a run records and answers.
//!
//! A run may read the environment variables the user allowed ([`crate::RunOptions::env`]),
//! typically API tokens for `http.request` headers. Those values must not come back to the
//! caller through the run's records (node outputs, events, error messages), which an HTTP or
//! MCP caller reads with `run_output` and `run_get`. Every text that is recorded passes
//! [`Secrets::redact_str`]: each occurrence of a value is replaced by [`REDACTED`].
//!
//! Values shorter than [`MIN_SECRET_CHARS`] are not treated as secrets (a `FISCAL_START=4`
//! would otherwise blank every `4` in the records); a key or token is always longer.
//! The values flowing between nodes are left as they are: only what is saved or returned is
//! redacted.

use std::borrow::Cow;

use polars::prelude::{Column, DataType};
use serde_json::Value as Json;

use crate::block::Outputs;
use crate::records::Event;
use crate::state::NodeFailure;
use crate::value::Value;

/// What replaces a secret value.
pub const REDACTED: &str = "(redacted)";
/// The shortest value treated as a secret, in characters.
pub const MIN_SECRET_CHARS: usize = 6;

/// The environment values of one run, longest first (so a value that contains another is
/// replaced whole).
#[derive(Debug, Clone, Default)]
pub struct Secrets(Vec<String>);

impl Secrets {
    /// The secrets among `values`.
    pub fn new<'a>(values: impl IntoIterator<Item = &'a String>) -> Secrets {
        let mut list: Vec<String> = values
            .into_iter()
            .filter(|v| v.chars().count() >= MIN_SECRET_CHARS)
            .cloned()
            .collect();
        list.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        list.dedup();
        Secrets(list)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn contained_in(&self, text: &str) -> bool {
        self.0.iter().any(|s| text.contains(s.as_str()))
    }

    /// `text` with every secret replaced by [`REDACTED`].
    pub fn redact_str<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if !self.contained_in(text) {
            return Cow::Borrowed(text);
        }
        let mut out = text.to_string();
        for secret in &self.0 {
            out = out.replace(secret.as_str(), REDACTED);
        }
        Cow::Owned(out)
    }

    /// Redacts every string (and object key) inside `json`, in place.
    pub fn redact_json(&self, json: &mut Json) {
        if self.is_empty() {
            return;
        }
        match json {
            Json::String(s) => {
                if let Cow::Owned(clean) = self.redact_str(s) {
                    *s = clean;
                }
            }
            Json::Array(items) => items.iter_mut().for_each(|i| self.redact_json(i)),
            Json::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut value) in entries {
                    self.redact_json(&mut value);
                    map.insert(self.redact_str(&key).into_owned(), value);
                }
            }
            _ => {}
        }
    }

    /// The value with its secrets redacted: JSON strings, and the text columns (and column
    /// names) of a table.
    pub fn redact_value(&self, value: &Value) -> Value {
        match value {
            Value::Json(json) => {
                let mut json = json.clone();
                self.redact_json(&mut json);
                Value::Json(json)
            }
            Value::Table(df) => {
                let mut df = df.clone();
                let columns: Vec<Column> = df
                    .columns()
                    .iter()
                    .map(|column| self.redact_column(column))
                    .collect();
                if let Ok(clean) = polars::prelude::DataFrame::new(df.height(), columns) {
                    df = clean;
                }
                Value::Table(df)
            }
        }
    }

    fn redact_column(&self, column: &Column) -> Column {
        let name = self.redact_str(column.name()).into_owned();
        if column.dtype() != &DataType::String {
            let mut renamed = column.clone();
            renamed.rename(name.into());
            return renamed;
        }
        let Ok(text) = column.str() else {
            return column.clone();
        };
        let cells: Vec<Option<String>> = text
            .iter()
            .map(|cell| cell.map(|s| self.redact_str(s).into_owned()))
            .collect();
        Column::new(name.into(), cells)
    }

    /// The outputs with their secrets redacted (borrowed when there are none).
    pub fn redact_outputs<'o>(&self, outputs: &'o Outputs) -> Cow<'o, Outputs> {
        if self.is_empty() {
            return Cow::Borrowed(outputs);
        }
        Cow::Owned(Outputs(
            outputs
                .0
                .iter()
                .map(|(k, v)| (k.clone(), self.redact_value(v)))
                .collect(),
            outputs.1.clone(),
        ))
    }

    /// The failure with its secrets redacted (messages and question).
    pub fn redact_failure(&self, mut failure: NodeFailure) -> NodeFailure {
        if self.is_empty() {
            return failure;
        }
        failure.message_ja = self.redact_str(&failure.message_ja).into_owned();
        failure.message_en = self.redact_str(&failure.message_en).into_owned();
        for hint in [&mut failure.hint_ja, &mut failure.hint_en]
            .into_iter()
            .flatten()
        {
            *hint = self.redact_str(hint).into_owned();
        }
        if let Some(question) = failure.question.as_mut() {
            self.redact_json(question);
        }
        failure
    }

    pub fn redact_failures(&self, failures: Vec<NodeFailure>) -> Vec<NodeFailure> {
        failures
            .into_iter()
            .map(|f| self.redact_failure(f))
            .collect()
    }

    /// The event with its secrets redacted.
    pub fn redact_event<'e>(&self, event: &'e Event) -> Cow<'e, Event> {
        if self.is_empty() {
            return Cow::Borrowed(event);
        }
        let Ok(mut json) = serde_json::to_value(event) else {
            return Cow::Borrowed(event);
        };
        let before = json.clone();
        self.redact_json(&mut json);
        if json == before {
            return Cow::Borrowed(event);
        }
        match serde_json::from_value(json) {
            Ok(clean) => Cow::Owned(clean),
            Err(_) => Cow::Borrowed(event),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_of_a_secret_is_replaced_and_short_values_are_not_secrets() {
        let values = ["sk-test-0123456789".to_string(), "4".to_string()];
        let secrets = Secrets::new(values.iter());
        assert_eq!(
            secrets.redact_str("Bearer sk-test-0123456789 and sk-test-0123456789 (4)"),
            "Bearer (redacted) and (redacted) (4)"
        );
        let mut json =
            serde_json::json!({"h": {"authorization": "Bearer sk-test-0123456789"}, "n": 4});
        secrets.redact_json(&mut json);
        assert_eq!(
            json,
            serde_json::json!({"h": {"authorization": "Bearer (redacted)"}, "n": 4})
        );
    }

    #[test]
    fn a_table_has_its_text_cells_redacted() {
        let values = ["tok-abcdef".to_string()];
        let secrets = Secrets::new(values.iter());
        let df =
            polars::prelude::df!("a" => ["x tok-abcdef y", "plain"], "n" => [1i64, 2]).unwrap();
        let Value::Table(clean) = secrets.redact_value(&Value::Table(df)) else {
            panic!("a table stays a table");
        };
        let cells: Vec<Option<&str>> = clean.column("a").unwrap().str().unwrap().iter().collect();
        assert_eq!(cells, [Some("x (redacted) y"), Some("plain")]);
        assert_eq!(clean.column("n").unwrap().i64().unwrap().get(1), Some(2));
    }
}
