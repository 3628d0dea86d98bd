//! A plan run stays inside the same walls as the rest of the studio (issue 37): the path
//! policy for every file a block reads or writes, `${env.X}` only for names the user allowed
//! and their values never echoed back.

use std::path::{Path, PathBuf};

use keiri_api::*;
use keiri_api::{ApiError, CancellationToken, Context};

struct Walls {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    ctx: Context,
}

const SECRET: &str = "TOP-SECRET-0xC0FFEE";

fn walls() -> Walls {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    let config = dir.path().join("config");
    for d in [&ws, &outside, &config] {
        std::fs::create_dir_all(d).unwrap();
    }
    let put = |p: &Path, text: &str| keiri_fs::write_atomic(p, text.as_bytes()).unwrap();
    put(&outside.join("secret.csv"), &format!("a\n{SECRET}\n"));
    put(&ws.join(".env"), &format!("a\n{SECRET}\n"));
    put(&ws.join("server.key"), &format!("a\n{SECRET}\n"));
    put(&ws.join("data.csv"), "a\n1\n");
    put(&config.join("settings.csv"), &format!("a\n{SECRET}\n"));
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    let ws = ws.canonicalize().unwrap();
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    let ctx = Context::new(&ws)
        .with_catalog_dirs(vec![catalog])
        .with_config_dir(config.canonicalize().unwrap());
    Walls {
        outside: outside.canonicalize().unwrap(),
        ws,
        ctx,
        _dir: dir,
    }
}

fn run(ctx: &Context, req: PlanRunRequest) -> Result<PlanRunResponse, ApiError> {
    crate::support::drive(&mut |_| {}, async |sink| {
        plan_run(ctx, req, sink, &CancellationToken::new()).await
    })
}

fn read_plan(path: &str) -> String {
    format!(
        "id: probe\ngraph:\n  - {{id: read, block: csv.read, in: {{path: {}}}}}\n",
        serde_json::to_string(path).unwrap()
    )
}

/// Everything a caller can read back about a run: the answer and every record file.
fn everything(w: &Walls, res: &PlanRunResponse) -> String {
    let mut text = format!("{res:?}");
    let mut stack = vec![w.ws.join(&res.run_dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                text.push_str(&String::from_utf8_lossy(&std::fs::read(e.path()).unwrap()));
            }
        }
    }
    text
}

/// Paths a hostile plan tries: out of the workspace every way there is, the secrets inside it,
/// the settings folder, a symlink out, and a path too long for the system.
fn corpus(w: &Walls) -> Vec<String> {
    let secret = w.outside.join("secret.csv").display().to_string();
    let mut corpus = vec![
        "../outside/secret.csv".to_string(),
        "../../../../../../etc/passwd".to_string(),
        secret.clone(),
        "/etc/passwd".to_string(),
        "/proc/self/environ".to_string(),
        "..\\outside\\secret.csv".to_string(),
        "sub/../../outside/secret.csv".to_string(),
        "%2e%2e/outside/secret.csv".to_string(),
        format!("file://{secret}"),
        "~/.bashrc".to_string(),
        ".env".to_string(),
        ".ENV".to_string(),
        "server.key".to_string(),
        w.ctx
            .config_dir
            .clone()
            .unwrap()
            .join("settings.csv")
            .display()
            .to_string(),
        format!("{}/secret.csv", "a/".repeat(3000)),
    ];
    if cfg!(unix) {
        corpus.push("link/secret.csv".to_string());
    }
    corpus
}

#[test]
fn the_traversal_corpus_read_by_a_plan_run_is_path_denied() {
    let w = walls();
    let secret = w.outside.join("secret.csv").display().to_string();
    let corpus = corpus(&w);
    let mut failures = Vec::new();
    for path in &corpus {
        let req = PlanRunRequest {
            yaml: Some(read_plan(path)),
            ..Default::default()
        };
        match run(&w.ctx, req) {
            Ok(res) => {
                let all = everything(&w, &res);
                let code = res.failures.first().map(|f| f.code.as_str());
                if code != Some("PATH_DENIED") || all.contains(SECRET) {
                    failures.push(format!("{path:?}: {code:?} {res:?}"));
                }
            }
            Err(e) => failures.push(format!("{path:?}: {} {}", e.code.as_str(), e.message)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // What worked before still works: a workspace file, and a file named as an input even
    // outside the workspace on the command line (the user's own argument).
    let ok = run(
        &w.ctx,
        PlanRunRequest {
            yaml: Some(read_plan("data.csv")),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ok.status, keiri_run::RunStatus::Finished, "{ok:?}");
    let mut cli = w.ctx.clone();
    cli.trust_arguments = true;
    let named = run(
        &cli,
        PlanRunRequest {
            yaml: Some("id: named\nvars: {src: x}\ngraph:\n  - {id: read, block: csv.read, in: {path: \"${vars.src}\"}}\n".into()),
            inputs: [("src".to_string(), secret.clone())].into_iter().collect(),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(named.status, keiri_run::RunStatus::Finished, "{named:?}");
    // … but only that file: its neighbour stays outside.
    let neighbour = run(
        &cli,
        PlanRunRequest {
            yaml: Some(read_plan(
                &w.outside.join("other.csv").display().to_string(),
            )),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(neighbour.failures[0].code, "PATH_DENIED", "{neighbour:?}");
}

/// The corpus through every block that reads a file the plan names (issue 37, item 9): each
/// path is `PATH_DENIED`, and the secret is in nothing a caller can read back.
#[test]
fn every_block_that_reads_a_file_refuses_the_corpus() {
    let w = walls();
    type Build = fn(&str) -> serde_json::Value;
    let readers: [(&str, Build); 13] = [
        ("csv.read", |p| serde_json::json!({"path": p})),
        ("bank.read_statement", |p| serde_json::json!({"path": p})),
        ("excel.read_workbook", |p| serde_json::json!({"path": p})),
        ("pdf.extract_text", |p| serde_json::json!({"path": p})),
        ("docx.extract_text", |p| serde_json::json!({"path": p})),
        ("file.unzip_evidence", |p| serde_json::json!({"path": p})),
        ("file.list_folder", |p| serde_json::json!({"folder": p})),
        (
            "excel.patch_workbook",
            |p| serde_json::json!({"xlsx_path": p, "operations": []}),
        ),
        (
            "excel.write_table",
            |p| serde_json::json!({"rows": [{"a": 1}], "base_workbook": p}),
        ),
        ("evidence.archive", |p| serde_json::json!({"files": [p]})),
        (
            "control.audit_log",
            |p| serde_json::json!({"event": "probe", "evidence_files": [p]}),
        ),
        // The model blocks (a model is configured below: nothing listens there).
        (
            "ai.extract_fields",
            |p| serde_json::json!({"documents": [{"path": p}], "output_schema": {"type": "object", "properties": {"total": {"type": "number"}}}}),
        ),
        (
            "ai.summarize_documents",
            |p| serde_json::json!({"documents": [{"path": p}]}),
        ),
    ];
    // A model for the ai.* blocks, so that they get as far as their documents; the secret
    // stays in `.env`.
    keiri_fs::write_atomic(
        &w.ws.join(".env"),
        format!(
            "KEIRI_LLM_BASE_URL=http://127.0.0.1:9/v1\nKEIRI_LLM_MAX_RETRIES=0\nSECRET={SECRET}\n"
        )
        .as_bytes(),
    )
    .unwrap();
    let mut paths = corpus(&w);
    // Folders too, for the blocks that take one.
    paths.extend([
        "../outside".to_string(),
        w.outside.display().to_string(),
        "/etc".to_string(),
    ]);
    if cfg!(unix) {
        paths.push("link".to_string());
    }
    let mut failures = Vec::new();
    for (block, build) in readers {
        for path in &paths {
            let yaml = format!(
                "id: probe\ngraph:\n  - {{id: read, block: {block}, in: {}}}\n",
                build(path)
            );
            let req = PlanRunRequest {
                yaml: Some(yaml),
                ..Default::default()
            };
            match run(&w.ctx, req) {
                Ok(res) => {
                    let code = res.failures.first().map(|f| f.code.as_str());
                    if code != Some("PATH_DENIED") || everything(&w, &res).contains(SECRET) {
                        failures.push(format!("{block} {path:?}: {code:?} {res:?}"));
                    }
                }
                Err(e) => failures.push(format!(
                    "{block} {path:?}: {} {}",
                    e.code.as_str(),
                    e.message
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_run_with_write_writes_to_the_workspace_and_nowhere_else() {
    let w = walls();
    let plan = |to: &str| {
        format!(
            "id: writer\ngraph:\n  - {{id: read, block: csv.read, in: {{path: data.csv}}, out: {{rows: rows}}}}\n  - {{id: save, block: csv.write, in: {{rows: \"${{read.rows}}\", out_dir: {}, out_name: result.csv}}}}\n",
            serde_json::to_string(to).unwrap()
        )
    };
    let req = |to: &str| PlanRunRequest {
        yaml: Some(plan(to)),
        write: true,
        ..Default::default()
    };
    let mut cli = w.ctx.clone();
    cli.trust_arguments = true;
    let ok = run(&cli, req("outputs")).unwrap();
    assert_eq!(ok.status, keiri_run::RunStatus::Finished, "{ok:?}");
    assert!(w.ws.join("outputs/result.csv").is_file());
    for to in [
        "../outside".to_string(),
        w.outside.display().to_string(),
        "link".to_string(),
    ] {
        let res = run(&cli, req(&to)).unwrap();
        assert_eq!(res.failures[0].code, "PATH_DENIED", "{to}: {res:?}");
    }
    assert_eq!(
        std::fs::read_dir(&w.outside).unwrap().count(),
        1,
        "nothing was written outside"
    );
}

#[test]
fn env_names_come_from_the_user_and_their_values_never_come_back() {
    let w = walls();
    // A name the user did not allow, asked for by the request: refused with a code.
    let plan = "id: env\ngraph:\n  - {id: e, block: csv.read, in: {path: \"${env.PATH}\"}}\n";
    let req = || PlanRunRequest {
        yaml: Some(plan.into()),
        allow_env: vec!["PATH".into()],
        ..Default::default()
    };
    let err = run(&w.ctx, req()).unwrap_err();
    assert_eq!(err.code, ErrorCode::EnvNotAllowed, "{}", err.message);
    // Without the request naming it, the reference is refused at run time.
    let res = run(
        &w.ctx,
        PlanRunRequest {
            yaml: Some(plan.into()),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(res.failures[0].code, "ENV_NOT_ALLOWED", "{res:?}");
    // The user allowed it (the command line): the run reads it, and its value is redacted
    // from what the caller gets back (here in the failure message naming the path).
    let mut user = w.ctx.clone();
    user.allow_env = vec!["PATH".into()];
    let value = std::env::var("PATH").unwrap();
    assert!(value.len() >= keiri_run::secrets::MIN_SECRET_CHARS);
    let res = run(&user, req()).unwrap();
    assert!(!res.failures.is_empty(), "{res:?}");
    let all = everything(&w, &res);
    assert!(!all.contains(&value), "{all}");
    assert!(all.contains(keiri_run::secrets::REDACTED), "{all}");
}

/// A snapshot of every file outside the workspace's `runs/` and `outputs/` (the secrets, the
/// outside folder, the settings folder), to show a refused write changed nothing.
fn files_around(w: &Walls) -> Vec<(PathBuf, Vec<u8>)> {
    let root = w.ws.parent().unwrap();
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let skip =
                path.starts_with(w.ws.join("runs")) || path.starts_with(w.ws.join("outputs"));
            if skip || e.file_type().unwrap().is_symlink() {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The corpus as the place every writing block writes to, with `--write` (the one surface
/// that may write where the plan says; issue 37, item 9): each path is refused with a code,
/// and no file outside the workspace's outputs — the secrets, the settings, the outside
/// folder — is created or changed.
#[test]
fn every_block_that_writes_a_file_refuses_the_corpus_even_with_write() {
    let w = walls();
    keiri_fs::write_atomic(
        &w.ws.join("book.xlsx"),
        &std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/receivables.xlsx"),
        )
        .unwrap(),
    )
    .unwrap();
    type Build = fn(&str, &str) -> serde_json::Value;
    // (block, the input the corpus goes to, the node's inputs with that input set).
    let writers: [(&str, &str, Build); 9] = [
        (
            "csv.write",
            "out_dir",
            |k, p| serde_json::json!({"rows": [{"a": 1}], k: p, "out_name": "r.csv"}),
        ),
        (
            "csv.write",
            "out_name",
            |k, p| serde_json::json!({"rows": [{"a": 1}], k: p}),
        ),
        (
            "excel.write_table",
            "out_dir",
            |k, p| serde_json::json!({"rows": [{"a": 1}], k: p, "out_name": "r.xlsx"}),
        ),
        (
            "excel.write_table",
            "out_name",
            |k, p| serde_json::json!({"rows": [{"a": 1}], k: p}),
        ),
        (
            "excel.patch_workbook",
            "out_dir",
            |k, p| serde_json::json!({"xlsx_path": "book.xlsx", "operations": [{"op": "set_value", "cell": "A1", "value": "x"}], k: p}),
        ),
        (
            "journal.export",
            "out_dir",
            |k, p| serde_json::json!({"entries": [], k: p, "out_name": "j.csv"}),
        ),
        (
            "report.markdown",
            "out_dir",
            |k, p| serde_json::json!({"title": "t", "sections": [], k: p, "out_name": "r.md"}),
        ),
        (
            "report.markdown",
            "out_name",
            |k, p| serde_json::json!({"title": "t", "sections": [], "out_dir": "outputs", k: p}),
        ),
        (
            "control.audit_log",
            "log_path",
            |k, p| serde_json::json!({"event": "probe", k: p}),
        ),
    ];
    let mut cli = w.ctx.clone();
    cli.trust_arguments = true;
    let before = files_around(&w);
    let mut failures = Vec::new();
    for (block, key, build) in writers {
        for path in corpus(&w) {
            let yaml = format!(
                "id: probe\ngraph:\n  - {{id: save, block: {block}, in: {}}}\n",
                build(key, &path)
            );
            let req = PlanRunRequest {
                yaml: Some(yaml),
                write: true,
                ..Default::default()
            };
            match run(&cli, req) {
                Ok(res) => {
                    let code = res.failures.first().map(|f| f.code.as_str());
                    if !matches!(code, Some("PATH_DENIED" | "INPUT_INVALID")) {
                        failures.push(format!("{block}.{key} {path:?}: {code:?} {res:?}"));
                    }
                }
                Err(e) => failures.push(format!(
                    "{block}.{key} {path:?}: {} {}",
                    e.code.as_str(),
                    e.message
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        files_around(&w),
        before,
        "a file outside the outputs changed"
    );
    // What worked before still works: the same writer, to the workspace's outputs.
    let ok = run(
        &cli,
        PlanRunRequest {
            yaml: Some("id: ok\ngraph:\n  - {id: save, block: csv.write, in: {rows: [{a: 1}], out_dir: outputs, out_name: r.csv}}\n".into()),
            write: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(ok.status, keiri_run::RunStatus::Finished, "{ok:?}");
    assert!(w.ws.join("outputs/r.csv").is_file());
}
