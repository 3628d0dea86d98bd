//! `control.audit_log`: an append-only, hash-chained JSON Lines log.
//!
//! # The chain
//!
//! Each line is one JSON object: `seq` (1, 2, … — the line number), `time` (the run's
//! clock, in JST), `node`, `actor`, `event`, `details`, `evidence` (each file's path, SHA-256
//! and size) and `prev_hash`: the SHA-256 of the previous line's bytes (without its newline),
//! or `null` on the first line. The hash of an entry is the SHA-256 of its own line; it is not
//! stored in the line (it could not be), but it is the next line's `prev_hash`, the block's
//! `entry_hash` output, and so it is kept in the run's records as an anchor. Changing,
//! removing, inserting or reordering a line breaks the link to the line after it (or `seq`),
//! and so does a rewrite of the first lines; only a rewrite of every later line and every
//! recorded anchor goes unnoticed.
//!
//! # Appending
//!
//! Before anything is written the whole existing chain is verified; a broken chain fails with
//! `AUDIT_CHAIN_BROKEN` and the file is left as it is. The new file (old bytes + the new line)
//! replaces the old one atomically under the file's keiri-fs lock, and only if the file still
//! holds what was verified, so a crash leaves the old log or the new one, never a torn line,
//! and two writers cannot both append after the same line.
//!
//! The log goes where output blocks write ([`crate::blocks::kit::outputs::write_path`]): inside the
//! node's folder unless the user passed `--write`, then at `log_path` in the workspace.

use std::path::Path;

use serde_json::{Value as Json, json};

use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, Outputs};
use crate::blocks::kit::files::read_bytes;
use crate::blocks::kit::hash::sha256_hex;
use crate::blocks::kit::outputs::write_path;
use crate::blocks::kit::time::jst_text;

pub(super) fn audit_log(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let event = inputs.require_str("event")?.trim();
    if event.is_empty() {
        return Err(BlockError::input_invalid(
            "event",
            "記録する出来事を書いてください",
            "describe the event to record",
        ));
    }
    let actor = inputs.str("actor")?.map(str::trim);
    let details = inputs.json("details").unwrap_or(Json::Null);
    let log_text = inputs
        .str("log_path")?
        .unwrap_or("audit/audit_log.jsonl")
        .trim();
    let path = write_path(ctx, "log_path", log_text)?;
    if log_text.is_empty() || path.is_dir() || path.file_name().is_none() {
        return Err(BlockError::input_invalid(
            "log_path",
            "ログファイルのパスが必要です",
            "expected the path of a log file",
        ));
    }

    // Evidence hashes are taken before the log is locked: reading large files must not hold
    // up other writers of the log.
    let mut evidence = Vec::new();
    for file in inputs.strings("evidence_files")?.unwrap_or_default() {
        let (_, bytes) = read_bytes(ctx, &file)?;
        evidence.push(json!({"path": file, "sha256": sha256_hex(&bytes), "size": bytes.len()}));
    }

    let shown = path.display().to_string();
    let io = |e: &dyn std::fmt::Display| {
        BlockError::failed(
            format!("監査ログ {shown} に書き込めません: {e}"),
            format!("cannot write the audit log {shown}: {e}"),
        )
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(&e))?;
    }
    let lock = keiri_fs::lock(&path).map_err(|e| io(&e))?;
    let (old, existed) = match std::fs::read(&path) {
        Ok(bytes) => (bytes, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), false),
        Err(e) => return Err(io(&e)),
    };
    let (count, prev_hash) = verify_chain(&old, &path)?;

    let time = jst_text(ctx.now);
    let entry = json!({
        "seq": count + 1,
        "time": time,
        "node": ctx.node_id,
        "actor": actor,
        "event": event,
        "details": details,
        "evidence": evidence,
        "prev_hash": prev_hash,
    });
    let line = serde_json::to_string(&entry).map_err(|e| io(&e))?;
    let entry_hash = sha256_hex(line.as_bytes());
    let mut new = old.clone();
    if !new.is_empty() && !new.ends_with(b"\n") {
        new.push(b'\n');
    }
    new.extend_from_slice(line.as_bytes());
    new.push(b'\n');
    // A new file is created only if it still does not exist; an existing one is replaced
    // only if it still holds what was read.
    if existed {
        lock.write_if_unchanged(&old, &new)
    } else {
        lock.write_new(&new)
    }
    .map_err(|e| io(&e))?;
    drop(lock);

    let mut entry = entry;
    if let Json::Object(map) = &mut entry {
        map.insert("entry_hash".into(), json!(entry_hash));
    }
    Ok(Outputs::new()
        .with("entry", entry)
        .with("log_path", json!(shown))
        .with("entry_hash", json!(entry_hash)))
}

builtin!("control.audit_log", audit_log);

/// Checks every line of an existing log: JSON, `seq` = its line number, `prev_hash` = the
/// hash of the line before. Returns the number of lines and the hash of the last one.
fn verify_chain(bytes: &[u8], path: &Path) -> Result<(usize, Option<String>), BlockError> {
    let shown = path.display();
    let broken = |line: usize, ja: &str, en: &str| {
        BlockError::new(
            ErrorCode::AuditChainBroken,
            format!("監査ログ {shown} の {line} 行目でハッシュの連鎖が切れています（{ja}）。改ざんか破損の可能性があります"),
            format!("the hash chain of the audit log {shown} is broken at line {line} ({en}): it may have been altered or damaged"),
        )
        .with_hint(
            "ログは追記専用です。何も追記していません。変更された行を確認し、バックアップから元に戻すか、新しい log_path に記録を始めてください",
            "the log is append-only and nothing was appended; check the changed line, restore the log from a backup or start a new log_path",
        )
    };
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    if body.is_empty() {
        return Ok((0, None));
    }
    let mut prev: Option<String> = None;
    let mut count = 0;
    for (i, line) in body.split(|b| *b == b'\n').enumerate() {
        let n = i + 1;
        let Ok(Json::Object(entry)) = serde_json::from_slice::<Json>(line) else {
            return Err(broken(n, "JSONの行ではありません", "not a JSON object"));
        };
        if entry.get("seq").and_then(Json::as_u64) != Some(n as u64) {
            return Err(broken(
                n,
                "seq が行番号と一致しません",
                "seq is not the line number",
            ));
        }
        let recorded = entry.get("prev_hash").cloned().unwrap_or(Json::Null);
        if recorded != json!(prev) {
            return Err(broken(
                n,
                "prev_hash が前の行のハッシュと一致しません",
                "prev_hash is not the hash of the line before",
            ));
        }
        prev = Some(sha256_hex(line));
        count = n;
    }
    Ok((count, prev))
}
