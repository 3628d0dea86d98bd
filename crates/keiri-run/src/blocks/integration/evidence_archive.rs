//! `evidence.archive`: one zip of evidence files with a manifest of their hashes.
//!
//! The archive is `<archive_dir>/<label>.zip` (label default `evidence_<YYYYMMDD>`, the run's
//! JST date). It holds each file under its own name (a second file of the same name becomes
//! `name_2.ext`, …) and `manifest.json`: the label, the time, the retention period and, per
//! file, its name in the archive, source path, SHA-256, size and the search fields of the
//! Electronic Books Maintenance Act (取引年月日 `date`, 取引金額 `amount`, 取引先
//! `counterparty`, and `doc_type`). The same manifest, plus the archive's own name and
//! SHA-256, is written beside the zip as `<label>.manifest.json`, so the index is searchable
//! without opening the archive and the archive itself can be checked against it.
//!
//! The zip is built in memory (at most [`MAX_ARCHIVE_BYTES`] of files) and written
//! atomically, by `on_conflict` like the output blocks (rename by default: an archive is never
//! overwritten silently; with `skip` an existing archive is kept and every file counts as
//! skipped). Where it goes follows the output blocks' rule
//! ([`crate::blocks::kit::outputs::write_path`]): inside the node's folder unless `--write`.
//! Retention runs from the archive date (`retention_until` = that date + `retention_years`).

use crate::block::ProgressUnit;
use crate::blocks::kit::steps::Steps;
use std::collections::BTreeSet;
use std::io::{Cursor, Write};

use chrono::{Datelike, Months, Timelike};
use keiri_xlsx::OnConflict;
use serde_json::{Value as Json, json};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::files::read_bytes;
use crate::blocks::kit::hash::sha256_hex;
use crate::blocks::kit::numbers::num_json;
use crate::blocks::kit::outputs::{on_conflict, save, write_path};
use crate::blocks::kit::time::{jst, jst_text};
use crate::jp::{NegativeMarkers, parse_amount, parse_date};

/// The most file bytes one archive holds (it is built in memory): 512 MiB.
pub(super) const MAX_ARCHIVE_BYTES: u64 = 512 * 1024 * 1024;
/// The manifest's name inside the archive.
const MANIFEST: &str = "manifest.json";

/// One file to archive, with its search fields.
struct Evidence {
    path: String,
    date: Option<String>,
    amount: Option<f64>,
    counterparty: Option<String>,
    doc_type: Option<String>,
}

fn evidence_list(inputs: &Inputs) -> Result<Vec<Evidence>, BlockError> {
    let items = match inputs.json("files") {
        Some(Json::Array(items)) if !items.is_empty() => items,
        Some(Json::String(s)) => vec![Json::String(s)],
        _ => {
            return Err(BlockError::input_invalid(
                "files",
                "保存するファイルを1つ以上指定してください",
                "at least one file is needed",
            ));
        }
    };
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            let what = format!("files[{n}]");
            let bad = |ja: &str, en: &str| {
                BlockError::input_invalid(
                    "files",
                    &format!("{what}: {ja}"),
                    &format!("{what}: {en}"),
                )
            };
            let text_field = |m: &serde_json::Map<String, Json>,
                              key: &str|
             -> Result<Option<String>, BlockError> {
                match m.get(key) {
                    None | Some(Json::Null) => Ok(None),
                    Some(Json::String(s)) if s.trim().is_empty() => Ok(None),
                    Some(Json::String(s)) => Ok(Some(s.trim().to_string())),
                    Some(Json::Number(x)) => Ok(Some(x.to_string())),
                    Some(_) => Err(bad(
                        &format!("{key} は文字列です"),
                        &format!("{key} must be a string"),
                    )),
                }
            };
            match item {
                Json::String(path) if !path.trim().is_empty() => Ok(Evidence {
                    path: path.trim().to_string(),
                    date: None,
                    amount: None,
                    counterparty: None,
                    doc_type: None,
                }),
                Json::Object(m) => {
                    let path = text_field(m, "path")?
                        .ok_or_else(|| bad("path がありません", "it has no path"))?;
                    let date = match text_field(m, "date")? {
                        None => None,
                        Some(d) => Some(
                            parse_date(&d)
                                .ok_or_else(|| {
                                    bad(
                                        &format!("date {d:?} を日付として読めません"),
                                        &format!("date {d:?} is not a date"),
                                    )
                                })?
                                .format("%Y-%m-%d")
                                .to_string(),
                        ),
                    };
                    let amount = match m.get("amount") {
                        None | Some(Json::Null) => None,
                        Some(Json::Number(x)) => x.as_f64(),
                        Some(Json::String(s)) => parse_amount(s, &NegativeMarkers::default())
                            .ok()
                            .flatten()
                            .map(Some)
                            .ok_or_else(|| {
                                bad(
                                    &format!("amount {s:?} を金額として読めません"),
                                    &format!("amount {s:?} is not an amount"),
                                )
                            })?,
                        Some(_) => {
                            return Err(bad("amount は数値です", "amount must be a number"));
                        }
                    };
                    Ok(Evidence {
                        path,
                        date,
                        amount,
                        counterparty: text_field(m, "counterparty")?,
                        doc_type: text_field(m, "doc_type")?,
                    })
                }
                _ => Err(bad(
                    "パスか、path を持つオブジェクトが必要です",
                    "expected a path or an object with a path",
                )),
            }
        })
        .collect()
}

/// A label usable as a file name on Windows, macOS and Linux.
fn label_name(label: &str) -> Result<String, BlockError> {
    let label = label.trim();
    let bad = label.is_empty()
        || label == "."
        || label == ".."
        || label.ends_with('.')
        || label.chars().any(|c| {
            c.is_control() || matches!(c, '/' | '\\' | ':' | '*' | '?' | '"' | '<' | '>' | '|')
        });
    if bad {
        return Err(BlockError::input_invalid(
            "label",
            &format!("{label:?} はファイル名に使えません（/ \\ : * ? \" < > | は使えません）"),
            &format!("{label:?} cannot be a file name (no / \\ : * ? \" < > |)"),
        ));
    }
    Ok(label.to_string())
}

/// `name` made unique among `used` by `_2`, `_3`, … before the extension.
fn unique_name(name: &str, used: &mut BTreeSet<String>) -> String {
    let lower = |s: &str| s.to_lowercase();
    if used.insert(lower(name)) {
        return name.to_string();
    }
    let (stem, ext) = keiri_fs::stem_and_ext(std::path::Path::new(name));
    let mut n = 2;
    loop {
        let candidate = format!("{stem}_{n}{ext}");
        if used.insert(lower(&candidate)) {
            return candidate;
        }
        n += 1;
    }
}

pub(super) fn evidence_archive(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
) -> Result<Outputs, BlockError> {
    let files = evidence_list(inputs)?;
    let retention_years = inputs.i64("retention_years")?.unwrap_or(7);
    let retention_years = u32::try_from(retention_years)
        .ok()
        .filter(|y| (1..=100).contains(y))
        .ok_or_else(|| {
            BlockError::input_invalid(
                "retention_years",
                "1〜100 年で指定してください",
                "expected 1 to 100 years",
            )
        })?;
    let conflict = on_conflict(inputs)?;
    let local = ctx.now.with_timezone(&jst());
    let label = match inputs.str("label")? {
        Some(l) if !l.trim().is_empty() => label_name(l)?,
        _ => format!("evidence_{}", local.format("%Y%m%d")),
    };
    let dir_text = inputs.str("archive_dir")?.unwrap_or("evidence").trim();
    let dir = if dir_text.is_empty() {
        ctx.out_dir.to_path_buf()
    } else {
        write_path(ctx, "archive_dir", dir_text)?
    };
    let archived_on = local.date_naive();
    let retention_until = archived_on
        .checked_add_months(Months::new(12 * retention_years))
        .map(|d| d.format("%Y-%m-%d").to_string());

    // Read every file first: a missing one fails the block before anything is written.
    let mut used: BTreeSet<String> = BTreeSet::from([MANIFEST.to_string()]);
    let mut entries = Vec::new();
    let mut total: u64 = 0;
    let mut steps = Steps::new(ctx, ProgressUnit::Files, Some(files.len()));
    for evidence in files {
        steps.next()?;
        let (full, bytes) = read_bytes(ctx, &evidence.path)?;
        total += bytes.len() as u64;
        if total > MAX_ARCHIVE_BYTES {
            return Err(BlockError::failed(
                format!(
                    "ファイルの合計が1つのアーカイブの上限（{MAX_ARCHIVE_BYTES} バイト）を超えます"
                ),
                format!(
                    "the files add up to more than one archive holds ({MAX_ARCHIVE_BYTES} bytes)"
                ),
            )
            .with_hint(
                "label を分けて、複数のアーカイブにしてください",
                "split them into several archives with different labels",
            ));
        }
        let base = full
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".to_string());
        let name = unique_name(&base, &mut used);
        entries.push((evidence, name, bytes));
    }

    let created_at = jst_text(ctx.now);
    let listed: Vec<Json> = entries
        .iter()
        .map(|(e, name, bytes)| {
            json!({
                "name": name,
                "source": e.path,
                "sha256": sha256_hex(bytes),
                "size": bytes.len(),
                "date": e.date,
                "amount": e.amount.map(num_json),
                "counterparty": e.counterparty,
                "doc_type": e.doc_type,
            })
        })
        .collect();
    let manifest = json!({
        "label": label,
        "created_at": created_at,
        "retention_years": retention_years,
        "retention_until": retention_until,
        "file_count": listed.len(),
        "files": listed,
    });

    let zip_error = |e: &dyn std::fmt::Display| {
        BlockError::failed(
            format!("アーカイブを作れませんでした: {e}"),
            format!("cannot build the archive: {e}"),
        )
    };
    let modified = zip::DateTime::from_date_and_time(
        u16::try_from(local.year()).unwrap_or(1980),
        local.month() as u8,
        local.day() as u8,
        local.hour() as u8,
        local.minute() as u8,
        local.second() as u8,
    )
    .unwrap_or_default();
    let options = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .last_modified_time(modified);
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for (_, name, bytes) in &entries {
        writer
            .start_file(name.as_str(), options)
            .map_err(|e| zip_error(&e))?;
        writer.write_all(bytes).map_err(|e| zip_error(&e))?;
    }
    let manifest_text = serde_json::to_string_pretty(&manifest).map_err(|e| zip_error(&e))?;
    writer
        .start_file(MANIFEST, options)
        .map_err(|e| zip_error(&e))?;
    writer
        .write_all(manifest_text.as_bytes())
        .map_err(|e| zip_error(&e))?;
    let zip_bytes = writer.finish().map_err(|e| zip_error(&e))?.into_inner();

    std::fs::create_dir_all(&dir).map_err(|e| {
        BlockError::failed(
            format!("保管先フォルダ {} を作れませんでした: {e}", dir.display()),
            format!("could not create the archive folder {}: {e}", dir.display()),
        )
    })?;
    let saved = save(&dir, &format!("{label}.zip"), &zip_bytes, conflict)?;
    let summary = |archived: usize, skipped: usize| {
        json!({
            "archived_count": archived,
            "skipped_count": skipped,
            "total_bytes": total,
            "retention_years": retention_years,
            "retention_until": retention_until,
        })
    };
    let Some(zip_path) = saved else {
        // on_conflict: skip, and the archive exists: nothing was written.
        return Ok(Outputs::new()
            .with("archived", json!([]))
            .with("archive_path", json!(""))
            .with("manifest_path", json!(""))
            .with("summary", summary(0, entries.len())));
    };
    let stem = zip_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or(label);
    let manifest_path = dir.join(format!("{stem}.manifest.json"));
    let mut beside = manifest.clone();
    if let Json::Object(m) = &mut beside {
        m.insert("archive".into(), json!(format!("{stem}.zip")));
        m.insert("archive_sha256".into(), json!(sha256_hex(&zip_bytes)));
    }
    let beside_text = serde_json::to_string_pretty(&beside).map_err(|e| zip_error(&e))?;
    // The sidecar follows its zip's name, which `save` just made free (or was told to
    // overwrite), so replacing a stale sidecar of that name is right.
    let sidecar_conflict = OnConflict::Overwrite;
    save(
        &dir,
        &format!("{stem}.manifest.json"),
        beside_text.as_bytes(),
        sidecar_conflict,
    )?;

    let archived: Vec<Json> = entries
        .iter()
        .zip(manifest["files"].as_array().into_iter().flatten())
        .map(|((e, name, _), listed)| json!({"source": e.path, "path": name, "sha256": listed["sha256"]}))
        .collect();
    Ok(Outputs::new()
        .with("archived", Json::Array(archived))
        .with("archive_path", json!(zip_path.display().to_string()))
        .with("manifest_path", json!(manifest_path.display().to_string()))
        .with("summary", summary(entries.len(), 0)))
}

builtin!("evidence.archive", evidence_archive);
