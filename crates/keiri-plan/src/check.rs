//! [`check`]: plan text in, findings with their line and column out — reading and
//! validating in one step, for every front-end (the API's validate, dry-run, register and
//! run all go through it).

use indexmap::IndexMap;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::io::{LoadedPlan, load_plan};
use crate::model::Plan;
use crate::validate::{Finding, Options, Severity, validate};
use crate::{FindingCode, Lang};

/// Plan text read and validated: the plan with its findings, or the one finding that says why
/// it could not be read.
#[derive(Debug, Clone)]
pub struct Checked {
    /// `None` when the text is not a plan (the findings say why).
    pub loaded: Option<LoadedPlan>,
    pub findings: Vec<Finding>,
}

impl Checked {
    pub fn error_count(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count()
    }
}

/// Reads `yaml` and validates the plan against `catalog` with the options `options` gives
/// for it (they may depend on the plan: the files it reads). Every finding carries the line
/// and column of the part it points at; text that is not a plan is one finding,
/// [`FindingCode::YamlParse`] or [`FindingCode::PlanShape`], in `lang`.
pub fn check(
    yaml: &str,
    lang: Lang,
    catalog: &Catalog,
    options: impl FnOnce(&Plan) -> Options,
) -> Checked {
    check_as_run(yaml, lang, catalog, &IndexMap::new(), options)
}

/// [`check`] of the plan as a run will see it: the run's `vars` (`--var`, `--input`, the
/// window's inputs) over the plan's own, so the files checked are the ones the run reads and
/// a column named by a var is the run's (a plan whose default column the run overrides is
/// not refused for the default). The checked plan in [`Checked::loaded`] is the text's own.
pub fn check_as_run(
    yaml: &str,
    lang: Lang,
    catalog: &Catalog,
    vars: &IndexMap<String, Value>,
    options: impl FnOnce(&Plan) -> Options,
) -> Checked {
    let loaded = match load_plan(yaml) {
        Ok(l) => l,
        Err(e) => {
            let pos = e.position();
            let code: FindingCode = e.code();
            return Checked {
                loaded: None,
                findings: vec![Finding {
                    code,
                    severity: Severity::Error,
                    node_id: None,
                    path: e.pointer(),
                    message: match lang {
                        Lang::Ja => format!("YAML を読み込めません: {e}"),
                        Lang::En => format!("cannot read the YAML: {e}"),
                    },
                    hint: None,
                    choices: Vec::new(),
                    missing_column: None,
                    line: pos.map(|p| p.line),
                    column: pos.map(|p| p.column),
                }],
            };
        }
    };
    let as_run = (!vars.is_empty()).then(|| {
        let mut plan = loaded.plan.clone();
        plan.vars
            .extend(vars.iter().map(|(k, v)| (k.clone(), v.clone())));
        plan
    });
    let plan = as_run.as_ref().unwrap_or(&loaded.plan);
    let options = options(plan);
    let findings = validate(plan, catalog, &options)
        .into_iter()
        .map(|mut f| {
            let pos = loaded.source_map.locate(&f.path);
            f.line = pos.map(|p| p.line);
            f.column = pos.map(|p| p.column);
            f
        })
        .collect();
    Checked {
        loaded: Some(loaded),
        findings,
    }
}
