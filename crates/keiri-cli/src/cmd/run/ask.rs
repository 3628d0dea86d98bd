//! Asking a paused node's question on a terminal (dialoguer), one prompt per thing to decide.
//! The answer shapes are the blocks' own (crates/keiri-run/src/blocks/ui.rs); the block checks
//! the answer again, so a prompt only has to offer what fits.

use dialoguer::theme::ColorfulTheme;
use keiri_api::{Lang, RunPaused};
use serde_json::{Map, Value, json};

fn text<'a>(q: &'a Value, key: &str) -> &'a str {
    q.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Asks `paused`'s question; `None` when the person leaves it (Esc), so the run stays paused.
pub fn answer(paused: &RunPaused, lang: Lang) -> anyhow::Result<Option<Value>> {
    let theme = ColorfulTheme::default();
    let q = &Value::Object(paused.question.clone());
    eprintln!("\n? {} — {}", paused.node, paused.message);
    let yes_no = |prompt: String| -> anyhow::Result<Option<bool>> {
        Ok(dialoguer::Confirm::with_theme(&theme)
            .with_prompt(prompt)
            .interact_opt()?)
    };
    match text(q, "kind") {
        "confirmation" => {
            if let Some(details) = q.get("details").filter(|d| !d.is_null()) {
                eprintln!("{}", serde_json::to_string_pretty(details)?);
            }
            Ok(yes_no(text(q, "message").to_string())?.map(|b| json!({"approved": b})))
        }
        "diff" => {
            let count = q
                .get("patch_diff")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
            eprintln!(
                "{}",
                lang.pick(&format!("変更 {count} 件"), &format!("{count} changes"))
            );
            let prompt = lang.pick("この変更を承認しますか", "Approve these changes?");
            Ok(yes_no(prompt.to_string())?.map(|b| json!({"approved": b})))
        }
        "table_review" => {
            let rows = q
                .get("rows")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for (i, row) in rows.iter().take(20).enumerate() {
                eprintln!("{i:>4}  {row}");
            }
            if rows.len() > 20 {
                eprintln!("      … {}", rows.len() - 20);
            }
            let prompt = lang.pick("この表で進めますか", "Go on with this table?");
            Ok(yes_no(prompt.to_string())?.map(|b| json!({"approved": b})))
        }
        "approval" => {
            let route: Vec<String> = q
                .get("route")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let signed = q.get("require_signature").and_then(Value::as_bool) == Some(true);
            let mut decisions = Vec::new();
            for name in route {
                let prompt = lang
                    .pick(
                        &format!("{name} は承認しますか"),
                        &format!("Does {name} approve?"),
                    )
                    .to_string();
                let Some(ok) = yes_no(prompt)? else {
                    return Ok(None);
                };
                let decision = if ok { "approved" } else { "rejected" };
                let mut item = json!({"approver": name, "decision": decision});
                if signed {
                    // The plan asks each approver to sign with their own name; the block
                    // refuses another name.
                    let signature: String = dialoguer::Input::with_theme(&theme)
                        .with_prompt(lang.pick(
                            &format!("{name} の署名（本人の名前）"),
                            &format!("{name}'s signature (their own name)"),
                        ))
                        .interact_text()?;
                    item["signed_by"] = json!(signature.trim());
                }
                decisions.push(item);
            }
            Ok(Some(json!({"decisions": decisions})))
        }
        "input" => {
            let fields = q
                .get("fields")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let mut values = Map::new();
            for f in &fields {
                let id = text(f, "id").to_string();
                let label = f
                    .get("label")
                    .and_then(Value::as_str)
                    .unwrap_or(&id)
                    .to_string();
                let required = f.get("required").and_then(Value::as_bool).unwrap_or(true);
                let options: Vec<String> = f
                    .get("options")
                    .and_then(Value::as_array)
                    .map(|o| {
                        o.iter()
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                let value = match text(f, "type") {
                    "boolean" => yes_no(label)?.map(Value::Bool),
                    "select" | "enum" if !options.is_empty() => {
                        dialoguer::Select::with_theme(&theme)
                            .with_prompt(label)
                            .items(&options)
                            .interact_opt()?
                            .map(|i| Value::String(options[i].clone()))
                    }
                    kind => {
                        let number = kind == "number";
                        let raw: String = dialoguer::Input::with_theme(&theme)
                            .with_prompt(label)
                            .allow_empty(!required)
                            .validate_with(|s: &String| -> Result<(), &str> {
                                if number
                                    && !s.trim().is_empty()
                                    && s.trim().parse::<f64>().is_err()
                                {
                                    Err(lang.pick("数値を入力してください", "enter a number"))
                                } else {
                                    Ok(())
                                }
                            })
                            .interact_text()?;
                        let raw = raw.trim().to_string();
                        if raw.is_empty() {
                            None
                        } else if number {
                            raw.parse::<f64>()
                                .ok()
                                .and_then(serde_json::Number::from_f64)
                                .map(Value::Number)
                        } else {
                            Some(Value::String(raw))
                        }
                    }
                };
                if let Some(v) = value {
                    values.insert(id, v);
                }
            }
            Ok(Some(json!({"values": values})))
        }
        other => {
            eprintln!(
                "{}",
                lang.pick(&format!(
                        "この種類の質問（{other}）は端末では答えられません。--answers で渡してください"
                    ),
                    &format!(
                        "this kind of question ({other}) cannot be answered here; pass it with --answers"
                    ),
                )
            );
            Ok(None)
        }
    }
}
