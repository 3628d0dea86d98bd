//! The plan core of Keiri Studio: the plan model and its YAML io, the block catalog, the
//! validator, the dry-run and registering to `designs/`.
//!
//! This crate is pure: no network, no LLM, no UI. It reads the files it is pointed at and
//! writes only through [`register`], atomically.
//!
//! Dependencies, and why:
//! * `saphyr-parser` — a maintained, pure-Rust YAML 1.2 parser whose events carry positions;
//!   we build values from its events ourselves to get line/column per JSON pointer and to
//!   bound alias expansion (see [`yaml`]).
//! * `yaml_serde` (imported as `serde_yaml`) — the maintained fork of the archived
//!   `serde_yaml`, for writing plans; it keeps mapping order.
//! * `serde_path_to_error` — turns a shape error into the JSON pointer of the bad field.
//! * `semver` — "latest version wins" in the catalog.
//! * `keiri-fs` — atomic, never-overwriting writes.

pub mod catalog;
pub mod dry_run;
pub mod expr;
pub mod io;
pub mod model;
pub mod refs;
pub mod register;
pub mod validate;
pub mod yaml;

pub use catalog::{BlockSpec, Catalog, CatalogIssue, PortSpec, TypeSpec, ValueType};
pub use dry_run::{DryRun, DryRunNode, dry_run};
pub use io::{LoadError, LoadedPlan, load_plan, save_plan};
pub use model::{Node, NodeKind, Plan};
pub use register::{RegisterError, designs_index, register};
pub use validate::{Finding, Options, Severity, has_errors, validate};

/// The language of user-facing messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// Japanese, the default.
    #[default]
    Ja,
    En,
}

impl std::str::FromStr for Lang {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ja" | "jp" | "japanese" => Ok(Lang::Ja),
            "en" | "english" => Ok(Lang::En),
            other => Err(format!("unknown language {other:?} (expected ja or en)")),
        }
    }
}
