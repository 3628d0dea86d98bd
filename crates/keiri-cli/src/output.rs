//! Printing results: JSON for machines, text for people.

use std::process::ExitCode;

use keiri_api::ApiError;

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// The exit code for an API error: 1 when the plan has findings, 2 otherwise.
pub fn exit_for(err: &ApiError) -> ExitCode {
    match err.code {
        keiri_api::ErrorCode::PlanInvalid | keiri_api::ErrorCode::YamlParse => ExitCode::from(1),
        _ => ExitCode::from(2),
    }
}

/// Prints an API error: its JSON on stdout with `--json`, else a line on stderr.
pub fn print_error(err: &ApiError, json: bool) -> anyhow::Result<ExitCode> {
    if json {
        print_json(err)?;
    } else {
        eprintln!("keiri: {}: {}", err.code.as_str(), err.message);
    }
    Ok(exit_for(err))
}

/// Prints findings as text, one per line with its hint.
pub fn print_findings(findings: &[keiri_api::json::Finding], source: &str) {
    for f in findings {
        let severity = match f.severity {
            keiri_api::json::Severity::Error => "error",
            keiri_api::json::Severity::Warning => "warning",
        };
        let at = match (f.line, f.column) {
            (Some(l), Some(c)) => format!("{source}:{l}:{c}"),
            _ => source.to_string(),
        };
        let node = f
            .node_id
            .as_deref()
            .map(|n| format!(" [{n}]"))
            .unwrap_or_default();
        println!("{severity}[{}] {at}{node}: {}", f.code, f.message);
        if let Some(hint) = &f.hint {
            println!("    = {hint}");
        }
    }
}

/// A catalog text in the user's language: the English one when English is asked for and the
/// catalog gives one, else the Japanese (the catalog's own language).
pub fn pick_given<'a>(lang: keiri_api::Lang, ja: &'a str, en: Option<&'a str>) -> &'a str {
    match en {
        Some(en) if !en.trim().is_empty() => lang.pick(ja, en),
        _ => ja,
    }
}

/// Prints a line on stderr in the user's language.
pub fn say(lang: keiri_api::Lang, ja: impl std::fmt::Display, en: impl std::fmt::Display) {
    match lang {
        keiri_api::Lang::Ja => eprintln!("{ja}"),
        keiri_api::Lang::En => eprintln!("{en}"),
    }
}
