//! The validator's check of `policy.limits`: the bounds of a run are the plan's own, so a
//! node's or a loop body's `limits` would be silently ignored (a warning says so), and a bound
//! of 0 would stop the first loop or join it meets (an error).

use super::{Severity, Validator};
use crate::FindingCode;
use crate::model::{Plan, Policy};

impl Validator<'_> {
    /// `policy.limit_zero` for a bound of 0 in the plan's `policy.limits`;
    /// `policy.limits_not_plan` for `limits` in a node's policy or a loop body's plan.
    pub(super) fn policy_limits(&mut self, plan: &Plan) {
        if let Some(limits) = plan.policy.as_ref().and_then(|p| p.limits) {
            for (name, _) in limits.bounds().iter().filter(|(_, v)| *v == Some(0)) {
                self.error(
                    FindingCode::PolicyLimitZero,
                    None,
                    format!("/policy/limits/{name}"),
                    (
                        &format!("policy.limits.{name} が 0 です（どの処理も上限を超えます）"),
                        &format!("policy.limits.{name} is 0 (every run would pass it)"),
                    ),
                    Some((
                        "上限を下げるなら 1 以上に、既定値のままでよいなら行を消してください",
                        "write 1 or more to lower the bound, or remove the line to keep the default",
                    )),
                );
            }
        }
        self.nested_limits(plan, "");
    }

    fn nested_limits(&mut self, plan: &Plan, base: &str) {
        for (i, node) in plan.graph.iter().enumerate() {
            let path = format!("{base}/graph/{i}");
            if node.policy.as_ref().is_some_and(has_limits) {
                self.limits_not_plan(&node.id, format!("{path}/policy/limits"));
            }
            if let Some(body) = &node.body {
                let body_path = format!("{path}/body/plan");
                if body.plan.policy.as_ref().is_some_and(has_limits) {
                    self.limits_not_plan(&node.id, format!("{body_path}/policy/limits"));
                }
                self.nested_limits(&body.plan, &body_path);
            }
        }
    }

    fn limits_not_plan(&mut self, node_id: &str, path: String) {
        self.push(
            FindingCode::PolicyLimitsNotPlan,
            Severity::Warning,
            Some(node_id).filter(|id| !id.is_empty()),
            path,
            (
                &format!(
                    "ノード {node_id} の policy.limits は使われません（実行の上限はプラン全体の policy.limits だけです）"
                ),
                &format!(
                    "node {node_id}'s policy.limits is not used (a run's bounds are the plan's own policy.limits only)"
                ),
            ),
            Some((
                "プランの先頭の policy.limits に移してください",
                "move it to the plan's top-level policy.limits",
            )),
        );
    }
}

fn has_limits(policy: &Policy) -> bool {
    policy.limits.is_some()
}
