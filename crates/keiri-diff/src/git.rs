//! The git backend: `git apply --whitespace=fix --include <file> -`, run through an injectable
//! [`Spawner`] so the decision logic can be tested with fakes.
//!
//! Git never touches the workspace. It runs in a scratch directory holding only a copy of the
//! target file, with the user's and the system's git configuration switched off and every
//! `GIT_*` variable of our environment removed, so that
//!
//! * the result does not depend on `core.autocrlf`, `core.whitespace`, `.gitattributes` or a
//!   repository the workspace happens to sit in (it is the same on every machine, and the same
//!   as the native applier's);
//! * git cannot create, delete or rename anything in the workspace, whatever the patch says;
//! * the write to the real file is the pipeline's atomic write, not git's unlink-and-recreate.

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::apply::{Backend, Run, TargetFile, read_limited};
use crate::patch::PreparedPatch;
use crate::{BackendKind, Error};

/// How long `git apply` may run before it is killed.
pub const DEFAULT_GIT_TIMEOUT: Duration = Duration::from_secs(60);

/// Stderr kept from a process; the rest is read and dropped so the child never blocks.
const MAX_STDERR: usize = 64 * 1024;

/// How long to wait for the end of stderr once the process has ended.
const STDERR_GRACE: Duration = Duration::from_secs(2);

/// One process to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: OsString,
    pub args: Vec<OsString>,
    pub cwd: PathBuf,
    /// Variables to set.
    pub env: Vec<(OsString, OsString)>,
    /// Variables to remove from the inherited environment.
    pub env_remove: Vec<OsString>,
    /// Written to the process's standard input, which is then closed.
    pub stdin: Vec<u8>,
    /// The process is killed when it runs longer.
    pub timeout: Duration,
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessOutput {
    /// The exit code; `None` when the process was killed (by the timeout or a signal).
    pub exit_code: Option<i32>,
    /// The start of its standard error.
    pub stderr: Vec<u8>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
}

/// Starts processes; the real one is [`SystemSpawner`], tests use fakes.
pub trait Spawner {
    /// Runs the invocation to completion (or its timeout). An `Err` means the process could not
    /// be started at all, e.g. git is not installed.
    fn run(&self, invocation: &Invocation) -> std::io::Result<ProcessOutput>;
}

impl<T: Spawner + ?Sized> Spawner for &T {
    fn run(&self, invocation: &Invocation) -> std::io::Result<ProcessOutput> {
        (**self).run(invocation)
    }
}

/// Runs real processes with `std::process`.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemSpawner;

impl Spawner for SystemSpawner {
    fn run(&self, invocation: &Invocation) -> std::io::Result<ProcessOutput> {
        let mut command = Command::new(&invocation.program);
        command
            .args(&invocation.args)
            .current_dir(&invocation.cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for key in &invocation.env_remove {
            command.env_remove(key);
        }
        for (key, value) in &invocation.env {
            command.env(key, value);
        }
        let mut child = command.spawn()?;

        // Standard input and error are served from their own threads: a child blocked writing
        // a full stderr pipe while we block writing its stdin would deadlock. The threads are
        // never joined unconditionally: a grandchild that inherited the pipes could keep them
        // open long after the child is gone, and that must not hang us.
        let stdin = child.stdin.take();
        let input = invocation.stdin.clone();
        std::thread::spawn(move || {
            if let Some(mut pipe) = stdin {
                // A child that exits early closes the pipe; its exit status tells the story.
                let _ = pipe.write_all(&input);
            }
        });
        let stderr = child.stderr.take();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(pipe) = stderr {
                let mut limited = pipe.take(MAX_STDERR as u64);
                let _ = limited.read_to_end(&mut kept);
                // Hand over what we have now; the rest is only drained so the writer never
                // blocks.
                let _ = sender.send(kept);
                let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
            } else {
                let _ = sender.send(kept);
            }
        });

        let deadline = Instant::now() + invocation.timeout;
        let mut pause = Duration::from_millis(1);
        let (status, timed_out) = loop {
            let waited = child.try_wait();
            if let Ok(Some(status)) = waited {
                break (Some(status), false);
            }
            if waited.is_err() || Instant::now() >= deadline {
                // Waiting failed or took too long: do not leave the process running.
                let _ = child.kill();
                let _ = child.wait();
                break (None, waited.is_ok());
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        };
        let stderr = receiver.recv_timeout(STDERR_GRACE).unwrap_or_default();
        Ok(ProcessOutput {
            exit_code: status.and_then(|s| s.code()),
            stderr,
            timed_out,
        })
    }
}

/// `git apply` as a [`Backend`].
#[derive(Debug, Clone)]
pub struct GitBackend<S = SystemSpawner> {
    spawner: S,
    program: OsString,
    timeout: Duration,
}

impl GitBackend<SystemSpawner> {
    /// `git` from `PATH`, run for real.
    pub fn new() -> Self {
        GitBackend::with_spawner(SystemSpawner)
    }
}

impl Default for GitBackend<SystemSpawner> {
    fn default() -> Self {
        GitBackend::new()
    }
}

impl<S: Spawner> GitBackend<S> {
    pub fn with_spawner(spawner: S) -> Self {
        GitBackend {
            spawner,
            program: OsString::from("git"),
            timeout: DEFAULT_GIT_TIMEOUT,
        }
    }

    /// Another git executable.
    pub fn program(mut self, program: impl Into<OsString>) -> Self {
        self.program = program.into();
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The invocation for a scratch directory `root` holding the copy at `rel`.
    pub fn invocation(&self, root: &Path, rel: &str, patch: &PreparedPatch) -> Invocation {
        let ceiling = root.parent().unwrap_or(root).as_os_str().to_os_string();
        let null_device = if cfg!(windows) { "NUL" } else { "/dev/null" };
        let env = [
            // Do not look for a repository above the scratch directory.
            (OsString::from("GIT_CEILING_DIRECTORIES"), ceiling),
            (OsString::from("GIT_CONFIG_NOSYSTEM"), OsString::from("1")),
            (
                OsString::from("GIT_CONFIG_GLOBAL"),
                OsString::from(null_device),
            ),
            // English messages, for the summary in APPLY_FAILED.
            (OsString::from("LC_ALL"), OsString::from("C")),
            (OsString::from("LANGUAGE"), OsString::from("C")),
        ]
        .to_vec();
        let env_remove = std::env::vars_os()
            .map(|(key, _)| key)
            .filter(|key| key.to_string_lossy().starts_with("GIT_"))
            .filter(|key| !env.iter().any(|(k, _)| k == key))
            .collect();
        Invocation {
            program: self.program.clone(),
            args: ["apply", "--whitespace=fix", "--include"]
                .iter()
                .map(OsString::from)
                .chain([OsString::from(glob_escape(rel)), OsString::from("-")])
                .collect(),
            cwd: root.to_path_buf(),
            env,
            env_remove,
            stdin: patch.to_git_diff(rel).into_bytes(),
            timeout: self.timeout,
        }
    }
}

/// `--include` takes a wildmatch pattern; the path must match only itself.
fn glob_escape(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The first lines of a process's stderr, on one line.
pub(crate) fn summarize(stderr: &[u8]) -> String {
    const MAX_LINES: usize = 8;
    const MAX_CHARS: usize = 800;
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let mut summary = lines
        .iter()
        .take(MAX_LINES)
        .copied()
        .collect::<Vec<_>>()
        .join("; ");
    if lines.len() > MAX_LINES {
        summary.push_str(&format!("; … ({} more lines)", lines.len() - MAX_LINES));
    }
    if summary.chars().count() > MAX_CHARS {
        summary = summary.chars().take(MAX_CHARS).collect::<String>() + "…";
    }
    summary
}

impl<S: Spawner> Backend for GitBackend<S> {
    fn kind(&self) -> BackendKind {
        BackendKind::Git
    }

    fn apply(&self, file: &TargetFile<'_>, patch: &PreparedPatch) -> Result<Run, Error> {
        let scratch = tempfile::Builder::new()
            .prefix("keiri-apply-")
            .tempdir()
            .map_err(Error::io(
                "creating a scratch directory in",
                std::env::temp_dir(),
            ))?;
        // Canonical, so the ceiling is the real parent even where the temp dir is a symlink.
        let root = scratch
            .path()
            .canonicalize()
            .map_err(Error::io("resolving", scratch.path()))?;
        let copy = file
            .rel
            .split('/')
            .fold(root.clone(), |path, part| path.join(part));
        if let Some(parent) = copy.parent() {
            std::fs::create_dir_all(parent).map_err(Error::io("creating", parent))?;
        }
        keiri_fs::write_atomic(&copy, file.content)
            .map_err(|e| Error::internal(format!("writing the scratch copy: {e}")))?;

        let invocation = self.invocation(&root, file.rel, patch);
        let output = self.spawner.run(&invocation).map_err(|e| {
            Error::internal(format!(
                "could not run {}: {e}",
                OsStr::to_string_lossy(&self.program)
            ))
        })?;
        let summary = summarize(&output.stderr);
        let Some(exit_code) = output.exit_code else {
            let why = if output.timed_out {
                format!("timed out after {} s", self.timeout.as_secs())
            } else {
                "was killed".to_string()
            };
            return Err(Error::internal(format!("git apply {why}: {summary}")));
        };
        let content = match read_limited(&copy, file.output_limit) {
            Ok(content) => content,
            Err(e) => {
                return Err(Error::internal(format!(
                    "git apply left no readable result for {}: {e}",
                    file.rel
                )));
            }
        };
        let messages = if exit_code == 0 && !summary.is_empty() {
            vec![format!("git: {summary}")]
        } else {
            Vec::new()
        };
        Ok(Run {
            exit_code,
            summary,
            content,
            messages,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_summaries() {
        assert_eq!(glob_escape("a/b[1]*.txt"), "a/b\\[1\\]\\*.txt");
        assert_eq!(
            summarize(b"error: patch failed: a.txt:3\n\nerror: a.txt: patch does not apply\n"),
            "error: patch failed: a.txt:3; error: a.txt: patch does not apply"
        );
        let many: String = (0..20).map(|i| format!("line {i}\n")).collect();
        assert!(summarize(many.as_bytes()).ends_with("(12 more lines)"));
    }
}
