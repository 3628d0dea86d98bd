//! `control.sod_check`: segregation of duties, on the access list and on real transactions.
//!
//! * **Role conflicts.** A user holds every duty of a conflict (the SoD matrix row, two or more
//!   roles): one `role_conflict` violation per user and conflict, in assignment order. A user
//!   may appear in several assignment rows (one role per row, as access exports often have
//!   it); their roles are merged. `roles` is a list, or one text with the roles separated by
//!   `,` `、` `，` `;` `；` `/` or `／`.
//! * **Self-approval.** A transaction whose preparer is also its approver: one
//!   `self_approval` violation (severity `error`) per transaction, with the transaction. A
//!   transaction with no approver is not a SoD violation (a missing approval is a policy
//!   rule: `control.policy_enforce`).
//!
//! Roles and names are compared after folding full-width characters and trimming, so
//! `経理　花子` and `経理 花子`, or `ＡＰ承認` and `AP承認`, are the same.

use crate::block::ProgressUnit;
use crate::blocks::kit::steps::Steps;
use std::collections::BTreeSet;

use indexmap::IndexMap;
use serde_json::{Value as Json, json};

use super::{cancelled, invalid, is_blank, objects, severity, text};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::jp::fold_width;

/// The form names and roles are compared in.
fn key(s: &str) -> String {
    fold_width(s)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The roles of one assignment or conflict: a list of strings, or one text with separators.
fn role_list(value: Option<&Json>, what: &str) -> Result<Vec<String>, BlockError> {
    let bad = || {
        invalid(
            format!("{what} の roles は文字列の配列か文字列です"),
            format!("the roles of {what} must be a list of strings or a text"),
        )
    };
    let roles: Vec<String> = match value {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::String(s)) => s
            .split([',', '、', '，', ';', '；', '/', '／'])
            .map(str::to_string)
            .collect(),
        Some(Json::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(bad))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(bad()),
    };
    Ok(roles
        .into_iter()
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty())
        .collect())
}

pub(super) fn sod_check(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let assignments = objects(inputs, "assignments")?;
    let conflict_specs = objects(inputs, "conflicts")?;
    if conflict_specs.is_empty() {
        return Err(BlockError::input_invalid(
            "conflicts",
            "両立しない職務の組み合わせを1つ以上指定してください",
            "at least one incompatible combination of duties is needed",
        ));
    }
    let preparer_field = inputs.str("preparer_field")?.unwrap_or("preparer");
    let approver_field = inputs.str("approver_field")?.unwrap_or("approver");

    // Users in first-appearance order, each with their roles (by comparison key).
    let mut users: IndexMap<String, (String, BTreeSet<String>)> = IndexMap::new();
    for (n, a) in assignments.iter().enumerate() {
        let what = format!("assignments[{n}]");
        let user = a.get("user").map(|v| text(Some(v))).unwrap_or_default();
        if user.trim().is_empty() {
            return Err(invalid(
                format!("{what} に user がありません"),
                format!("{what} has no user"),
            ));
        }
        let roles = role_list(a.get("roles").or_else(|| a.get("role")), &what)?;
        let entry = users
            .entry(key(&user))
            .or_insert_with(|| (user.trim().to_string(), BTreeSet::new()));
        entry.1.extend(roles.iter().map(|r| key(r)));
    }

    struct Conflict {
        roles: Vec<String>,
        keys: Vec<String>,
        reason: String,
        severity: String,
    }
    let mut conflicts = Vec::new();
    for (n, c) in conflict_specs.iter().enumerate() {
        let what = format!("conflicts[{n}]");
        let roles = role_list(c.get("roles"), &what)?;
        let keys: Vec<String> = roles.iter().map(|r| key(r)).collect();
        if keys.iter().collect::<BTreeSet<_>>().len() < 2 {
            return Err(invalid(
                format!("{what} には異なる職務を2つ以上指定してください"),
                format!("{what} needs two or more different roles"),
            ));
        }
        let severity = severity(c, "error")?;
        if severity == "info" {
            return Err(invalid(
                format!("{what} の severity は warning か error です"),
                format!("the severity of {what} must be warning or error"),
            ));
        }
        let reason = c
            .get("reason")
            .and_then(Json::as_str)
            .filter(|r| !r.trim().is_empty())
            .map_or_else(
                || {
                    let roles = roles.join("・");
                    ctx.say(
                        format!("{roles} は同じ人が兼務してはいけません"),
                        format!("one person must not hold all of {roles}"),
                    )
                },
                str::to_string,
            );
        conflicts.push(Conflict {
            roles,
            keys,
            reason,
            severity,
        });
    }

    let mut violations = Vec::new();
    let mut violating: BTreeSet<String> = BTreeSet::new();
    let mut role_conflict_count = 0;
    for (user_key, (user, held)) in &users {
        cancelled(ctx)?;
        for c in &conflicts {
            if c.keys.iter().all(|k| held.contains(k)) {
                role_conflict_count += 1;
                violating.insert(user_key.clone());
                violations.push(json!({
                    "user": user, "kind": "role_conflict", "roles": c.roles,
                    "reason": c.reason, "severity": c.severity, "transaction": null,
                }));
            }
        }
    }

    let transactions = objects(inputs, "transactions")?;
    if !transactions.is_empty() {
        for field in [preparer_field, approver_field] {
            if !transactions.iter().any(|t| t.contains_key(field)) {
                let columns = crate::value::columns_of(&transactions);
                return Err(BlockError::missing_column(field, &columns));
            }
        }
    }
    let mut self_approval_count = 0;
    let mut unsigned = 0;
    let mut steps = Steps::new(ctx, ProgressUnit::Rows, Some(transactions.len()));
    for (i, t) in transactions.iter().enumerate() {
        if i % 4096 == 0 {
            steps.advance_to(i as u64)?;
        }
        let (preparer, approver) = (t.get(preparer_field), t.get(approver_field));
        if is_blank(preparer) || is_blank(approver) {
            unsigned += 1;
            continue;
        }
        let preparer = text(preparer);
        let user_key = key(&preparer);
        if user_key != key(&text(approver)) {
            continue;
        }
        self_approval_count += 1;
        violating.insert(user_key);
        violations.push(json!({
            "user": preparer.trim(), "kind": "self_approval",
            "roles": [preparer_field, approver_field],
            "reason": ctx.say("起票者と承認者が同じです", "the preparer also approved it"),
            "severity": "error", "transaction": t,
        }));
    }

    ctx.calls.warn_rows_skipped(
        unsigned,
        transactions.len(),
        (
            &format!("起票者（{preparer_field}）か承認者（{approver_field}）が空のため自己承認を確認していません"),
            &format!("were not checked for self-approval: their preparer ({preparer_field}) or approver ({approver_field}) is empty"),
        ),
    );
    // Nearly every transaction approved by its preparer: the two fields likely name one column.
    ctx.calls.warn_if_mostly_flagged(
        self_approval_count,
        transactions.len() - unsigned,
        ("自己承認", "self-approvals"),
    );
    // A role in the matrix that nobody holds is often a spelling that hides a conflict.
    let held: BTreeSet<&String> = users.values().flat_map(|(_, r)| r).collect();
    let mut unassigned: Vec<&String> = Vec::new();
    for c in &conflicts {
        for (role, k) in c.roles.iter().zip(&c.keys) {
            if !held.contains(k) && !unassigned.contains(&role) {
                unassigned.push(role);
            }
        }
    }
    let summary = json!({
        "user_count": users.len(),
        "violating_user_count": violating.len(),
        "role_conflict_count": role_conflict_count,
        "self_approval_count": self_approval_count,
        "transaction_count": transactions.len(),
        "unassigned_roles": unassigned,
    });
    Ok(Outputs::new()
        .with("violations", Json::Array(violations))
        .with("summary", summary))
}

builtin!("control.sod_check", sod_check);
