//! The offline composer's eval: a case file of jobs as accountants describe them (with the
//! files they would attach) and what compose must do with each: use the templates that do the
//! job, or say that none does (`no_fit`). `keiri eval offline` runs it; the README reports the
//! pass rate.
//!
//! * [`load_offline_cases`] / [`parse_offline_cases`]: the case file
//!   (`evals/offline_cases.yaml`), with the same typed [`CaseFileError`] as the planner eval.
//! * [`judge`]: one composition against its case. [`summarize`] and [`format_offline_report`]
//!   total and print them.
//!
//! Everything here is a pure function of the composed results; the caller runs compose (the
//! same `plan_generate` a user's request goes through, documents and all).

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::eval::{CaseFileError, check_cases, read_case_file, read_case_yaml};
use crate::generate::{GeneratedPlan, Status};

/// One job of the case file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OfflineCase {
    /// Unique within the file; also the id of the composed plan.
    pub id: String,
    /// The job, as an accountant would write it.
    pub instruction: String,
    /// Files the user attaches (paths inside the workspace). They fit files and columns; they
    /// must not change which templates are chosen.
    #[serde(default)]
    pub docs: Vec<String>,
    /// The templates a right composition uses (in any order).
    #[serde(default)]
    pub expect_templates: Vec<String>,
    /// No template does this job: compose must answer `no_fit` and compose nothing.
    #[serde(default)]
    pub no_fit: bool,
}

impl OfflineCase {
    /// What the case expects, in words.
    pub fn expected(&self) -> String {
        if self.no_fit {
            "no_fit".into()
        } else {
            self.expect_templates.join(" + ")
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OfflineCaseFile {
    cases: Vec<OfflineCase>,
}

/// Reads and checks an offline case file (see [`parse_offline_cases`]).
pub fn load_offline_cases(path: &Path) -> Result<Vec<OfflineCase>, CaseFileError> {
    parse_offline_cases(&read_case_file(path)?, path)
}

/// Parses an offline case file (`cases: [{id, instruction, docs?, expect_templates? |
/// no_fit?}]`). At least one case; ids unique and usable as plan ids; instructions non-empty;
/// each case expects either templates or `no_fit`, not both and not neither. `path` only
/// names the file in errors.
pub fn parse_offline_cases(text: &str, path: &Path) -> Result<Vec<OfflineCase>, CaseFileError> {
    let (file, doc): (OfflineCaseFile, _) = read_case_yaml(text, path)?;
    check_cases(
        &file.cases,
        &doc,
        path,
        |c| (c.id.as_str(), c.instruction.as_str()),
        |c| {
            (c.no_fit != c.expect_templates.is_empty())
                .then_some("a case expects either templates (expect_templates) or no_fit: true")
        },
    )?;
    Ok(file.cases)
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OfflineOutcome {
    pub id: String,
    pub passed: bool,
    /// What the case expects (`no_fit`, or the templates joined with ` + `).
    pub expected: String,
    /// The composition's status; `None` when compose failed.
    pub status: Option<Status>,
    /// The templates compose used.
    pub templates: Vec<String>,
    /// Compose's error code, when it failed.
    pub error: Option<String>,
}

/// Judges one composition. A `no_fit` case passes only on [`Status::NoFit`]; any other passes
/// when compose used exactly the expected templates (in any order) and the plan is not
/// invalid (it is valid, or needs only the user's answers). An error fails the case.
pub fn judge(case: &OfflineCase, result: Result<&GeneratedPlan, &str>) -> OfflineOutcome {
    let (status, templates, error) = match result {
        Ok(g) => (Some(g.status), g.templates.clone(), None),
        Err(code) => (None, Vec::new(), Some(code.to_string())),
    };
    let passed = match status {
        None => false,
        Some(Status::NoFit) => case.no_fit,
        Some(Status::Invalid) => false,
        Some(_) => {
            !case.no_fit
                && templates.iter().collect::<BTreeSet<_>>()
                    == case.expect_templates.iter().collect::<BTreeSet<_>>()
        }
    };
    OfflineOutcome {
        id: case.id.clone(),
        passed,
        expected: case.expected(),
        status,
        templates,
        error,
    }
}

/// The outcomes and their totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OfflineReport {
    pub cases: Vec<OfflineOutcome>,
    pub passed: usize,
    pub total: usize,
    /// `passed / total`, 0 for no cases.
    pub pass_rate: f64,
}

/// Totals `cases`.
pub fn summarize(cases: Vec<OfflineOutcome>) -> OfflineReport {
    let passed = cases.iter().filter(|c| c.passed).count();
    let total = cases.len();
    let pass_rate = if total == 0 {
        0.0
    } else {
        passed as f64 / total as f64
    };
    OfflineReport {
        cases,
        passed,
        total,
        pass_rate,
    }
}

fn status_name(status: Option<Status>) -> String {
    status
        .and_then(|s| serde_json::to_value(s).ok())
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "error".into())
}

/// The report as text: a line per case (failures say what came instead), then the pass rate.
pub fn format_offline_report(report: &OfflineReport) -> String {
    let mut out = String::new();
    for c in &report.cases {
        let got = match (&c.error, c.status) {
            (Some(code), _) => format!("error {code}"),
            (None, Some(Status::NoFit)) => "no_fit".into(),
            (None, status) => format!("{} ({})", c.templates.join(" + "), status_name(status)),
        };
        if c.passed {
            out.push_str(&format!("pass  {}: {got}\n", c.id));
        } else {
            out.push_str(&format!(
                "FAIL  {}: expected {}, got {got}\n",
                c.id, c.expected
            ));
        }
    }
    out.push_str(&format!(
        "offline eval: {} of {} cases passed ({:.1} %)\n",
        report.passed,
        report.total,
        report.pass_rate * 100.0
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<OfflineCase>, CaseFileError> {
        parse_offline_cases(text, Path::new("cases.yaml"))
    }

    #[test]
    fn a_case_expects_templates_or_no_fit_but_not_both() {
        let ok = parse(
            "cases:\n  - id: a\n    instruction: 重複\n    expect_templates: [x]\n  - id: b\n    instruction: 天気\n    no_fit: true\n",
        )
        .unwrap();
        assert_eq!(ok.len(), 2);
        let both = parse(
            "cases:\n  - id: a\n    instruction: x\n    no_fit: true\n    expect_templates: [x]\n",
        )
        .unwrap_err();
        assert!(both.to_string().contains("either templates"), "{both}");
        let neither = parse("cases:\n  - id: a\n    instruction: x\n").unwrap_err();
        assert!(
            neither.to_string().contains("either templates"),
            "{neither}"
        );
        let twice = parse(
            "cases:\n  - id: a\n    instruction: x\n    no_fit: true\n  - id: a\n    instruction: y\n    no_fit: true\n",
        )
        .unwrap_err();
        assert!(twice.to_string().contains("used twice"), "{twice}");
        let unknown =
            parse("cases:\n  - id: a\n    instruction: x\n    nofit: true\n").unwrap_err();
        assert!(
            matches!(unknown, CaseFileError::Yaml { line: Some(_), .. }),
            "{unknown}"
        );
    }

    fn generated(status: Status, templates: &[&str]) -> GeneratedPlan {
        GeneratedPlan {
            plan: keiri_plan::load_plan("id: p\ngraph: []\n").unwrap().plan,
            status,
            mode: crate::ApplyMode::Compose,
            fallback: false,
            reasoning: String::new(),
            candidates: Vec::new(),
            templates: templates.iter().map(|t| t.to_string()).collect(),
            composition: None,
            attempts: Vec::new(),
            requirements: Vec::new(),
            errors: Vec::new(),
            suggestions: Vec::new(),
            notes: Vec::new(),
            usage: keiri_llm::Usage::default(),
        }
    }

    fn case(expect: &[&str], no_fit: bool) -> OfflineCase {
        OfflineCase {
            id: "c".into(),
            instruction: "x".into(),
            docs: Vec::new(),
            expect_templates: expect.iter().map(|t| t.to_string()).collect(),
            no_fit,
        }
    }

    #[test]
    fn judging_wants_the_same_templates_or_an_honest_no_fit() {
        let dup = case(&["dup", "report"], false);
        let got = |s, t: &[&str]| judge(&dup, Ok(&generated(s, t))).passed;
        assert!(got(Status::NeedsAnswers, &["report", "dup"]));
        assert!(got(Status::Valid, &["dup", "report"]));
        // One template short, one too many, an invalid plan or nothing: a failure.
        assert!(!got(Status::Valid, &["dup"]));
        assert!(!got(Status::Valid, &["dup", "report", "three_way"]));
        assert!(!got(Status::Invalid, &["dup", "report"]));
        assert!(!got(Status::NoFit, &[]));
        assert!(!judge(&dup, Err("INVALID_ARGUMENT")).passed);

        let none = case(&[], true);
        assert!(judge(&none, Ok(&generated(Status::NoFit, &[]))).passed);
        // An unrelated plan where none fits is the failure this eval exists for.
        assert!(!judge(&none, Ok(&generated(Status::NeedsAnswers, &["payroll"]))).passed);

        let report = summarize(vec![
            judge(&none, Ok(&generated(Status::NoFit, &[]))),
            judge(&dup, Ok(&generated(Status::Valid, &["dup"]))),
        ]);
        assert_eq!((report.passed, report.total), (1, 2));
        let text = format_offline_report(&report);
        assert!(
            text.contains("FAIL  c: expected dup + report, got dup (valid)"),
            "{text}"
        );
        assert!(
            text.ends_with("offline eval: 1 of 2 cases passed (50.0 %)\n"),
            "{text}"
        );
    }
}
