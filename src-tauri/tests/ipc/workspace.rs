use std::ffi::OsString;
use std::path::PathBuf;

use keiri_studio::workspace_dir;

// check(KEIRI_WORKSPACE value, current dir, expected workspace or error code)
fn check(env: Option<&str>, cwd: Result<PathBuf, ()>, expect: Result<PathBuf, &str>) {
    let cwd = cwd.map_err(|()| std::io::Error::other("cwd gone"));
    let got = workspace_dir(env.map(OsString::from), cwd).map_err(|e| e.code());
    assert_eq!(got, expect, "env {env:?}");
}

#[test]
fn workspace_comes_from_the_env_then_the_current_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    std::fs::create_dir(root.join("books")).unwrap();
    crate::write_file(&root.join("file.txt"), "not a directory");
    let abs = root.join("books");

    check(None, Ok(root.clone()), Ok(root.clone()));
    check(Some(""), Ok(root.clone()), Ok(root.clone()));
    check(
        Some(abs.to_str().unwrap()),
        Ok(root.clone()),
        Ok(abs.clone()),
    );
    check(Some("books"), Ok(root.clone()), Ok(root.join("books")));
    // An absolute path needs no current directory.
    check(Some(abs.to_str().unwrap()), Err(()), Ok(abs.clone()));
    check(None, Err(()), Err("WORKSPACE_UNKNOWN"));
    check(Some("books"), Err(()), Err("WORKSPACE_UNKNOWN"));
    check(
        Some("missing"),
        Ok(root.clone()),
        Err("WORKSPACE_NOT_A_DIRECTORY"),
    );
    check(
        Some("file.txt"),
        Ok(root.clone()),
        Err("WORKSPACE_NOT_A_DIRECTORY"),
    );
}
