//! `apply_patch`: applies one unified diff to one file in the workspace, once.
//!
//! This is the edit tool of the chat agent (a model proposes a patch to a plan, a template or
//! any text file) and of `keiri apply-patch`. The pipeline ([`apply_patch`]) is fixed:
//! validate the input → resolve the path through the workspace's [`keiri_fs::PathPolicy`]
//! (inside the workspace after canonicalisation, no symlink escape) and check that it is a file
//! of at most 10 MiB, before any process starts → SHA-256 of the content → apply → SHA-256
//! again → decide → write atomically. Errors carry stable codes ([`Error::code`]):
//! `INVALID_ARGUMENT`, `PATH_DENIED`, `NOT_FOUND`, `FILE_TOO_LARGE`, `APPLY_FAILED`,
//! `CHANGE_CONFLICT`, `INTERNAL`.
//!
//! The write is a compare-and-swap and never loses an update: the file's write lock
//! ([`keiri_fs::lock`]) is held from the read to the rename, so concurrent calls (threads of one
//! `keiri serve`, or several keiri processes) queue up and each applies to the current content;
//! just before the rename the file is compared with what was read, and a change by a writer
//! that takes no lock (an editor) is refused with `CHANGE_CONFLICT` instead of being
//! overwritten. The one remaining window is that writer replacing the file between the
//! comparison and the rename (see `keiri-fs`). Temp files are `.<name>.keiri-tmp-<random>`
//! beside the file; a write first sweeps the directory of those a killed writer left.
//!
//! Two [`Backend`]s apply the patch, behind one decision logic:
//!
//! * [`NativeBackend`] (the default; accountants' PCs have no git) is a port of
//!   `git apply --whitespace=fix` for UTF-8 text: hunk offsets, anchoring, whitespace
//!   correction of added lines and of context that only matches after correction, blank lines
//!   at the end of the file. It refuses files that are not UTF-8.
//! * [`GitBackend`] runs `git apply --whitespace=fix --include <file> -` through an injectable
//!   [`Spawner`], in a scratch directory with git's configuration switched off.
//!
//! Before either runs, the patch is parsed and reduced to the hunks for the target file (see
//! [`patch`]); creating, deleting, renaming, mode changes and binary patches are refused, and
//! the hunks are fitted to the file's line endings and byte order mark, which are kept as the
//! file has them. On `git diff` output the two backends write byte-identical files; the
//! conformance test holds them to that over a scripted repository history.
//!
//! The crate must not know about plans, the agent's scopes or approval; it offers a dry run
//! ([`Mode::DryRun`]) and [`commit`] so that an approval gate can show a change first and
//! write it later. It must not write anywhere but the target file, and only through
//! `keiri-fs`.
//!
//! Dependencies: `diffy` parses unified and `git diff` patches (quoted names, extended
//! headers, binary markers), so only the applier is ours; `sha2` gives the SHA-256 of the
//! decision; `tempfile` makes the git backend's scratch directory; `serde`/`schemars` give the
//! tool contract's JSON and schemas; `keiri-fs` the path policy and atomic writes.

mod apply;
mod backend_kind;
mod error;
pub mod git;
pub mod hash;
pub mod native;
pub mod patch;
mod tool;
mod whitespace;

pub use apply::{
    Applied, Backend, MAX_FILE_BYTES, MAX_PATCH_BYTES, Mode, NativeBackend, Options, Run,
    TargetFile, apply_patch, backend, commit,
};
pub use backend_kind::BackendKind;
pub use error::Error;
pub use git::{GitBackend, Invocation, ProcessOutput, Spawner, SystemSpawner};
pub use hash::{ContentHasher, Sha256Hasher};
pub use tool::{
    ApplyPatchInput, ApplyPatchRequest, ApplyPatchResult, TOOL_DESCRIPTION, TOOL_NAME,
    ToolDefinition, tool_definition, tool_parameters,
};
