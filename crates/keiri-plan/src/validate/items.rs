//! The validator's check of a list input's literal items against the type its spec gives them
//! (`items: {type: object}`): a list of names where the block wants objects
//! (`control.approval`'s `approvers: [佐藤, 鈴木]` for `[{name: 佐藤}, …]`) would validate and
//! then fail the run.

use serde_json::Value;

use super::Validator;
use crate::FindingCode;
use crate::catalog::{PortSpec, TypeSpec, ValueType};
use crate::refs;

impl Validator<'_> {
    /// `input.type_mismatch` for each literal item of the list `value` whose type the spec's
    /// `items.type` does not accept; items holding a `${…}` reference are known only at run
    /// time and left to it.
    pub(super) fn check_items(
        &mut self,
        block: &str,
        key: &str,
        port: &PortSpec,
        value: &Value,
        id: Option<&str>,
        path: &str,
    ) {
        let (Value::Array(items), Some(declared)) = (
            value,
            port.items.as_ref().and_then(|i| i.get("type")).cloned(),
        ) else {
            return;
        };
        let Ok(want) = serde_json::from_value::<TypeSpec>(declared) else {
            return;
        };
        for (i, item) in items.iter().enumerate() {
            let actual = ValueType::of(item);
            if item.is_null() || refs::contains_reference(item) || want.accepts(actual) {
                continue;
            }
            let (want, actual) = (want.display(), actual.as_str());
            let n = i + 1;
            let example = match want.as_str() {
                "object" => port
                    .items
                    .as_ref()
                    .and_then(|i| i.get("properties"))
                    .and_then(Value::as_object)
                    .and_then(|p| p.keys().next().cloned())
                    .map(|field| {
                        (
                            format!("（例 {{{field}: …}}）"),
                            format!(" (e.g. {{{field}: …}})"),
                        )
                    }),
                _ => None,
            }
            .unwrap_or_default();
            self.error(
                FindingCode::InputTypeMismatch,
                id,
                format!("{path}/{i}"),
                (
                    &format!("{block} の {key} の {n} 番目は {want} 型が必要ですが {actual} が指定されています{}", example.0),
                    &format!("item {n} of {key} of {block} must be {want} but is {actual}{}", example.1),
                ),
                None,
            );
        }
    }
}
