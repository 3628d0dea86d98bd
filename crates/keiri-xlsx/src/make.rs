//! `workbook_make` (the MCP tool `exstruct_make`): a new workbook and its first ops in one
//! call. A minimal workbook (one sheet, a minimal style sheet so the styling ops work) is
//! generated into a scratch directory of the OS temp dir and patched with the ordinary patch
//! engine into `out_path`, so the response, the conflict rules and the op semantics are
//! exactly `exstruct_patch`'s. The scratch directory is removed when the call ends; nothing is
//! written under the user's roots on a dry run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::book::{check_sheet_name, same_sheet_name};
use crate::contract::{OnConflict, OpKind, PatchOp, PatchRequest, PatchResponse};
use crate::error::Error;
use crate::patch::PatchEnv;

/// The first sheet's name unless the request's `sheet` names another.
const DEFAULT_SHEET: &str = "Sheet1";

/// A make request (`exstruct_make` input).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MakeRequest {
    /// The workbook to create (.xlsx or .xlsm), absolute or relative to the workspace.
    pub out_path: String,
    /// Operations applied to the new workbook, in order (none by default).
    #[serde(default, deserialize_with = "crate::contract::deserialize_ops")]
    #[schemars(with = "Vec<PatchOp>")]
    pub ops: Vec<PatchOp>,
    /// The sheet of every op that names none; also the first sheet's name unless an
    /// `add_sheet` op creates a sheet of that name (then the first sheet is `Sheet1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    /// What to do when `out_path` exists; the configured default when left out.
    #[serde(default)]
    pub on_conflict: Option<OnConflict>,
    #[serde(default)]
    pub auto_formula: bool,
    #[serde(default)]
    pub dry_run: bool,
    #[serde(default)]
    pub return_inverse_ops: bool,
    #[serde(default)]
    pub preflight_formula_check: bool,
}

/// The scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch_dir() -> Result<Scratch, Error> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "keiri-make-{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir(&dir).map_err(|source| Error::Io {
        action: "creating",
        path: dir.clone(),
        source,
    })?;
    Ok(Scratch(dir))
}

/// Creates the workbook of `req` (see the module documentation).
pub fn make(req: &MakeRequest, env: &PatchEnv) -> Result<PatchResponse, Error> {
    let extension = Path::new(&req.out_path)
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase());
    let macro_enabled = match extension.as_deref() {
        Some("xlsx") => false,
        Some("xlsm") => true,
        Some("xls") => {
            return Err(Error::LegacyXls {
                path: req.out_path.clone(),
            });
        }
        _ => {
            return Err(Error::InvalidRequest(format!(
                "out_path {:?} must end in .xlsx or .xlsm",
                req.out_path
            )));
        }
    };
    let target = env.policy.resolve_new(&req.out_path)?;
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return Err(Error::InvalidRequest(format!(
            "out_path {:?} is not a file path",
            req.out_path
        )));
    };
    let name = name.to_string_lossy().into_owned();

    let requested = req
        .sheet
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty());
    let added = |s: &str| {
        req.ops
            .iter()
            .any(|op| op.kind() == OpKind::AddSheet && same_sheet_name(op.sheet(), s))
    };
    let first_sheet = match requested {
        Some(s) if !added(s) => s,
        _ => DEFAULT_SHEET,
    };
    check_sheet_name(first_sheet).map_err(Error::InvalidRequest)?;

    let scratch = scratch_dir()?;
    let source = scratch.0.join(&name);
    let bytes = new_workbook(first_sheet, macro_enabled)?;
    keiri_fs::write_new(&source, &bytes)?;

    // The patch reads the scratch workbook and writes into the target's directory: the
    // scratch directory joins the allowed roots for this call only.
    let mut roots: Vec<PathBuf> = env.policy.roots().to_vec();
    roots.push(scratch.0.clone());
    let mut patch_env = env.clone();
    patch_env.policy = keiri_fs::PathPolicy::new(roots);
    env.policy.check(&target)?;
    let patch_req = PatchRequest {
        xlsx_path: source.display().to_string(),
        sheet: req.sheet.clone(),
        ops: req.ops.clone(),
        out_dir: Some(dir.display().to_string()),
        out_name: Some(name),
        on_conflict: req.on_conflict,
        auto_formula: req.auto_formula,
        dry_run: req.dry_run,
        return_inverse_ops: req.return_inverse_ops,
        preflight_formula_check: req.preflight_formula_check,
    };
    crate::patch::patch(&patch_req, &patch_env).map(|patched| patched.response)
}

/// A minimal workbook with one empty sheet.
fn new_workbook(sheet: &str, macro_enabled: bool) -> Result<Vec<u8>, Error> {
    let main_type = if macro_enabled {
        "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
    } else {
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
    };
    let sheet_name = crate::xml::escape_attr(sheet);
    let parts: [(&str, String); 6] = [
        (
            "[Content_Types].xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="{main_type}"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>"#
            ),
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#
                .to_string(),
        ),
        (
            "xl/workbook.xml",
            format!(
                r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><bookViews><workbookView/></bookViews><sheets><sheet name="{sheet_name}" sheetId="1" r:id="rId1"/></sheets><calcPr calcId="191029"/></workbook>"#
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#
                .to_string(),
        ),
        (
            "xl/worksheets/sheet1.xml",
            crate::sheet::SheetDoc::empty_xml(
                "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
            ),
        ),
        (
            "xl/styles.xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><fonts count="1"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>"#
                .to_string(),
        ),
    ];
    let backend = |e: zip::result::ZipError| Error::Backend(format!("writing the workbook: {e}"));
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, text) in parts {
        writer.start_file(name, options).map_err(backend)?;
        writer
            .write_all(text.as_bytes())
            .map_err(|e| Error::Backend(format!("writing the workbook: {e}")))?;
    }
    Ok(writer.finish().map_err(backend)?.into_inner())
}
