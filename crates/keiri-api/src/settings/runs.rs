//! What the user allows a plan run, checked before the settings are saved: the hosts its
//! network blocks may reach, the environment variables `${env.X}` may read, and the ceiling
//! of its bounds on work.

use keiri_plan::model::PolicyLimits;
use keiri_run::limits::Limits;

use crate::{ApiError, ErrorCode};

/// Checks the allowlist with the runtime's own parser ([`keiri_run::allow_hosts`]): each entry
/// a host, optionally with a scheme and a port (`api.example.com`, `https://api.example.com`,
/// `127.0.0.1:8080`, `*.example.com`); no path. A top-level name alone (`com`, `*.com`) and
/// link-local or metadata addresses are refused. Saved in the parser's normal form.
pub(super) fn allow_hosts(raw: &[String]) -> Result<Vec<String>, ApiError> {
    let mut hosts: Vec<String> = Vec::new();
    for entry in raw {
        if entry.trim().is_empty() {
            continue;
        }
        let host = keiri_run::allow_hosts::parse_allow_entry(entry)
            .map_err(|reason| {
                ApiError::new(
                    ErrorCode::InvalidRequest,
                    format!("allow_hosts: {entry:?}: {reason} (write api.example.com, https://api.example.com, 127.0.0.1:8080 or *.example.com)"),
                )
                .with_details(serde_json::json!({"field": "allow_hosts", "value": entry}))
            })?
            .to_text();
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    Ok(hosts)
}

/// Checks the environment variable names: each `[A-Za-z_][A-Za-z0-9_]*`, blanks dropped,
/// duplicates once.
pub(super) fn allow_env(raw: &[String]) -> Result<Vec<String>, ApiError> {
    let mut names: Vec<String> = Vec::new();
    for entry in raw {
        let name = entry.trim();
        if name.is_empty() {
            continue;
        }
        let ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(ApiError::new(
                ErrorCode::InvalidRequest,
                format!("allow_env: {entry:?} is not an environment variable name"),
            )
            .with_details(serde_json::json!({"field": "allow_env", "value": entry})));
        }
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    Ok(names)
}

/// Checks the ceiling of a run's bounds: each set bound 1 or more (a 0 would stop every loop,
/// join or node).
pub(super) fn run_limits(raw: Option<PolicyLimits>) -> Result<Option<PolicyLimits>, ApiError> {
    let Some(limits) = raw else {
        return Ok(None);
    };
    if let Some((name, _)) = limits.bounds().iter().find(|(_, v)| *v == Some(0)) {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("run_limits.{name}: write 1 or more, or leave it out for the built-in ceiling"),
        )
        .with_details(serde_json::json!({"field": format!("run_limits.{name}")})));
    }
    Ok((limits != PolicyLimits::default()).then_some(limits))
}

/// The ceiling of a run's bounds from the saved settings' `run_limits`: each bound set there,
/// else the built-in ceiling ([`Limits::ceiling`]).
pub fn run_ceiling(saved: Option<&PolicyLimits>) -> Limits {
    // The settings are to the built-in ceiling what a plan is to the defaults, with nothing
    // above them.
    Limits::for_plan(saved, Limits::ceiling(), Limits::unbounded())
}
