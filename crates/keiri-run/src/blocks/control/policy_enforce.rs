//! `control.policy_enforce`: its inputs and outputs are in `block_specs/control/control.policy_enforce.yaml`.

use super::{count_by, objects, severity};
use crate::block::ProgressUnit;
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::invalid;
use crate::blocks::kit::steps::Steps;
use crate::blocks::transforms::expr;
use serde_json::{Value as Json, json};
use std::collections::BTreeMap;

// ---------------------------------------------------------------------------------------
// control.policy_enforce

fn policy_enforce(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let rows = inputs.rows("rows")?;
    let specs = objects(inputs, "rules")?;
    let stop_on_error = inputs.bool("stop_on_error")?.unwrap_or(false);
    struct Rule {
        id: String,
        message: String,
        severity: String,
        condition: expr::Expr,
        when: Option<expr::Expr>,
    }
    let parse = |src: &str, id: &str| {
        expr::parse(src).map_err(|e| {
            invalid(
                format!("ルール {id} の式「{src}」を解釈できません: {e}"),
                format!("rule {id}: cannot parse {src:?}: {e}"),
            )
        })
    };
    let mut rules = Vec::new();
    for (n, s) in specs.iter().enumerate() {
        let id = s
            .get("id")
            .and_then(Json::as_str)
            .map_or_else(|| format!("R{}", n + 1), str::to_string);
        let condition = s.get("condition").and_then(Json::as_str).ok_or_else(|| {
            invalid(
                format!("ルール {id} に condition がありません"),
                format!("rule {id} has no condition"),
            )
        })?;
        rules.push(Rule {
            message: s
                .get("description")
                .and_then(Json::as_str)
                .map_or_else(|| format!("{condition} を満たしていません"), str::to_string),
            severity: severity(s, "error")?,
            condition: parse(condition, &id)?,
            when: s
                .get("when")
                .and_then(Json::as_str)
                .map(|w| parse(w, &id))
                .transpose()?,
            id,
        });
    }
    let mut violations = Vec::new();
    let mut passed = Vec::new();
    let (mut by_rule, mut by_severity) = (BTreeMap::new(), BTreeMap::new());
    // Per rule: the rows it applied to and the rows that violated it.
    let mut tally = vec![(0usize, 0usize); rules.len()];
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(rows.len()));
    for (i, row) in rows.iter().enumerate() {
        steps.next()?;
        let get = |c: &str| row.get(c).cloned().unwrap_or(Json::Null);
        let eval = |e: &expr::Expr, id: &str| {
            expr::eval(e, &get).map_err(|m| {
                BlockError::failed(
                    format!("{i}行目（0始まり）でルール {id} を評価できません: {m}"),
                    format!("row {i}: cannot evaluate rule {id}: {m}"),
                )
            })
        };
        let mut clean = true;
        for (r, (applied, violated)) in rules.iter().zip(tally.iter_mut()) {
            if let Some(w) = &r.when
                && eval(w, &r.id)? != Json::Bool(true)
            {
                continue;
            }
            *applied += 1;
            if eval(&r.condition, &r.id)? == Json::Bool(true) {
                continue;
            }
            *violated += 1;
            clean = false;
            count_by(&mut by_rule, &r.id);
            count_by(&mut by_severity, &r.severity);
            violations.push(json!({"rule_id": r.id, "severity": r.severity, "message": r.message, "row_index": i, "row": row}));
        }
        if clean {
            passed.push(Json::Object(row.clone()));
        }
    }
    // A rule almost every row violates usually names the wrong column or is stated the wrong
    // way round (`amount > 100000` for "up to 100,000").
    for (r, (applied, violated)) in rules.iter().zip(&tally) {
        ctx.calls.warn_if_mostly_flagged(
            *violated,
            *applied,
            (
                &format!("ルール {} の違反", r.id),
                &format!("violations of rule {}", r.id),
            ),
        );
    }
    if stop_on_error && by_severity.contains_key("error") {
        return Err(BlockError::failed(
            format!(
                "重要度 error の規程違反が {} 件あります",
                by_severity["error"]
            ),
            format!(
                "{} policy violations of severity error",
                by_severity["error"]
            ),
        ));
    }
    let summary = json!({"violation_count": violations.len(), "passed_count": passed.len(), "by_rule": by_rule, "by_severity": by_severity});
    Ok(Outputs::new()
        .with("violations", Json::Array(violations))
        .with("passed", Json::Array(passed))
        .with("summary", summary))
}

builtin!("control.policy_enforce", policy_enforce);
