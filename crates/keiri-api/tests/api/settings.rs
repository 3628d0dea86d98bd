use keiri_api::settings::*;
use keiri_api::{ApiError, Context, ErrorCode};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

const KEY: &str = "sk-test-SECRET-0123456789";

#[derive(Default)]
struct MemorySecrets(Mutex<HashMap<String, String>>);

impl fmt::Debug for MemorySecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemorySecrets")
    }
}

impl SecretStore for MemorySecrets {
    fn get(&self, account: &str) -> Result<Option<String>, SecretError> {
        Ok(self.0.lock().unwrap().get(account).cloned())
    }
    fn set(&self, account: &str, secret: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap().insert(account.into(), secret.into());
        Ok(())
    }
    fn delete(&self, account: &str) -> Result<(), SecretError> {
        self.0.lock().unwrap().remove(account);
        Ok(())
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    ctx: Context,
    secrets: Arc<MemorySecrets>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecrets::default());
    let ctx = Context::new(dir.path())
        .with_config_dir(dir.path().join("config"))
        .with_secrets(secrets.clone());
    Fixture { dir, ctx, secrets }
}

fn save(ctx: &Context, body: Value) -> Result<Value, ApiError> {
    crate::support::call(ctx, "settings_save", body)
}

fn settings_file(f: &Fixture) -> String {
    std::fs::read_to_string(f.dir.path().join("config").join(SETTINGS_FILE)).unwrap()
}

#[test]
fn the_network_allowlist_is_saved_cleaned_and_reaches_a_run() {
    let f = fixture();
    // A local server that answers every request with 200 and a small JSON body.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            use std::io::{Read, Write};
            let mut stream = stream;
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\nconnection: close\r\n\r\n{\"ok\":true}");
        }
    });
    let plan = format!(
        "id: net\ngraph:\n  - {{id: call, block: http.request, in: {{method: GET, url: \"http://127.0.0.1:{port}/status\"}}, out: {{status: status}}}}\n"
    );
    let run = || crate::support::call(&f.ctx, "plan_run", json!({"yaml": plan})).unwrap();
    // Nothing allowed yet: the request never leaves.
    let refused = run();
    assert_eq!(refused["status"], "failed", "{refused:#}");
    assert_eq!(refused["failures"][0]["code"], "HOST_NOT_ALLOWED");

    // The host without the server's port: only ports 80 and 443 of it, so still refused.
    save(
        &f.ctx,
        json!({"provider": "none", "allow_hosts": ["127.0.0.1"]}),
    )
    .unwrap();
    assert_eq!(run()["failures"][0]["code"], "HOST_NOT_ALLOWED");

    let local = format!("127.0.0.1:{port}");
    let saved = save(
        &f.ctx,
        json!({"provider": "none", "allow_hosts": [format!(" {local} "), "", "*.Slack.com", local]}),
    )
    .unwrap();
    assert_eq!(saved["allow_hosts"], json!([local, "*.slack.com"]));
    let allowed = run();
    assert_eq!(allowed["status"], "finished", "{allowed:#}");

    for bad in [
        "ftp://hooks.slack.com",
        "a b",
        "*.",
        "example.com/x",
        "host:http",
        "com",
        "*.com",
        "169.254.169.254",
        "[fe80::1]",
    ] {
        let err = save(&f.ctx, json!({"provider": "none", "allow_hosts": [bad]})).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest, "{bad}");
        assert_eq!(err.details.as_ref().unwrap()["field"], "allow_hosts");
    }
    // A refused save changes nothing.
    let got = crate::support::call(&f.ctx, "settings_get", json!({})).unwrap();
    assert_eq!(got["allow_hosts"], json!([local, "*.slack.com"]));
}

#[test]
fn the_key_goes_to_the_keychain_and_never_to_the_file_or_the_response() {
    let f = fixture();
    let saved = save(
        &f.ctx,
        json!({"provider": "openai", "model": "gpt-4.1-mini", "embedding": "bm25-only",
               "lang": "en", "api_key": KEY}),
    )
    .unwrap();
    assert_eq!(saved["api_key_set"], json!(true));
    assert_eq!(saved["provider"], json!("openai"));
    assert_eq!(saved["embedding"], json!("bm25-only"));
    assert_eq!(saved["lang"], json!("en"));
    assert!(!saved.to_string().contains(KEY));
    assert_eq!(
        f.secrets.get("openai-api-key").unwrap().as_deref(),
        Some(KEY)
    );
    let file = settings_file(&f);
    assert!(!file.contains(KEY), "{file}");
    assert!(file.contains("gpt-4.1-mini"), "{file}");

    let got = crate::support::call(&f.ctx, "settings_get", json!({})).unwrap();
    assert_eq!(got["api_key_set"], json!(true));
    assert_eq!(got["model"], json!("gpt-4.1-mini"));
    assert!(!got.to_string().contains(KEY));
}

#[test]
fn saving_without_a_key_keeps_it_and_an_empty_key_deletes_it() {
    let f = fixture();
    save(&f.ctx, json!({"provider": "openai", "api_key": KEY})).unwrap();
    let kept = save(&f.ctx, json!({"provider": "openai", "model": "m"})).unwrap();
    assert_eq!(kept["api_key_set"], json!(true));
    let deleted = save(&f.ctx, json!({"provider": "openai", "api_key": ""})).unwrap();
    assert_eq!(deleted["api_key_set"], json!(false));
    assert!(f.secrets.get("openai-api-key").unwrap().is_none());
}

#[test]
fn nothing_saved_gives_the_defaults_without_asking_the_keychain() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Context::new(dir.path())
        .with_config_dir(dir.path().join("config"))
        .with_secrets(Arc::new(NoKeychain));
    let got = crate::support::call(&ctx, "settings_get", json!({})).unwrap();
    assert_eq!(got["provider"], json!("none"));
    assert_eq!(got["lang"], json!("ja"));
    assert_eq!(got["api_key_set"], json!(false));
    assert!(llm_env(&ctx).is_ok());
}

#[test]
fn an_unavailable_keychain_is_a_typed_error_and_nothing_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Context::new(dir.path())
        .with_config_dir(dir.path().join("config"))
        .with_secrets(Arc::new(NoKeychain));
    let err = save(&ctx, json!({"provider": "openai", "api_key": KEY})).unwrap_err();
    assert_eq!(err.code, ErrorCode::KeychainUnavailable);
    assert_eq!(err.code.as_str(), "KEYCHAIN_UNAVAILABLE");
    assert!(!err.message.contains(KEY));
    // No plain-text fallback: not even the non-secret settings were written.
    assert!(!dir.path().join("config").join(SETTINGS_FILE).exists());

    // Settings without a key still save; reading them reports the keychain's state.
    let saved = save(&ctx, json!({"provider": "openai"})).unwrap();
    assert_eq!(saved["keychain_available"], json!(false));
    assert_eq!(saved["api_key_set"], json!(false));
    // A saved provider whose key cannot be read: the LLM configuration says why.
    assert_eq!(
        llm_env(&ctx).unwrap_err().code,
        ErrorCode::KeychainUnavailable
    );
    let status = keiri_api::llm_status(&ctx, Default::default()).unwrap();
    assert!(!status.configured);
    assert_eq!(status.problem.unwrap().code, "KEYCHAIN_UNAVAILABLE");
}

/// A context on a fresh workspace with no keychain at all (this session's keys only).
fn without_keychain() -> (tempfile::TempDir, Context) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = Context::new(dir.path())
        .with_config_dir(dir.path().join("config"))
        .with_secrets(Arc::new(WithSession::new(NoKeychain)));
    (dir, ctx)
}

/// Whether the test process's own environment configures a model or embeddings (it wins
/// over everything a test saves, so such a test has nothing to check).
fn process_configures_llm() -> bool {
    let process = keiri_llm::Env::process();
    keiri_llm::config::ENV_VARS
        .iter()
        .chain(EMBED_VARS)
        .any(|v| process.get(v).is_some())
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn without_a_keychain_a_key_kept_for_the_session_serves_the_model_calls() {
    if process_configures_llm() {
        return;
    }
    let (url, server) =
        keiri_llm::testkit::FakeServer::start_background(vec![keiri_llm::testkit::Reply::content(
            "OK",
        )])
        .unwrap();
    let (dir, ctx) = without_keychain();
    let body = json!({"provider": "compatible", "base_url": url, "api_key": KEY});
    // The keychain is refused, and the error says a session key is possible.
    let err = save(&ctx, body.clone()).unwrap_err();
    assert_eq!(err.code, ErrorCode::KeychainUnavailable);
    assert_eq!(err.details.unwrap()["session_available"], json!(true));
    assert!(!dir.path().join("config").join(SETTINGS_FILE).exists());

    let mut session = body;
    session["key_storage"] = json!("session");
    let saved = save(&ctx, session).unwrap();
    assert_eq!(saved["api_key_set"], json!(true), "{saved:#}");
    assert_eq!(saved["api_key_storage"], json!("session"));
    assert_eq!(saved["keychain_available"], json!(false));
    assert_eq!(saved["effective"]["api_key"], json!("session"));
    assert!(!saved.to_string().contains(KEY));
    for file in files_under(dir.path()) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{} holds the key",
            file.display()
        );
    }

    // Every model call of this process goes through llm_env: a clone of the context (as
    // `keiri serve` shares one) sends the key.
    let clone = ctx.clone();
    assert_eq!(llm_env(&clone).unwrap().get("KEIRI_LLM_API_KEY"), Some(KEY));
    let tested = crate::support::call(&clone, "llm_connection_test", json!({})).unwrap();
    assert_eq!(tested["ok"], json!(true), "{tested:#}");
    let auth = format!("Bearer {KEY}");
    assert_eq!(
        server.requests()[0].header("authorization"),
        Some(auth.as_str())
    );
    // Saving other settings keeps the session key; the next process has none.
    let kept = save(
        &ctx,
        json!({"provider": "compatible", "base_url": url, "model": "m2"}),
    )
    .unwrap();
    assert_eq!(kept["api_key_storage"], json!("session"));
    let (_other_dir, other) = without_keychain();
    let other = other.with_config_dir(dir.path().join("config"));
    let fresh = crate::support::call(&other, "settings_get", json!({})).unwrap();
    assert_eq!(fresh["api_key_set"], json!(false));
    // An empty key forgets it.
    let deleted = save(
        &ctx,
        json!({"provider": "compatible", "base_url": url, "api_key": ""}),
    )
    .unwrap();
    assert_eq!(deleted["api_key_set"], json!(false));
    assert_eq!(llm_env(&ctx).unwrap().get("KEIRI_LLM_API_KEY"), None);
}

#[test]
fn a_server_that_needs_no_key_works_with_no_key_and_no_keychain() {
    if process_configures_llm() {
        return;
    }
    let (url, server) =
        keiri_llm::testkit::FakeServer::start_background(vec![keiri_llm::testkit::Reply::content(
            "OK",
        )])
        .unwrap();
    let (_dir, ctx) = without_keychain();
    let saved = save(
        &ctx,
        json!({"provider": "compatible", "base_url": url, "model": "local-model"}),
    )
    .unwrap();
    assert_eq!(saved["keychain_available"], json!(false));
    assert_eq!(saved["effective"]["configured"], json!(true), "{saved:#}");
    assert_eq!(saved["effective"]["api_key"], Value::Null);
    let env = llm_env(&ctx).unwrap();
    assert_eq!(env.get("KEIRI_LLM_BASE_URL"), Some(url.as_str()));
    let status = keiri_api::llm_status(&ctx, Default::default()).unwrap();
    assert!(status.configured, "{status:?}");
    assert!(status.problem.is_none());
    let tested = crate::support::call(&ctx, "llm_connection_test", json!({})).unwrap();
    assert_eq!(tested["ok"], json!(true), "{tested:#}");
    let requests = server.requests();
    assert_eq!(requests[0].body["model"], json!("local-model"));
    // No key is sent (the client's empty bearer scheme at most).
    assert!(
        matches!(requests[0].header("authorization"), None | Some("Bearer")),
        "{:?}",
        requests[0].header("authorization")
    );
}

#[test]
fn a_saved_provider_from_env_file_shows_through_settings_get() {
    if process_configures_llm() {
        return;
    }
    let (dir, ctx) = without_keychain();
    keiri_fs::write_atomic(
        &dir.path().join(".env"),
        b"KEIRI_LLM_BASE_URL=http://127.0.0.1:9/v1\nKEIRI_LLM_MODEL=qwen\n",
    )
    .unwrap();
    let got = crate::support::call(&ctx, "settings_get", json!({})).unwrap();
    assert_eq!(got["provider"], json!("none"));
    let effective = &got["effective"];
    assert_eq!(
        effective["provider"],
        json!({"value": "openai_compatible", "source": "env_file"})
    );
    assert_eq!(
        effective["model"],
        json!({"value": "qwen", "source": "env_file"})
    );
    assert_eq!(
        effective["base_url"],
        json!({"value": "http://127.0.0.1:9/v1", "source": "env_file"})
    );
    assert_eq!(
        effective["variables"],
        json!(["KEIRI_LLM_BASE_URL", "KEIRI_LLM_MODEL"])
    );
}

#[test]
fn the_key_is_not_in_debug_output_or_error_messages() {
    let f = fixture();
    let req: SettingsSaveRequest =
        serde_json::from_value(json!({"provider": "openai", "api_key": KEY})).unwrap();
    assert!(!format!("{req:?}").contains(KEY));
    let bad = format!("{KEY} with a space");
    let err = save(&f.ctx, json!({"provider": "openai", "api_key": bad})).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert!(!err.message.contains(KEY), "{}", err.message);
    save(&f.ctx, json!({"provider": "openai", "api_key": KEY})).unwrap();
    let env = llm_env(&f.ctx).unwrap();
    assert!(!format!("{env:?}").contains(KEY));
    assert!(!format!("{:?}", f.ctx).contains(KEY));
}

// check(request, field the error names)
fn check_invalid(body: Value, field: &str) {
    let f = fixture();
    let err = save(&f.ctx, body.clone()).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest, "{body}");
    assert_eq!(err.details.unwrap()["field"], json!(field), "{body}");
    assert!(!f.dir.path().join("config").join(SETTINGS_FILE).exists());
}

#[test]
fn settings_are_checked_before_anything_is_saved() {
    check_invalid(json!({"provider": "compatible"}), "base_url");
    check_invalid(
        json!({"provider": "compatible", "base_url": "ftp://x"}),
        "base_url",
    );
    check_invalid(
        json!({"provider": "azure", "azure_deployment": "d"}),
        "azure_endpoint",
    );
    check_invalid(
        json!({"provider": "azure", "azure_endpoint": "https://r.openai.azure.com"}),
        "azure_deployment",
    );
    check_invalid(json!({"provider": "none", "api_key": KEY}), "api_key");
    check_invalid(
        json!({"provider": "none", "workspace": "relative/dir"}),
        "workspace",
    );
    let f = fixture();
    let err = save(&f.ctx, json!({"provider": "gemini"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
}

/// The ceiling of a run's bounds is the user's: saved from `run_limits`, kept by a save that
/// does not send it (the settings window), checked (no 0), and applied to `plan_run`, where a
/// plan's `policy.limits` is held at it.
#[test]
fn the_run_limits_ceiling_is_saved_kept_and_holds_a_plans_own_limits() {
    let f = fixture();
    keiri_fs::write_atomic(
        &f.dir.path().join("社員.csv"),
        "社員番号,部門\n1,営業\n2,営業\n3,経理\n".as_bytes(),
    )
    .unwrap();
    // The plan asks for a million items; its file has 3 staff.
    let plan = "id: each\npolicy: {limits: {foreach_items: 1000000}}\ngraph:\n  - {id: read, block: csv.read, in: {path: 社員.csv}, out: {rows: rows}}\n  - id: each\n    type: loop\n    foreach: {input: \"${read.rows}\", var: person}\n    body: {plan: {id: b, graph: [{id: pick, block: transforms.select_columns, in: {rows: \"${read.rows}\", columns: [部門]}, out: {rows: rows}}]}}\n    out: {collect: all}\n";
    let run = || crate::support::call(&f.ctx, "plan_run", json!({"yaml": plan})).unwrap();
    // The built-in ceiling (a million) lets it run.
    assert_eq!(run()["status"], "finished");
    let saved = save(
        &f.ctx,
        json!({"provider": "none", "run_limits": {"foreach_items": 2, "memory_mb": 4096}}),
    )
    .unwrap();
    assert_eq!(
        saved["run_limits"],
        json!({"foreach_items": 2, "memory_mb": 4096})
    );
    let refused = run();
    assert_eq!(refused["status"], "failed", "{refused:#}");
    assert_eq!(refused["failures"][0]["code"], "LIMIT_EXCEEDED");
    assert!(
        refused["failures"][0]["message"]
            .as_str()
            .unwrap()
            .ends_with("上限の 2 件を超えています"),
        "{refused:#}"
    );
    // The settings window saves without run_limits: the ceiling stays.
    save(&f.ctx, json!({"provider": "none", "lang": "en"})).unwrap();
    assert!(
        settings_file(&f).contains("\"foreach_items\": 2"),
        "{}",
        settings_file(&f)
    );
    assert_eq!(run()["failures"][0]["code"], "LIMIT_EXCEEDED");
    // A 0 or an unknown bound is refused and nothing changes.
    let err = save(
        &f.ctx,
        json!({"provider": "none", "run_limits": {"join_rows": 0}}),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest);
    assert_eq!(err.details.unwrap()["field"], "run_limits.join_rows");
    let err = save(
        &f.ctx,
        json!({"provider": "none", "run_limits": {"memory_gb": 8}}),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidRequest, "{err:?}");
    assert!(settings_file(&f).contains("\"foreach_items\": 2"));
}

/// `settings_save` refuses the root and system folders as the workspace and saves nothing (the
/// guard's own cases are in `src/settings/tests.rs`).
#[test]
fn the_root_and_system_folders_are_refused_as_workspace_and_nothing_is_saved() {
    let f = fixture();
    for dir in ["/", "/etc", "/usr", "/var", "/tmp", "/root"] {
        let err = save(&f.ctx, json!({"provider": "none", "workspace": dir})).unwrap_err();
        assert_eq!(err.code, ErrorCode::WorkspaceNotAllowed, "{dir}");
        assert_eq!(err.details.unwrap()["field"], json!("workspace"));
        assert!(!f.dir.path().join("config").join(SETTINGS_FILE).exists());
    }
}

#[test]
fn llm_env_reads_the_workspace_dotenv_over_the_saved_settings() {
    let f = fixture();
    save(
        &f.ctx,
        json!({"provider": "compatible", "base_url": "http://127.0.0.1:9/v1",
               "model": "saved-model", "api_key": KEY}),
    )
    .unwrap();
    keiri_fs::write_atomic(
        &f.dir.path().join(".env"),
        b"KEIRI_LLM_MODEL=dotenv-model\n",
    )
    .unwrap();
    let env = llm_env(&f.ctx).unwrap();
    let process = keiri_llm::Env::process();
    let expect = |name: &str, value: &str| {
        // A variable the test process itself sets wins, as it should.
        let want = process.get(name).unwrap_or(value).to_string();
        assert_eq!(env.get(name).map(str::to_string), Some(want), "{name}");
    };
    expect("KEIRI_LLM_MODEL", "dotenv-model");
    expect("KEIRI_LLM_BASE_URL", "http://127.0.0.1:9/v1");
    expect("KEIRI_LLM_API_KEY", KEY);
}

#[test]
fn saved_settings_configure_llm_status_and_the_embedder() {
    let f = fixture();
    save(
        &f.ctx,
        json!({"provider": "azure", "azure_endpoint": "https://r.openai.azure.com",
               "azure_deployment": "gpt4", "embedding": "bm25-only", "api_key": KEY}),
    )
    .unwrap();
    let vars = settings_vars(
        &load_settings(&f.ctx).unwrap(),
        f.secrets.get("azure-openai-api-key").unwrap().as_deref(),
    );
    assert_eq!(vars.get("AZURE_OPENAI_API_KEY"), Some(KEY));
    assert_eq!(vars.get("AZURE_OPENAI_DEPLOYMENT"), Some("gpt4"));
    assert_eq!(vars.get("KEIRI_EMBEDDER"), Some("none"));
    let process = keiri_llm::Env::process();
    let env_configures_llm = [
        "KEIRI_LLM_BASE_URL",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "OPENAI_API_KEY",
    ]
    .iter()
    .any(|v| process.get(v).is_some());
    if !env_configures_llm {
        let status = keiri_api::llm_status(&f.ctx, Default::default()).unwrap();
        assert!(status.configured, "{status:?}");
        assert_eq!(status.provider, Some(keiri_llm::ProviderKind::Azure));
        assert_eq!(status.deployment.as_deref(), Some("gpt4"));
        assert!(status.api_key_set);
    }
}
