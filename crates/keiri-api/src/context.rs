use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::settings::SecretStore;

pub use keiri_plan::Lang;

/// Everything a use case needs to know about where it runs.
///
/// Built once by each front-end; cheap to clone.
#[derive(Debug, Clone)]
pub struct Context {
    /// The workspace root; relative paths from outside resolve against it.
    pub workspace: PathBuf,
    /// Catalog directories, lowest precedence first (bundled, then the user's workspace).
    pub catalog_dirs: Vec<PathBuf>,
    /// Template directories, lowest precedence first (bundled, then the user's workspace).
    pub template_dirs: Vec<PathBuf>,
    /// Chat skillpack directories, lowest precedence first (bundled, then the user's
    /// workspace `skillpacks/`).
    pub skillpack_dirs: Vec<PathBuf>,
    /// Where registered plans go.
    pub designs_dir: PathBuf,
    /// Default message language when a request does not say.
    pub lang: Lang,
    /// Roots outside paths must stay inside (the workspace by default).
    pub allowed_roots: Vec<PathBuf>,
    /// What `workbook_patch` does with an existing output when the request does not say
    /// (the CLI/server `--on-conflict` flag); `None` uses the patch engine's fallback.
    pub on_conflict_default: Option<keiri_xlsx::OnConflict>,
    /// Deny globs for outside paths (`--deny`), e.g. `**/.git/**` or `*.key`.
    pub deny: Vec<String>,
    /// True when request paths are the user's own command-line arguments (the CLI without
    /// `--root`): [`Context::path_policy`] then accepts any location. Never set by the HTTP
    /// server, the MCP server or the desktop app, whose callers stay inside the roots.
    pub trust_arguments: bool,
    /// Environment variable names the user allowed `${env.X}` in plan runs to read, from the
    /// command line (`--allow-env`); the saved settings' `allow_env` adds to them. A request
    /// may narrow this list, never widen it (see [`crate::run`]).
    pub allow_env: Vec<String>,
    /// Where the studio's settings file lives ([`crate::settings`]); `None` when the platform
    /// has no user config directory and `KEIRI_CONFIG_DIR` is unset.
    pub config_dir: Option<PathBuf>,
    /// Where API keys are kept: the OS keychain, unless a test injects its own store.
    pub secrets: Arc<dyn SecretStore>,
    /// The runs in progress in this process, by run id, so `run_cancel` can stop one; shared
    /// by every clone of the context.
    pub running: crate::run::Running,
    /// A person waits at a window that asks again (the desktop app, `keiri serve`): a candidate
    /// search then answers with BM25 at once while the embedding model is still loading, with
    /// `embedding_progress` telling the window to ask again. One-shot callers (the CLI, MCP)
    /// wait for the model instead.
    pub interactive: bool,
    /// The catalog and templates, loaded once and reloaded only when a spec or template file
    /// changes; shared by every clone of the context.
    pub specs: Arc<keiri_plan::Workspace>,
    /// Set when the caller of the current call goes away: the HTTP connection of a plain
    /// call closes. Each call's blocking work gets its own child ([`crate::stream::blocking`]),
    /// and the work that can stop part-way (a workbook patch) looks at it; a stopped patch
    /// writes nothing.
    pub cancel: keiri_llm::CancellationToken,
    /// Told how far the embedding of the workspace's own blocks has got while a one-shot
    /// caller waits for it (a terminal's progress bar); `None` tells no one.
    pub embedding_progress: Option<ProgressHook>,
}

/// A callback that is told a background task's progress ([`Context::embedding_progress`]).
#[derive(Clone)]
pub struct ProgressHook(pub Arc<dyn Fn(keiri_search::Progress) + Send + Sync>);

impl std::fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressHook")
    }
}

impl Context {
    /// A context for `workspace` with the default layout: the bundled catalog (if found),
    /// then `<workspace>/block_specs`, and `<workspace>/designs`.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        let mut catalog_dirs = Vec::new();
        if let Some(bundled) = bundled_catalog_dir() {
            catalog_dirs.push(bundled);
        }
        let own = workspace.join("block_specs");
        if !catalog_dirs.iter().any(|d| same_dir(d, &own)) {
            catalog_dirs.push(own);
        }
        let mut template_dirs: Vec<PathBuf> = bundled_templates_dir().into_iter().collect();
        let own_templates = workspace.join("templates");
        if !template_dirs.iter().any(|d| same_dir(d, &own_templates)) {
            template_dirs.push(own_templates);
        }
        // The agreed place for a user's own templates, beside the plans they registered.
        template_dirs.push(workspace.join("designs").join("templates"));
        let mut skillpack_dirs: Vec<PathBuf> = bundled_skillpacks_dir().into_iter().collect();
        let own_skillpacks = workspace.join("skillpacks");
        if !skillpack_dirs.iter().any(|d| same_dir(d, &own_skillpacks)) {
            skillpack_dirs.push(own_skillpacks);
        }
        Context {
            template_dirs,
            skillpack_dirs,
            designs_dir: workspace.join("designs"),
            allowed_roots: vec![workspace.clone()],
            workspace,
            catalog_dirs,
            lang: Lang::Ja,
            on_conflict_default: None,
            deny: Vec::new(),
            trust_arguments: false,
            allow_env: Vec::new(),
            config_dir: crate::settings::default_config_dir(),
            secrets: crate::settings::default_secret_store(),
            running: crate::run::Running::default(),
            interactive: false,
            specs: Arc::new(keiri_plan::Workspace::new()),
            cancel: keiri_llm::CancellationToken::new(),
            embedding_progress: None,
        }
    }

    /// Replaces the settings directory (tests; `KEIRI_CONFIG_DIR` does the same from outside).
    pub fn with_config_dir(mut self, dir: PathBuf) -> Self {
        self.config_dir = Some(dir);
        self
    }

    /// Replaces the secret store (tests inject an in-memory one).
    pub fn with_secrets(mut self, secrets: Arc<dyn SecretStore>) -> Self {
        self.secrets = secrets;
        self
    }

    /// Replaces the catalog directories (used by `--catalog`).
    pub fn with_catalog_dirs(mut self, dirs: Vec<PathBuf>) -> Self {
        self.catalog_dirs = dirs;
        self
    }

    pub fn with_lang(mut self, lang: Lang) -> Self {
        self.lang = lang;
        self
    }

    pub fn with_designs_dir(mut self, dir: PathBuf) -> Self {
        self.designs_dir = dir;
        self
    }

    /// The path policy for the paths in a request: [`Context::tool_path_policy`], except on
    /// the command line without `--root` ([`Context::trust_arguments`]), where the user's own
    /// arguments may name any file (their `--deny` globs still apply).
    ///
    /// An invalid deny glob fails closed: the policy then has no roots and refuses every path
    /// (front-ends check the globs when they start, so this only guards a bad context).
    pub fn path_policy(&self) -> keiri_fs::PathPolicy {
        if !self.trust_arguments {
            return self.tool_path_policy();
        }
        keiri_fs::PathPolicy::trusted(&self.workspace)
            .with_deny(self.deny.iter().cloned())
            .unwrap_or_else(|_| keiri_fs::PathPolicy::new(Vec::<PathBuf>::new()))
    }

    /// The path policy for callers that are not the user at a terminal — HTTP, MCP and the
    /// chat agent's tools, whatever front-end runs them: inside the allowed roots, and never
    /// a `.env` file ([`DEFAULT_DENY`]) or the settings folder. These denials are built in,
    /// not settings, so no request can lift them.
    pub fn tool_path_policy(&self) -> keiri_fs::PathPolicy {
        let policy = keiri_fs::PathPolicy::new(&self.allowed_roots)
            .with_deny(
                DEFAULT_DENY
                    .iter()
                    .map(|s| s.to_string())
                    .chain(self.deny.iter().cloned()),
            )
            .unwrap_or_else(|_| keiri_fs::PathPolicy::new(Vec::<PathBuf>::new()));
        match &self.config_dir {
            Some(dir) => policy.with_denied_dir(dir),
            None => policy,
        }
    }
}

/// Globs no HTTP, MCP or agent caller, and no plan run on any surface, may read or write,
/// whatever the flags: `.env` files hold API keys and the LLM base URL, so writing one
/// redirects every later model call (with the key) to whoever wrote it; private keys and
/// certificates stores are secrets by their nature.
pub const DEFAULT_DENY: &[&str] = &[
    "**/.env",
    "**/.env.*",
    "**/*.pem",
    "**/*.key",
    "**/*.p12",
    "**/*.pfx",
    "**/id_rsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
];

fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

/// The catalog shipped with the studio: `KEIRI_BUNDLED_CATALOG`, else `block_specs/` beside
/// the executable or one of its ancestors (an installed app keeps it next to the binary; a
/// development build finds the repository's).
pub fn bundled_catalog_dir() -> Option<PathBuf> {
    bundled_dir("KEIRI_BUNDLED_CATALOG", "block_specs")
}

/// The templates shipped with the studio: `KEIRI_BUNDLED_TEMPLATES`, else `templates/`
/// beside the executable or one of its ancestors.
pub fn bundled_templates_dir() -> Option<PathBuf> {
    bundled_dir("KEIRI_BUNDLED_TEMPLATES", "templates")
}

/// The chat skillpacks shipped with the studio: `KEIRI_BUNDLED_SKILLPACKS`, else
/// `skillpacks/` beside the executable or one of its ancestors.
pub fn bundled_skillpacks_dir() -> Option<PathBuf> {
    bundled_dir("KEIRI_BUNDLED_SKILLPACKS", "skillpacks")
}

fn bundled_dir(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(env) {
        return Some(PathBuf::from(dir));
    }
    let beside_exe = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .skip(1)
            .take(5)
            .map(|d| d.join(name))
            .find(|d| d.is_dir())
    });
    // An installed app keeps its bundled files in the installer's resource directory
    // (`/usr/lib/Keiri Studio/` for the .deb, `Contents/Resources/` on macOS).
    let beside_exe = beside_exe.or_else(|| {
        keiri_search::embed::installed_resource_dirs()
            .into_iter()
            .map(|d| d.join(name))
            .find(|d| d.is_dir())
    });
    // A development build whose target directory is outside the repository
    // (`CARGO_TARGET_DIR`) still finds the repository it was built from.
    beside_exe.or_else(|| {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(name);
        repo.is_dir().then_some(repo)
    })
}
