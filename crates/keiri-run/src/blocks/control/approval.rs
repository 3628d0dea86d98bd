//! `control.approval`: its inputs and outputs are in `block_specs/control/control.approval.yaml`.

use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::ui::{answer_object, bad_answer, yes_no};
use serde_json::{Value as Json, json};

fn approval(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let subject = inputs.require_str("subject")?.to_string();
    let signed = inputs.bool("require_signature")?.unwrap_or(false);
    let amount = inputs.f64("amount")?.unwrap_or(0.0);
    let threshold = inputs.f64("threshold_amount")?.unwrap_or(0.0);
    let approvers = match inputs.json("approvers") {
        Some(Json::Array(items)) => items,
        None => Vec::new(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "approvers",
                "承認者の配列が必要です",
                "expected a list of approvers",
            ));
        }
    };
    // The route: every approver whose limit does not already cover the amount, up to the
    // first whose limit does (a limit of 0 or none means no limit). Under the threshold,
    // nobody needs to approve.
    let mut route: Vec<String> = Vec::new();
    if amount.abs() >= threshold {
        for a in &approvers {
            let name = a
                .get("name")
                .and_then(Json::as_str)
                .unwrap_or_default()
                .to_string();
            if name.is_empty() {
                return Err(BlockError::input_invalid(
                    "approvers",
                    "承認者に name が必要です",
                    "every approver needs a name",
                ));
            }
            route.push(name);
            let limit = a.get("limit").and_then(Json::as_f64).unwrap_or(0.0);
            if limit <= 0.0 || amount.abs() <= limit {
                break;
            }
        }
    }
    if route.is_empty() {
        return Ok(Outputs::new()
            .with("approved", json!(true))
            .with("decisions", json!([]))
            .with("route", json!([])));
    }
    let Some(answer) = ctx.answer else {
        return Err(BlockError::awaiting(
            json!({
                "kind": "approval",
                "subject": subject,
                "amount": amount,
                "route": route,
                "approvers": approvers,
                "details": inputs.json("details"),
                "labels": crate::codes::labels_for(inputs.json("details").as_ref()),
                "attachments": inputs.strings("attachments")?.unwrap_or_default(),
                "require_signature": signed,
            }),
            format!("承認待ち: {subject}（{}）", route.join(" → ")),
            format!("waiting for approval: {subject} ({})", route.join(" → ")),
        ));
    };
    let answer = &answer_object(answer)?;
    let Some(Json::Array(given)) = answer.get("decisions") else {
        return Err(bad_answer(
            "decisions に承認者ごとの判断が必要です",
            "decisions must list each approver's decision",
        ));
    };
    let now = ctx.now.to_rfc3339();
    let mut decisions = Vec::new();
    let mut all_approved = true;
    for name in &route {
        let Some(d) = given
            .iter()
            .find(|d| d.get("approver").and_then(Json::as_str) == Some(name.as_str()))
        else {
            return Err(bad_answer(
                format!("{name} の判断がありません"),
                format!("no decision from {name}"),
            ));
        };
        // approved / rejected, or a yes / no as a person writes it (承認, 却下, yes, no, …).
        let decision = match d.get("decision").and_then(yes_no) {
            Some(true) => "approved",
            Some(false) => "rejected",
            None => {
                return Err(bad_answer(
                    format!("{name} の判断は approved（承認）か rejected（却下）です"),
                    format!("{name}'s decision must be approved or rejected"),
                ));
            }
        };
        // A named approver's decision is signed with their own name when the plan asks: the
        // person at the keyboard cannot answer for the 部長 without it being recorded.
        let signature = d
            .get("signed_by")
            .and_then(Json::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty());
        match signature {
            None if signed => {
                return Err(bad_answer(
                    format!("{name} の判断には {name} 本人の名前の入力（署名）が必要です"),
                    format!("{name}'s decision needs {name}'s own name typed as a signature"),
                ));
            }
            Some(s) if !same_person(s, name) => {
                return Err(bad_answer(
                    format!("{name} の判断に入力された名前「{s}」は {name} ではありません"),
                    format!("the name {s:?} typed for {name}'s decision is not {name}"),
                ));
            }
            _ => {}
        }
        all_approved &= decision == "approved";
        let role = approvers
            .iter()
            .find(|a| a.get("name").and_then(Json::as_str) == Some(name.as_str()))
            .and_then(|a| a.get("role"))
            .and_then(Json::as_str)
            .unwrap_or_default();
        decisions.push(json!({
            "approver": name,
            "role": role,
            "decision": decision,
            "comment": d.get("comment").and_then(Json::as_str).unwrap_or_default(),
            "decided_at": now,
        }));
        if let (Some(s), Some(Json::Object(last))) = (signature, decisions.last_mut()) {
            last.insert("signed_by".into(), json!(s));
        }
    }
    Ok(Outputs::new()
        .with("approved", json!(all_approved))
        .with("decisions", Json::Array(decisions))
        .with("route", json!(route)))
}

/// Whether a typed name is the approver's: the same after NFKC and with spaces and case
/// ignored (「山田 太郎」, 「山田　太郎」 and 「山田太郎」 are one person).
fn same_person(typed: &str, name: &str) -> bool {
    use unicode_normalization::UnicodeNormalization;
    let fold = |s: &str| -> String {
        s.nfkc()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_lowercase()
    };
    fold(typed) == fold(name)
}

builtin!("control.approval", approval);
