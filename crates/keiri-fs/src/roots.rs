//! Which folders may be the workspace: the root every path from outside must stay inside.

use std::path::Path;

/// Folders that hold the operating system: a workspace there would put system files in reach
/// of every tool. Compared without regard to case (Windows, macOS).
const SYSTEM_DIRS: &[&str] = &[
    "/etc",
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/boot",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/lib",
    "/var/run",
    "/System",
    "/Library",
    "/private/etc",
    "/private/var/db",
    "C:\\Windows",
    "C:\\Program Files",
    "C:\\Program Files (x86)",
    "C:\\ProgramData",
];

/// Folders that hold everyone's (or the system's) files, refused as the workspace themselves
/// though a project folder inside one is fine (`/tmp/book-closing`, `/home/sato/keiri`).
const SHARED_DIRS: &[&str] = &[
    "/var",
    "/tmp",
    "/var/tmp",
    "/root",
    "/home",
    "/Users",
    "/opt",
    "/srv",
    "/mnt",
    "/media",
    "/private",
    "/private/tmp",
    "/private/var",
    "C:\\Users",
];

/// What makes `dir` unfit as the workspace, if anything: the file-system root, the home folder
/// itself (every dotfile and key in reach), or a system folder or anything inside one. The
/// workspace is the root every HTTP, MCP and agent path must stay inside (a [`PathPolicy`]
/// root), so it must be a project folder. `home` is the user's home folder, when known.
///
/// [`PathPolicy`]: crate::PathPolicy
pub fn unfit_root(dir: &Path, home: Option<&Path>) -> Option<&'static str> {
    let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let lower = |p: &Path| -> Vec<String> {
        p.components()
            .map(|c| c.as_os_str().to_string_lossy().to_lowercase())
            .collect()
    };
    let same = |a: &Path, b: &Path| lower(a) == lower(b);
    let inside = |p: &Path, prefix: &Path| {
        let (p, prefix) = (lower(p), lower(prefix));
        p.len() >= prefix.len() && p[..prefix.len()] == prefix[..]
    };
    for candidate in [dir, canonical.as_path()] {
        if candidate.parent().is_none() {
            return Some("the file-system root");
        }
        if let Some(home) = home
            && (same(candidate, home) || home.canonicalize().is_ok_and(|h| same(candidate, &h)))
        {
            return Some("the home folder itself");
        }
        if SYSTEM_DIRS
            .iter()
            .any(|sys| inside(candidate, Path::new(sys)))
            || SHARED_DIRS
                .iter()
                .any(|shared| same(candidate, Path::new(shared)))
        {
            return Some("a system folder");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule itself; keiri-api's `settings_save` refusing these folders is tested there.
    #[test]
    fn the_root_the_home_folder_and_system_folders_are_refused_as_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        std::fs::create_dir_all(home.join("project")).unwrap();
        for dir in [
            "/",
            "/etc",
            "/usr/share",
            "/proc",
            "/dev",
            "/sys",
            "/var",
            "/tmp",
            "/tmp/",
            "/root",
            "/home",
            "/var/tmp",
        ] {
            assert!(
                unfit_root(Path::new(dir), Some(home.as_path())).is_some(),
                "{dir}"
            );
        }
        assert!(unfit_root(&home, Some(home.as_path())).is_some());
        assert!(unfit_root(&home.join("project"), Some(home.as_path())).is_none());
        // A project folder inside a shared folder is fine (the test workspaces live in one).
        assert!(unfit_root(Path::new("/tmp/book-closing"), None).is_none());
        assert!(unfit_root(Path::new("/home/sato/keiri"), None).is_none());
        assert!(unfit_root(dir.path(), None).is_none());
        assert!(unfit_root(Path::new("C:\\windows"), None).is_some());
    }
}
