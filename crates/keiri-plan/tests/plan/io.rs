//! Loading and saving plans.

use keiri_plan::{LoadError, load_plan, save_plan};
use proptest::prelude::*;
use serde_json::json;

#[test]
fn unknown_top_level_keys_survive_a_round_trip() {
    let text = "apiVersion: v1\nid: p\nowner: 経理部\nx-review: {by: tanaka}\ngraph:\n  - id: a\n    block: ui.confirm\n    custom: 1\n";
    let loaded = load_plan(text).unwrap();
    assert_eq!(loaded.plan.extra.get("owner"), Some(&json!("経理部")));
    let saved = save_plan(&loaded.plan).unwrap();
    assert!(saved.contains("owner: 経理部"), "{saved}");
    assert!(saved.contains("x-review"), "{saved}");
    assert!(saved.contains("custom: 1"), "{saved}");
    let again = load_plan(&saved).unwrap();
    assert_eq!(again.plan, loaded.plan);
}

#[test]
fn shape_errors_point_at_the_field() {
    let err =
        load_plan("id: p\ngraph:\n  - id: a\n    foreach: {input: x, max_concurrency: many}\n")
            .unwrap_err();
    assert_eq!(err.code().as_str(), "plan.shape");
    assert_eq!(err.pointer(), "/graph/0/foreach/max_concurrency");
    assert_eq!(err.position().map(|p| p.line), Some(4));
}

#[test]
fn yaml_errors_have_positions() {
    let err = load_plan("id: p\ngraph: [\n").unwrap_err();
    assert!(matches!(err, LoadError::Yaml(_)));
    assert_eq!(err.code().as_str(), "yaml.parse");
    assert!(err.position().is_some());
    assert_eq!(
        load_plan("- a\n- b\n").unwrap_err().code().as_str(),
        "plan.shape"
    );
}

#[test]
fn v0_item_var_is_accepted_and_written_as_var() {
    let loaded = load_plan(
        "id: p\ngraph:\n  - id: l\n    type: loop\n    foreach: {input: [1], itemVar: x}\n",
    )
    .unwrap();
    let f = loaded.plan.graph[0].foreach.as_ref().unwrap();
    assert_eq!(f.var.as_deref(), Some("x"));
}

fn arb_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::Bool),
        any::<i32>().prop_map(|i| json!(i)),
        "[a-zA-Z0-9 請求書${}._:-]{0,12}".prop_map(serde_json::Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn save_then_load_keeps_meaning(
        id in "[a-z_]{1,10}",
        inputs in prop::collection::btree_map("[a-z_]{1,6}", arb_value(), 0..4),
        vars in prop::collection::btree_map("[a-z_]{1,6}", arb_value(), 0..3),
    ) {
        let mut plan = keiri_plan::Plan {
            api_version: Some("v1".into()),
            id,
            description: None,
            version: Some("1.0.0".into()),
            vars: vars.into_iter().collect(),
            policy: None,
            ui: None,
            graph: vec![keiri_plan::Node {
                id: "n".into(),
                block: Some("csv.read".into()),
                inputs: inputs.into_iter().collect(),
                ..Default::default()
            }],
            extra: Default::default(),
        };
        plan.extra.insert("owner".into(), json!("x"));
        let text = save_plan(&plan).unwrap();
        let loaded = load_plan(&text).unwrap();
        prop_assert_eq!(loaded.plan, plan);
    }

    #[test]
    fn load_never_panics(text in "\\PC{0,300}") {
        let _ = load_plan(&text);
    }
}
