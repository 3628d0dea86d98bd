//! The router: which skill answers a message.
//!
//! 1. An explicit choice (`--skill`, the UI's selector) or a leading `/skill-name` command
//!    selects that skill directly (the command is removed from the message).
//! 2. Otherwise every skill is scored: +3 per trigger found in the message (case-insensitive
//!    substring), +1 per distinct token shared by the message and the description (the
//!    retrieval tokenizer: Latin words, CJK bigrams and single characters; tokens of hiragana
//!    only — particles and endings — do not count), and +2 per
//!    attached file matching one of its `file_patterns`.
//! 3. The best score wins; ties go to the higher priority, then to the name (so the result is
//!    deterministic). A best score of 0 means no match: the `general` skill answers, and it
//!    only ever gets read-only tools.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::skillpack::{GENERAL_SKILL, Skill, builtin_general};
use crate::tool::Scope;

/// Points per trigger found.
pub const TRIGGER_POINTS: i64 = 3;
/// Points per shared token.
pub const TOKEN_POINTS: i64 = 1;
/// Points per attached file matching a pattern.
pub const FILE_POINTS: i64 = 2;

/// Why a skill was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouteReason {
    /// The caller named the skill.
    Explicit,
    /// The message started with `/skill-name`.
    Command,
    /// It had the best score.
    Score,
    /// Nothing matched.
    Fallback,
}

impl RouteReason {
    /// The word it is serialised as.
    pub fn as_str(self) -> &'static str {
        match self {
            RouteReason::Explicit => "explicit",
            RouteReason::Command => "command",
            RouteReason::Score => "score",
            RouteReason::Fallback => "fallback",
        }
    }
}

/// A skill's score for one message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillScore {
    pub skill: String,
    pub score: i64,
    pub triggers: i64,
    pub tokens: i64,
    pub files: i64,
}

/// The router's decision.
#[derive(Debug, Clone, PartialEq)]
pub struct Route {
    pub skill: Skill,
    pub reason: RouteReason,
    /// The winning score (0 for a command, an explicit choice or the fallback).
    pub score: i64,
    /// Every skill's score, best first (empty when the skill was selected directly).
    pub scores: Vec<SkillScore>,
    /// The message without a leading `/skill-name` command.
    pub message: String,
    /// The tools the skill may call.
    pub scope: Scope,
}

/// Routes `message` (with attached `files`) to one of `skills`. `explicit` is a skill the
/// caller chose; `read_only_tools` are what the fallback skill may use.
pub fn route(
    message: &str,
    files: &[String],
    explicit: Option<&str>,
    skills: &[Skill],
    read_only_tools: &[String],
) -> Result<Route, Error> {
    let direct = |skill: &Skill, reason, message: String| {
        let scope = Scope::new(&skill.meta.name, skill.meta.allowed_tools.clone());
        Route {
            skill: skill.clone(),
            reason,
            score: 0,
            scores: Vec::new(),
            message,
            scope,
        }
    };
    if let Some(name) = explicit.map(str::trim).filter(|n| !n.is_empty()) {
        let name = name.trim_start_matches('/');
        return match skills.iter().find(|s| s.meta.name == name) {
            Some(skill) => Ok(direct(skill, RouteReason::Explicit, message.to_string())),
            None if name == GENERAL_SKILL => {
                Ok(fallback(message, skills, read_only_tools, Vec::new()))
            }
            None => Err(Error::SkillNotFound {
                name: name.to_string(),
                available: skills.iter().map(|s| s.meta.name.clone()).collect(),
            }),
        };
    }
    if let Some((name, rest)) = command(message)
        && let Some(skill) = skills.iter().find(|s| s.meta.name == name)
    {
        return Ok(direct(skill, RouteReason::Command, rest.to_string()));
    }
    let mut scores: Vec<(SkillScore, &Skill)> = skills
        .iter()
        .map(|s| (score(message, files, s), s))
        .collect();
    scores.sort_by(|(a, sa), (b, sb)| {
        b.score
            .cmp(&a.score)
            .then(sb.meta.priority.cmp(&sa.meta.priority))
            .then(sa.meta.name.cmp(&sb.meta.name))
    });
    let all: Vec<SkillScore> = scores.iter().map(|(s, _)| s.clone()).collect();
    match scores.first() {
        Some((best, skill)) if best.score > 0 => {
            let scope = Scope::new(&skill.meta.name, skill.meta.allowed_tools.clone());
            let mut route = Route {
                skill: (*skill).clone(),
                reason: RouteReason::Score,
                score: best.score,
                scores: all,
                message: message.to_string(),
                scope,
            };
            if skill.meta.name == GENERAL_SKILL {
                route.scope = read_only_scope(skill, read_only_tools);
            }
            Ok(route)
        }
        _ => Ok(fallback(message, skills, read_only_tools, all)),
    }
}

fn read_only_scope(skill: &Skill, read_only_tools: &[String]) -> Scope {
    Scope::new(
        &skill.meta.name,
        skill
            .meta
            .allowed_tools
            .iter()
            .filter(|t| read_only_tools.contains(t))
            .cloned()
            .collect(),
    )
}

fn fallback(
    message: &str,
    skills: &[Skill],
    read_only_tools: &[String],
    scores: Vec<SkillScore>,
) -> Route {
    let skill = skills
        .iter()
        .find(|s| s.meta.name == GENERAL_SKILL)
        .cloned()
        .unwrap_or_else(|| builtin_general(read_only_tools.to_vec()));
    Route {
        scope: read_only_scope(&skill, read_only_tools),
        skill,
        reason: RouteReason::Fallback,
        score: 0,
        scores,
        message: message.to_string(),
    }
}

/// A leading `/name` (followed by whitespace or the end): the name and the rest.
fn command(message: &str) -> Option<(&str, &str)> {
    let rest = message.trim_start().strip_prefix('/')?;
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let name = &rest[..end];
    crate::skillpack::valid_name(name).then(|| (name, rest[end..].trim_start()))
}

/// The score of one skill for a message.
pub fn score(message: &str, files: &[String], skill: &Skill) -> SkillScore {
    let lower = message.to_lowercase();
    let triggers = skill
        .meta
        .triggers
        .iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty() && lower.contains(t.as_str()))
        .count() as i64
        * TRIGGER_POINTS;
    let message_tokens = content_tokens(message);
    let description_tokens = content_tokens(&skill.meta.description);
    let tokens = message_tokens.intersection(&description_tokens).count() as i64 * TOKEN_POINTS;
    let files = file_matches(files, &skill.meta.file_patterns) * FILE_POINTS;
    SkillScore {
        skill: skill.meta.name.clone(),
        score: triggers + tokens + files,
        triggers,
        tokens,
        files,
    }
}

/// The distinct tokens of `text` that carry meaning: tokens made only of hiragana (particles
/// and verb endings such as の, に, して, ます) are dropped, since every Japanese sentence has
/// them and they would make any message match any description.
fn content_tokens(text: &str) -> HashSet<String> {
    keiri_search::tokenize(text)
        .into_iter()
        .filter(|t| !t.chars().all(|c| ('\u{3041}'..='\u{309F}').contains(&c)))
        .collect()
}

/// How many of `files` match one of `patterns` (matched against the whole path and the file
/// name, case-insensitively, `*` crossing `/`).
fn file_matches(files: &[String], patterns: &[String]) -> i64 {
    if files.is_empty() || patterns.is_empty() {
        return 0;
    }
    let mut builder = globset::GlobSetBuilder::new();
    for p in patterns {
        if let Ok(glob) = globset::GlobBuilder::new(p)
            .case_insensitive(true)
            .literal_separator(false)
            .build()
        {
            builder.add(glob);
        }
    }
    let Ok(set) = builder.build() else {
        return 0;
    };
    files
        .iter()
        .filter(|f| {
            let normalized = f.replace('\\', "/");
            let name = normalized.rsplit('/').next().unwrap_or(&normalized);
            set.is_match(&normalized) || set.is_match(name)
        })
        .count() as i64
}
