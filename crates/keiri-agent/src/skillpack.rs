//! Skillpacks: `skillpacks/<name>/SKILL.md` is YAML frontmatter between `---` lines, then the
//! skill's instructions in Markdown.
//!
//! ```text
//! ---
//! name: plan-editing
//! description: 現在のプランを編集します
//! triggers: [追加して, 削除して, edit the plan]
//! file_patterns: ["*.yaml"]
//! allowed_tools: [read_file, apply_patch, validate_plan]
//! priority: 10
//! version: 1.0.0
//! ---
//! # Instructions …
//! ```
//!
//! The frontmatter is parsed with the YAML library (quoted strings, flow and block lists,
//! block scalars all work); unknown keys are refused with the key and its line in the file.
//! [`format()`] writes a skill back (every string double-quoted and escaped, so any text
//! survives), and `parse(format(x)) == x` is a property test.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The largest SKILL.md read.
pub const MAX_SKILL_BYTES: u64 = 256 * 1024;

/// The name of the fallback skill (read-only tools) used when nothing matches.
pub const GENERAL_SKILL: &str = "general";

/// The frontmatter of a SKILL.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Frontmatter {
    /// `[a-z0-9][a-z0-9-]*`: what `/name` selects.
    pub name: String,
    /// What the skill does (Japanese first); its words count in routing.
    pub description: String,
    /// Phrases that select the skill when found in a message (+3 each).
    #[serde(default)]
    pub triggers: Vec<String>,
    /// Globs of attached files this skill is for (a bonus when one matches).
    #[serde(default)]
    pub file_patterns: Vec<String>,
    /// The only tools the skill may call.
    #[serde(default)]
    pub allowed_tools: Vec<String>,
    /// Breaks ties between equal scores (higher wins).
    #[serde(default)]
    pub priority: i64,
    #[serde(default = "default_version")]
    pub version: String,
}

fn default_version() -> String {
    "1.0.0".to_string()
}

/// A parsed skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skill {
    #[serde(flatten)]
    pub meta: Frontmatter,
    /// The Markdown after the frontmatter.
    pub instructions: String,
}

/// Why a SKILL.md could not be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct SkillIssue {
    pub file: PathBuf,
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    pub message: String,
}

/// Parses SKILL.md text. Errors carry a 1-based line of the file when known (`file` is left
/// empty; [`load_dirs`] fills it).
pub fn parse(text: &str) -> Result<Skill, SkillIssue> {
    let issue = |line: Option<usize>, message: String| SkillIssue {
        file: PathBuf::new(),
        line,
        message,
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = strip_fence(text) else {
        return Err(issue(
            Some(1),
            "the file must start with a '---' line opening the YAML frontmatter".into(),
        ));
    };
    // Find the closing fence: a line that is exactly `---`.
    let mut offset = 0;
    let mut yaml_end = None;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            yaml_end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
    }
    let Some((end, body_start)) = yaml_end else {
        return Err(issue(
            None,
            "the frontmatter has no closing '---' line".into(),
        ));
    };
    let yaml = &rest[..end];
    let instructions = rest[body_start..].to_string();
    let meta: Frontmatter = serde_yaml::from_str(yaml).map_err(|e| {
        // The frontmatter starts on the file's second line.
        let line = e.location().map(|l| l.line() + 1);
        issue(line, format!("frontmatter: {e}"))
    })?;
    check_meta(&meta).map_err(|m| issue(Some(2), m))?;
    Ok(Skill { meta, instructions })
}

fn strip_fence(text: &str) -> Option<&str> {
    text.strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
}

/// Whether `name` can be a skill name (and a `/name` command).
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn check_meta(meta: &Frontmatter) -> Result<(), String> {
    if !valid_name(&meta.name) {
        return Err(format!(
            "name {:?} must be 1-64 lowercase letters, digits or '-', starting with a letter or digit",
            meta.name
        ));
    }
    if meta.description.trim().is_empty() {
        return Err("description is empty".into());
    }
    for p in &meta.file_patterns {
        globset::Glob::new(p).map_err(|e| format!("file_patterns: {p:?}: {e}"))?;
    }
    Ok(())
}

/// Writes a skill back as SKILL.md text.
pub fn format(skill: &Skill) -> String {
    let m = &skill.meta;
    let mut out = String::from("---\n");
    out.push_str(&format!("name: {}\n", quote(&m.name)));
    out.push_str(&format!("description: {}\n", quote(&m.description)));
    for (key, list) in [
        ("triggers", &m.triggers),
        ("file_patterns", &m.file_patterns),
        ("allowed_tools", &m.allowed_tools),
    ] {
        if list.is_empty() {
            out.push_str(&format!("{key}: []\n"));
        } else {
            out.push_str(&format!("{key}:\n"));
            for item in list {
                out.push_str(&format!("  - {}\n", quote(item)));
            }
        }
    }
    out.push_str(&format!("priority: {}\n", m.priority));
    out.push_str(&format!("version: {}\n", quote(&m.version)));
    out.push_str("---\n");
    out.push_str(&skill.instructions);
    out
}

/// A YAML double-quoted scalar. Everything outside printable characters is escaped, and so
/// are the characters YAML 1.1 parsers treat as line breaks (NEL, LS, PS) and the BOM, so
/// the text comes back exactly.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}' => {
                out.push(c)
            }
            _ => out.push_str(&format!("\\u{:04x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// Loads every `<dir>/<name>/SKILL.md` of `dirs`; a later directory's skill replaces an
/// earlier one of the same name (the workspace overrides the bundled skills). Skills are
/// returned sorted by name, with the files that could not be used.
pub fn load_dirs(dirs: &[PathBuf]) -> (Vec<Skill>, Vec<SkillIssue>) {
    let mut skills: std::collections::BTreeMap<String, Skill> = Default::default();
    let mut issues = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path().join("SKILL.md")))
            .filter(|p| p.is_file())
            .collect();
        paths.sort();
        for path in paths {
            match load_file(&path) {
                Ok(skill) => {
                    skills.insert(skill.meta.name.clone(), skill);
                }
                Err(issue) => issues.push(issue),
            }
        }
    }
    (skills.into_values().collect(), issues)
}

/// Loads one SKILL.md; the skill's name must be its directory's name.
pub fn load_file(path: &Path) -> Result<Skill, SkillIssue> {
    let issue = |line, message: String| SkillIssue {
        file: path.to_path_buf(),
        line,
        message,
    };
    let meta = std::fs::metadata(path).map_err(|e| issue(None, e.to_string()))?;
    if meta.len() > MAX_SKILL_BYTES {
        return Err(issue(
            None,
            format!("the file is over {MAX_SKILL_BYTES} bytes"),
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| issue(None, e.to_string()))?;
    let skill = parse(&text).map_err(|mut i| {
        i.file = path.to_path_buf();
        i
    })?;
    let dir_name = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if dir_name != skill.meta.name {
        return Err(issue(
            Some(2),
            format!(
                "the skill is named {:?} but its directory is {dir_name:?}",
                skill.meta.name
            ),
        ));
    }
    Ok(skill)
}

/// The built-in fallback when no `general` skillpack is installed: read-only tools only.
pub fn builtin_general(read_only_tools: Vec<String>) -> Skill {
    Skill {
        meta: Frontmatter {
            name: GENERAL_SKILL.into(),
            description: "一般的な質問に答えます（読み取り専用のツールのみ）。General questions, read-only tools.".into(),
            triggers: Vec::new(),
            file_patterns: Vec::new(),
            allowed_tools: read_only_tools,
            priority: 0,
            version: default_version(),
        },
        instructions: "Answer the user's question. You may read files but not change them.\n"
            .into(),
    }
}
