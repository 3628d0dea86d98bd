//! `keiri mcp`: the MCP server driven over stdio, first by raw JSON-RPC lines (no
//! dependencies: the protocol owns stdout, errors carry our codes), then end to end by the
//! official Python SDK (PyPI `mcp`), a client no one here wrote.
//!
//! The Python test creates a venv under `target/tmp/mcp-venv` and installs a pinned SDK into
//! it once. Without python3 or pip it prints a skip notice, except under `CI=true`, where it
//! fails: CI must run it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};

use super::{VALID_PLAN, catalog_dir, put};

/// The SDK release the end-to-end test runs against (pinned so an upstream release cannot
/// change what the test means).
const MCP_SDK: &str = "2.3.0";

/// The tools MCP offers: the ones that declare MCP as a front-end, read from the registry the
/// server serves (keiri-api's), never copied here.
fn mcp_tools() -> Vec<String> {
    let ws = tempfile::tempdir().unwrap();
    let registry = keiri_api::tools::registry(&keiri_api::Context::new(ws.path()));
    keiri_api::tools::mcp_scope(&registry).allowed
}

/// A shared fixture's bytes (fixtures live in ../shared beside the repository and are never
/// copied into it).
fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(keiri_testkit::shared_fixture(rel)).unwrap()
}

fn keiri_bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("keiri")
}

/// Global flags and `mcp` with `flags`, as a client's config would give them.
fn server_args(ws: &Path, flags: &[&str]) -> Vec<String> {
    let mut args = vec![
        "--workspace".to_string(),
        ws.display().to_string(),
        "--catalog".to_string(),
        catalog_dir().display().to_string(),
        "mcp".to_string(),
    ];
    args.extend(flags.iter().map(|s| s.to_string()));
    args
}

// ---------------------------------------------------------------------------------------------
// A generated workbook and an independent look inside it.

/// A one-sheet workbook: `Sheet1!A1` = "品目" (inline string), `Sheet1!B1` = 100.
fn minimal_xlsx() -> Vec<u8> {
    let files = [
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        ),
        (
            "xl/worksheets/sheet1.xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>品目</t></is></c><c r="B1"><v>100</v></c></row></sheetData></worksheet>"#,
        ),
    ];
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, text) in files {
        w.start_file(name, zip::write::SimpleFileOptions::default())
            .unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The worksheet XML of a saved workbook, read with the zip crate (not with our engine).
fn sheet_xml(path: &Path) -> String {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut zip = zip::ZipArchive::new(file).unwrap();
    let mut entry = zip.by_name("xl/worksheets/sheet1.xml").unwrap();
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut entry, &mut xml).unwrap();
    xml
}

/// A file's bytes and modification time, to prove it was not touched.
#[derive(Debug, PartialEq)]
struct Stamp {
    bytes: Vec<u8>,
    modified: SystemTime,
}

fn stamp(path: &Path) -> Stamp {
    Stamp {
        bytes: std::fs::read(path).unwrap(),
        modified: std::fs::metadata(path).unwrap().modified().unwrap(),
    }
}

fn put_bytes(path: &Path, bytes: &[u8]) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    #[allow(clippy::disallowed_methods)]
    std::fs::write(path, bytes).unwrap();
}

fn file_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---------------------------------------------------------------------------------------------
// Raw JSON-RPC over stdio: no client library at all.

/// A running `keiri mcp` with its stdout read line by line on a thread, so a silent server
/// fails the test after a timeout instead of hanging it.
struct RawServer {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: mpsc::Receiver<String>,
}

impl RawServer {
    fn start(args: &[String]) -> RawServer {
        RawServer::start_with_env(args, &[])
    }

    /// [`RawServer::start`] with `env` set for the server process.
    fn start_with_env(args: &[String], env: &[(&str, &Path)]) -> RawServer {
        let mut child = Command::new(keiri_bin())
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        RawServer {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next stdout line, which must be one JSON-RPC 2.0 message.
    fn receive(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("no answer from keiri mcp within 30 s");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON-RPC ({e}): {line:?}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        message
    }

    /// Sends a request and returns its result (or error) object.
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.receive();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    /// Closes stdin and waits for a clean exit; whatever else reaches stdout must be protocol.
    fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "keiri mcp did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "{status}");
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(1)) {
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout noise after the session ({e}): {line:?}"));
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
        }
    }
}

impl Drop for RawServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn raw_json_rpc_session_speaks_only_protocol_on_stdout() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    put(&ws.path().join("notes.txt"), "a\nb\n");
    put(&outside.path().join("other.txt"), "x\n");
    let root = ws.path().display().to_string();
    let mut server = RawServer::start(&server_args(ws.path(), &["--root", &root]));

    let init = server.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], "keiri", "{init}");
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let list = server.request(2, "tools/list", json!({}));
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let expected = mcp_tools();
    assert!(expected.len() >= 10, "{expected:?}");
    assert_eq!(names, expected);

    let other = outside.path().join("other.txt").display().to_string();
    let call = server.request(
        3,
        "tools/call",
        json!({"name": "check_code_scale",
               "arguments": {"file_paths": ["notes.txt", other], "output_format": "json"}}),
    );
    let body = &call["result"]["structuredContent"];
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(body["files"][0]["lines"], 2, "{call}");
    assert_eq!(body["errors"][0]["code"], "PATH_DENIED", "{call}");

    let call = server.request(
        4,
        "tools/call",
        json!({"name": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx"}}),
    );
    assert_eq!(call["result"]["isError"], true, "{call}");
    let body = &call["result"]["structuredContent"];
    assert_eq!(body["code"], "INVALID_REQUEST", "{call}");
    assert!(body["message"].as_str().unwrap().contains("ops"), "{call}");
    let text = call["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(&serde_json::from_str::<Value>(text).unwrap(), body);

    let unknown = server.request(5, "tools/call", json!({"name": "rm_rf", "arguments": {}}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    server.finish();
}

impl RawServer {
    /// A server for `ws` with `flags`, past the initialize handshake.
    fn ready(ws: &Path, flags: &[&str]) -> RawServer {
        RawServer::handshake(RawServer::start(&server_args(ws, flags)))
    }

    /// `server` past the initialize handshake.
    fn handshake(mut server: RawServer) -> RawServer {
        server.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "raw-test", "version": "0"}}),
        );
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Calls a tool; `Ok(body)` for a result, `Err(body)` for a tool error (whose text content
    /// must be the same JSON).
    fn call(&mut self, id: u64, tool: &str, arguments: Value) -> Result<Value, Value> {
        let answer = self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        let result = &answer["result"];
        let body = result["structuredContent"].clone();
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert_eq!(
            serde_json::from_str::<Value>(text).ok().as_ref(),
            Some(&body),
            "{answer}"
        );
        if result["isError"] == true {
            Err(body)
        } else {
            Ok(body)
        }
    }
}

/// ExStruct's schema tools, `exstruct_validate_input` and `exstruct_get_runtime_info`, called
/// with ExStruct's argument shapes (aliases included) over the protocol.
#[test]
fn exstruct_discovery_tools_answer_in_exstructs_shapes() {
    if keiri_testkit::skip_without_shared("fixtures/accounting/multi_sheet_ja.xlsx") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    // A real workbook (styling ops need its styles part).
    put_bytes(
        &ws.path().join("book.xlsx"),
        &fixture("accounting/multi_sheet_ja.xlsx"),
    );
    let before = stamp(&ws.path().join("book.xlsx"));
    let root = ws.path().display().to_string();
    let mut server = RawServer::ready(ws.path(), &["--root", &root, "--on-conflict", "skip"]);

    let list = server.call(2, "exstruct_list_ops", json!({})).unwrap();
    let ops = list["ops"].as_array().unwrap();
    let names: Vec<&str> = ops.iter().map(|o| o["op"].as_str().unwrap()).collect();
    for op in [
        "set_value",
        "set_style",
        "apply_table_style",
        "auto_fit_columns",
    ] {
        assert!(names.contains(&op), "{op} missing from {names:?}");
    }
    assert!(
        ops.iter()
            .all(|o| o["description"].as_str().is_some_and(|d| !d.is_empty()))
    );

    // ExStruct's own answer for set_fill_color, and the alias table of set_dimensions.
    let fill = server
        .call(3, "exstruct_describe_op", json!({"op": "set_fill_color"}))
        .unwrap();
    assert_eq!(
        fill["required"],
        json!(["sheet (or top-level sheet)", "fill_color"])
    );
    assert_eq!(fill["aliases"], json!({"color": "fill_color"}));
    assert!(fill["constraints"].as_array().unwrap().len() >= 2, "{fill}");
    assert_eq!(fill["example"]["op"], "set_fill_color");
    let dims = server
        .call(4, "exstruct_describe_op", json!({"op": "set_dimensions"}))
        .unwrap();
    assert_eq!(
        dims["aliases"],
        json!({"col": "columns", "height": "row_height", "row": "rows", "width": "column_width"})
    );
    let unknown = server
        .call(5, "exstruct_describe_op", json!({"op": "paint_cells"}))
        .unwrap_err();
    assert_eq!(unknown["code"], "INVALID_REQUEST");
    assert!(unknown["message"].as_str().unwrap().contains("set_value"));

    // The example describe_op gives, put on this workbook's sheet, is an op that applies.
    let mut example = fill["example"].clone();
    example["sheet"] = json!("入力データ");
    let checked = server
        .call(
            6,
            "exstruct_validate_input",
            json!({"xlsx_path": "book.xlsx", "ops": [example]}),
        )
        .unwrap();
    assert_eq!(checked["valid"], true, "{checked}");

    // ExStruct's form: the file alone.
    let readable = server
        .call(
            7,
            "exstruct_validate_input",
            json!({"xlsx_path": "book.xlsx"}),
        )
        .unwrap();
    assert_eq!(readable["is_readable"], true);
    assert_eq!(readable["errors"], json!([]));
    assert!(
        readable["sheet_names"]
            .as_array()
            .unwrap()
            .contains(&json!("入力データ")),
        "{readable}"
    );
    let missing = server
        .call(
            8,
            "exstruct_validate_input",
            json!({"xlsx_path": "nope.xlsx"}),
        )
        .unwrap();
    assert_eq!(missing["is_readable"], false);
    assert_eq!(missing["error_codes"], json!(["NOT_FOUND"]));

    // Ops with field aliases (name → sheet, color → fill_color, horizontal →
    // horizontal_align) and the top-level sheet; then an op that cannot apply here.
    let aliased = server
        .call(
            9,
            "exstruct_validate_input",
            json!({"xlsx_path": "book.xlsx", "sheet": "入力データ", "ops": [
                {"op": "add_sheet", "name": "集計"},
                {"op": "set_fill_color", "cell": "A1", "color": "#FFFF00"},
                {"op": "set_alignment", "range": "A1:B1", "horizontal": "center"},
                "{\"op\": \"set_value\", \"cell\": \"Z1\", \"value\": 3}"
            ]}),
        )
        .unwrap();
    assert_eq!(aliased["valid"], true, "{aliased}");
    assert_eq!(aliased["ops_checked"], 4);
    let failing = server
        .call(
            10,
            "exstruct_validate_input",
            json!({"xlsx_path": "book.xlsx", "ops": [
                {"op": "set_value", "sheet": "無い", "cell": "A1", "value": 1}
            ]}),
        )
        .unwrap();
    assert_eq!(failing["valid"], false);
    assert_eq!(failing["patch_error"]["op_index"], 0, "{failing}");

    let info = server
        .call(11, "exstruct_get_runtime_info", json!({}))
        .unwrap();
    let canonical = ws.path().canonicalize().unwrap().display().to_string();
    assert_eq!(info["root"], canonical.as_str());
    assert_eq!(info["roots"], json!([canonical]));
    assert_eq!(info["path_examples"]["relative"], "book.xlsx");
    assert!(info["platform"].as_str().is_some_and(|p| !p.is_empty()));
    assert!(info["cwd"].is_string());
    assert_eq!(info["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["on_conflict_default"], "skip");
    assert_eq!(info["limits"]["recommended_max_ops"], 200);
    assert_eq!(info["limits"]["max_style_target_cells"], 10_000);
    assert_eq!(
        info["supported_ops"].as_array().unwrap().len(),
        names.len(),
        "{info}"
    );

    assert_eq!(
        stamp(&ws.path().join("book.xlsx")),
        before,
        "no tool wrote the workbook"
    );
    assert_eq!(file_names(ws.path()), ["book.xlsx"], "nothing was written");
    server.finish();
}

/// The three read tools over the protocol, with ExStruct's argument shapes (`sheet`, `range`,
/// `addresses`, `include_*`, `max_cells`), reading the workbook itself; bad reads are tool
/// errors with stable codes.
#[test]
fn exstruct_read_tools_read_the_workbook_directly() {
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    put_bytes(&ws.path().join("book.xlsx"), &minimal_xlsx());
    put_bytes(&outside.path().join("other.xlsx"), &minimal_xlsx());
    let before = stamp(&ws.path().join("book.xlsx"));
    let root = ws.path().display().to_string();
    let mut server = RawServer::ready(ws.path(), &["--root", &root]);

    let range = server
        .call(
            2,
            "exstruct_read_range",
            json!({"xlsx_path": "book.xlsx", "sheet": "Sheet1", "range": "A1:C1"}),
        )
        .unwrap();
    assert_eq!(range["book_name"], "book.xlsx");
    assert_eq!(range["sheet_name"], "Sheet1");
    assert_eq!(range["range"], "A1:C1");
    assert_eq!(
        range["cells"],
        json!([
            {"cell": "A1", "value": "品目", "formula": null},
            {"cell": "B1", "value": 100, "formula": null},
            {"cell": "C1", "value": null, "formula": null},
        ])
    );
    // One worksheet: the sheet may be left out; include_empty false drops C1.
    let compact = server
        .call(
            3,
            "exstruct_read_range",
            json!({"xlsx_path": "book.xlsx", "range": "A1:C1", "include_empty": false}),
        )
        .unwrap();
    assert_eq!(compact["cells"].as_array().unwrap().len(), 2, "{compact}");

    let cells = server
        .call(
            4,
            "exstruct_read_cells",
            json!({"xlsx_path": "book.xlsx", "sheet": "Sheet1", "addresses": ["B1", "D9"]}),
        )
        .unwrap();
    assert_eq!(
        cells["cells"][0],
        json!({"cell": "B1", "value": 100, "formula": null})
    );
    assert_eq!(cells["missing_cells"], json!(["D9"]));

    // A formula written by a patch reads back with its formula.
    let root_book = "book.xlsx";
    server
        .call(
            5,
            "exstruct_patch",
            json!({"xlsx_path": root_book, "out_name": "calc.xlsx", "ops": [
                {"op": "set_formula", "sheet": "Sheet1", "cell": "C1", "formula": "=B1*2"}
            ]}),
        )
        .unwrap();
    let formulas = server
        .call(
            6,
            "exstruct_read_formulas",
            json!({"xlsx_path": "calc.xlsx", "sheet": "Sheet1", "include_values": true}),
        )
        .unwrap();
    assert_eq!(
        formulas["formulas"],
        json!([{"cell": "C1", "formula": "=B1*2", "value": null}])
    );
    assert_eq!(formulas["truncated"], false);
    let none = server
        .call(
            7,
            "exstruct_read_formulas",
            json!({"xlsx_path": "calc.xlsx", "sheet": "Sheet1", "range": "A1:B9"}),
        )
        .unwrap();
    assert_eq!(none["formulas"], json!([]));
    assert_eq!(none["range"], "A1:B9");

    let other = outside.path().join("other.xlsx").display().to_string();
    for (id, tool, arguments, code) in [
        (
            8,
            "exstruct_read_range",
            json!({"xlsx_path": "book.xlsx", "range": "A1:"}),
            "INVALID_REQUEST",
        ),
        (
            9,
            "exstruct_read_range",
            json!({"xlsx_path": "book.xlsx", "sheet": "無い", "range": "A1"}),
            "SHEET_NOT_FOUND",
        ),
        (
            10,
            "exstruct_read_range",
            json!({"xlsx_path": "book.xlsx", "range": "A1:J2000"}),
            "LIMIT_EXCEEDED",
        ),
        (
            11,
            "exstruct_read_range",
            json!({"xlsx_path": "book.xlsx", "range": "A1:B2", "max_cells": 3}),
            "LIMIT_EXCEEDED",
        ),
        (
            12,
            "exstruct_read_cells",
            json!({"xlsx_path": "book.xlsx", "addresses": ["A0"]}),
            "INVALID_REQUEST",
        ),
        (
            13,
            "exstruct_read_cells",
            json!({"xlsx_path": "book.xlsx", "addresses": []}),
            "INVALID_REQUEST",
        ),
        (
            14,
            "exstruct_read_formulas",
            json!({"xlsx_path": "book.xlsx", "range": "1:A"}),
            "INVALID_REQUEST",
        ),
        (
            15,
            "exstruct_read_formulas",
            json!({"xlsx_path": other, "sheet": "Sheet1"}),
            "PATH_DENIED",
        ),
        (
            16,
            "exstruct_read_cells",
            json!({"xlsx_path": "nope.xlsx", "addresses": ["A1"]}),
            "NOT_FOUND",
        ),
        (
            17,
            "exstruct_read_range",
            json!({"out_path": "book.json", "range": "A1"}),
            "INVALID_REQUEST",
        ),
    ] {
        let err = server.call(id, tool, arguments.clone()).unwrap_err();
        assert_eq!(err["code"], code, "{tool} {arguments}: {err}");
    }
    assert_eq!(stamp(&ws.path().join("book.xlsx")), before);
    server.finish();
}

/// `exstruct_extract` with ExStruct's argument shapes on its own sample workbook: the file it
/// writes holds the chart's series, the flowchart's shapes and its connectors' ends.
#[test]
fn exstruct_extract_reports_charts_shapes_and_connectors() {
    if keiri_testkit::skip_without_shared("fixtures/xlsx/chart_shapes.xlsx") {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    put_bytes(
        &ws.path().join("book.xlsx"),
        &fixture("xlsx/chart_shapes.xlsx"),
    );
    let root = ws.path().display().to_string();
    let mut server = RawServer::start(&server_args(ws.path(), &["--root", &root]));
    server.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}}),
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let call = server.request(
        2,
        "tools/call",
        json!({"name": "exstruct_extract",
               "arguments": {"xlsx_path": "book.xlsx", "mode": "standard", "format": "json",
                             "options": {"alpha_col": true, "pretty": true}}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    let body = &call["result"]["structuredContent"];
    assert_eq!(
        body["workbook_meta"],
        json!({"sheet_names": ["Sheet1"], "sheet_count": 1})
    );
    assert_eq!(body["engine"], "internal_api");
    let out = PathBuf::from(body["out_path"].as_str().unwrap());
    assert_eq!(out, ws.path().join("book.json").canonicalize().unwrap());
    let data: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let sheet = &data["sheets"]["Sheet1"];
    let chart = &sheet["charts"][0];
    assert_eq!(chart["chart_type"], "Line", "{chart}");
    assert_eq!(chart["title"], "売上データ");
    assert_eq!(
        chart["series"][0],
        json!({"name": "製品A", "name_range": "Sheet1!$C$3",
               "x_range": "Sheet1!$B$4:$B$9", "y_range": "Sheet1!$C$4:$C$9"})
    );
    let shapes = sheet["shapes"].as_array().unwrap();
    let start = shapes.iter().find(|s| s["text"] == "開始").unwrap();
    let read = shapes
        .iter()
        .find(|s| s["text"] == "入力データ読み込み")
        .unwrap();
    assert_eq!(start["type"], "AutoShape-FlowchartProcess");
    let first_arrow = shapes.iter().find(|s| s["kind"] == "arrow").unwrap();
    assert_eq!(first_arrow["begin_id"], start["id"]);
    assert_eq!(first_arrow["end_id"], read["id"]);
    assert_eq!(
        shapes.iter().filter(|s| s["kind"] == "arrow").count(),
        11,
        "{shapes:?}"
    );

    // TOON, light mode, into a new directory; a workbook outside the roots is refused.
    let call = server.request(
        3,
        "tools/call",
        json!({"name": "exstruct_extract",
               "arguments": {"xlsx_path": "book.xlsx", "mode": "light", "format": "toon",
                             "out_dir": "out"}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    let toon = std::fs::read_to_string(ws.path().join("out/book.toon")).unwrap();
    assert!(toon.starts_with("book_name: book.xlsx"), "{toon}");
    assert!(!toon.contains("charts"), "{toon}");
    let call = server.request(
        4,
        "tools/call",
        json!({"name": "exstruct_extract", "arguments": {"xlsx_path": "/etc/hosts.xlsx"}}),
    );
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert_eq!(
        call["result"]["structuredContent"]["code"], "PATH_DENIED",
        "{call}"
    );
    server.finish();
}

/// `exstruct_make` with ExStruct's documented example, then `exstruct_extract` on the result.
#[test]
fn exstruct_make_creates_a_workbook_that_extract_reads_back() {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().display().to_string();
    let mut server = RawServer::start(&server_args(ws.path(), &["--root", &root]));
    server.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}}),
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = server.request(
        2,
        "tools/call",
        json!({"name": "exstruct_make",
               "arguments": {"out_path": "new_book.xlsx", "ops": [
                   {"op": "add_sheet", "sheet": "Data"},
                   {"op": "set_value", "sheet": "Data", "cell": "A1", "value": "hello"},
                   {"op": "merge_cells", "sheet": "Data", "range": "A1:B1"}]}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    let body = &call["result"]["structuredContent"];
    assert!(body["error"].is_null(), "{call}");
    assert!(ws.path().join("new_book.xlsx").is_file());
    let call = server.request(
        3,
        "tools/call",
        json!({"name": "exstruct_extract", "arguments": {"xlsx_path": "new_book.xlsx"}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(
        call["result"]["structuredContent"]["workbook_meta"]["sheet_names"],
        json!(["Sheet1", "Data"])
    );
    let data: Value =
        serde_json::from_slice(&std::fs::read(ws.path().join("new_book.json")).unwrap()).unwrap();
    assert_eq!(
        data["sheets"]["Data"],
        json!({"rows": [{"r": 1, "c": {"A": "hello"}}],
               "merged_cells": {"schema": ["r1", "c1", "r2", "c2", "v"],
                                "items": [[1, 0, 1, 1, "hello"]]}})
    );
    let call = server.request(
        4,
        "tools/call",
        json!({"name": "exstruct_make", "arguments": {"out_path": "old.xls"}}),
    );
    assert_eq!(
        call["result"]["structuredContent"]["code"], "INVALID_REQUEST",
        "{call}"
    );
    server.finish();
}

#[test]
fn run_plan_runs_on_the_workspace_files_and_refuses_to_write_outside_the_run() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
    put(
        &ws.path().join("inputs/請求書.csv"),
        "請求書番号,取引先,金額\nINV-001,山田商事,10000\nINV-002,佐藤工業,1200\n",
    );
    let before = std::fs::read(ws.path().join("inputs/請求書.csv")).unwrap();
    let plan = "id: mcp_run\ngraph:\n  - {id: read, block: csv.read, in: {path: inputs/請求書.csv}, out: {rows: rows}}\n";
    let mut server = RawServer::start(&server_args(ws.path(), &[]));
    server.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}}),
    );
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = server.request(
        2,
        "tools/call",
        json!({"name": "run_plan", "arguments": {"yaml": plan}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    let body = &call["result"]["structuredContent"];
    assert_eq!(body["status"], "finished", "{call}");
    assert_eq!(
        body["nodes"][0],
        json!({"id": "read", "status": "finished"})
    );
    let run_dir = ws.path().join(body["run_dir"].as_str().unwrap());
    assert!(run_dir.join("outputs/read/rows.arrow").is_file(), "{call}");
    assert_eq!(
        std::fs::read(ws.path().join("inputs/請求書.csv")).unwrap(),
        before
    );

    let call = server.request(
        3,
        "tools/call",
        json!({"name": "run_plan", "arguments": {"yaml": plan, "write": true}}),
    );
    assert_eq!(call["result"]["isError"], true, "{call}");
    assert_eq!(
        call["result"]["structuredContent"]["code"], "PATH_DENIED",
        "{call}"
    );
    server.finish();
}

#[test]
fn bad_flags_stop_the_server_before_the_protocol_starts() {
    let ws = tempfile::tempdir().unwrap();
    let missing = ws.path().join("missing").display().to_string();
    let check = |flags: &[&str], message: &str| {
        let out = Command::new(keiri_bin())
            .args(server_args(ws.path(), flags))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(out.stdout.is_empty(), "{flags:?}: stdout must stay clean");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(message), "{flags:?}: {stderr}");
    };
    check(&["--root", &missing], "--root");
    check(&["--deny", "a{"], "--deny");
    check(&["--on-conflict", "replace"], "overwrite");
}

// ---------------------------------------------------------------------------------------------
// The Python SDK, end to end.

/// Reports that the end-to-end test cannot run: a failure under `CI=true`, a visible notice
/// otherwise. Written straight to stderr so the test harness does not swallow it.
fn unavailable(reason: &str) -> Option<PathBuf> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    assert!(
        !ci,
        "CI=true: the MCP end-to-end test needs python3 with venv and pip ({reason})"
    );
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED mcp end-to-end test (python MCP SDK unavailable): {reason}"
    );
    None
}

fn venv_python(venv: &Path) -> PathBuf {
    if cfg!(windows) {
        venv.join("Scripts").join("python.exe")
    } else {
        venv.join("bin").join("python")
    }
}

fn has_pinned_sdk(python: &Path) -> bool {
    let probe = format!(
        "import importlib.metadata as m, mcp; raise SystemExit(m.version('mcp') != '{MCP_SDK}')"
    );
    Command::new(python)
        .args(["-c", &probe])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The venv's python with the pinned SDK, creating the venv on first use.
fn python_client() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mcp-venv");
    let python = venv_python(&venv);
    if has_pinned_sdk(&python) {
        return Some(python);
    }
    // Tests run as separate processes: one makes the venv while the others wait for it (two
    // `venv --clear` at once break each other).
    let lock = std::fs::File::create(venv.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    if has_pinned_sdk(&python) {
        return Some(python);
    }
    let base = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        match cmd.output() {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!(
                "{what} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => Err(format!("{what}: {e}")),
        }
    };
    let made = run(
        Command::new(&base)
            .args(["-m", "venv", "--clear"])
            .arg(&venv),
        &format!("{base} -m venv"),
    )
    .and_then(|()| {
        run(
            Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                &format!("mcp=={MCP_SDK}"),
            ]),
            "pip install mcp",
        )
    });
    match made {
        Ok(()) if has_pinned_sdk(&python) => Some(python),
        Ok(()) => unavailable("mcp installed but does not import"),
        Err(reason) => unavailable(&reason),
    }
}

/// One client session: starts `keiri mcp` with `flags`, makes `calls` and returns the
/// client's report (see tests/mcp_client.py).
fn session(python: &Path, ws: &Path, flags: &[&str], mode: &str, calls: Value) -> Value {
    session_spec(
        python,
        json!({
            "command": keiri_bin(),
            "args": server_args(ws, flags),
            "mode": mode,
            "calls": calls,
        }),
    )
}

/// A client session as `spec` says (see tests/mcp_client.py).
fn session_spec(python: &Path, spec: Value) -> Value {
    let spec_dir = tempfile::tempdir().unwrap();
    let spec_path = spec_dir.path().join("spec.json");
    put(&spec_path, &spec.to_string());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out = Command::new(python)
        .arg(&script)
        .arg(&spec_path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the MCP client failed:\n{stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "client output is not JSON ({e}):\n{}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Checks one recorded call: `Ok((pointer, value))` for a successful result whose structured
/// content has `value` at `pointer`, `Err(code)` for a tool error with that code.
fn check(report: &Value, index: usize, expect: Result<(&str, Value), &str>) {
    let call = &report["calls"][index];
    let body = &call["structured"];
    match expect {
        Ok((pointer, value)) => {
            assert_eq!(call["is_error"], false, "call {index}: {call}");
            assert_eq!(body.pointer(pointer), Some(&value), "call {index}: {call}");
        }
        Err(code) => {
            assert_eq!(call["is_error"], true, "call {index}: {call}");
            assert_eq!(body["code"], code, "call {index}: {call}");
            assert!(
                body["message"].as_str().is_some_and(|m| !m.is_empty()),
                "{call}"
            );
        }
    }
    let text = call["text"][0].as_str().unwrap_or_default();
    assert_eq!(
        &serde_json::from_str::<Value>(text).unwrap(),
        body,
        "call {index}"
    );
}

const NOTES: &str = "一行目\n二行目\n三行目\n";
const NOTES_PATCH: &str =
    "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n 一行目\n-二行目\n+2行目\n 三行目\n";

fn set_b1(value: i64) -> Value {
    json!([
        {"op": "set_value", "sheet": "Sheet1", "cell": "B1", "value": value},
        {"op": "set_value", "sheet": "Sheet1", "cell": "A2", "value": "追加"}
    ])
}

fn out_name(report: &Value, index: usize) -> String {
    let out_path = report["calls"][index]["structured"]["out_path"]
        .as_str()
        .unwrap();
    Path::new(out_path)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn python_sdk_client_end_to_end() {
    let Some(python) = python_client() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let book = root.join("book.xlsx");
    put_bytes(&book, &minimal_xlsx());
    put_bytes(&root.join("private/book.xlsx"), &minimal_xlsx());
    put(&root.join("notes.txt"), NOTES);
    let foreign_notes = outside.path().join("notes.txt");
    put(&foreign_notes, NOTES);
    let foreign = outside.path().join("book.xlsx");
    put_bytes(&foreign, &minimal_xlsx());
    let root_arg = root.display().to_string();
    let original = stamp(&book);

    // Session 1: the handshake, the tool list, a dry run and everything that must be refused;
    // nothing may be written.
    let report = session(
        &python,
        ws.path(),
        &["--root", &root_arg, "--deny", "private/**"],
        "legacy",
        json!([
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": set_b1(250), "dry_run": true, "return_inverse_ops": true}},
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": foreign.display().to_string(), "ops": set_b1(1)}},
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": set_b1(1), "out_dir": outside.path().display().to_string()}},
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "private/book.xlsx", "ops": set_b1(1)}},
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": [{"op": "set_value", "sheet": "Sheet1"}]}},
            {"tool": "check_code_scale", "arguments": {"file_paths": ["notes.txt", foreign.display().to_string()], "metrics_only": true, "output_format": "json"}},
            {"tool": "check_code_scale", "arguments": {"file_paths": ["notes.txt"], "metrics_only": true}},
            {"tool": "extract_code_section", "arguments": {"file_path": "notes.txt", "start_line": 2, "end_line": 2, "output_format": "json"}},
            {"tool": "extract_code_section", "arguments": {"requests": [{"file_path": "notes.txt", "sections": [{"start_line": 1, "end_line": 1}, {"start_line": 3}]}]}},
            {"tool": "validate_plan", "arguments": {"yaml": VALID_PLAN}},
            {"tool": "dry_run_plan", "arguments": {"yaml": VALID_PLAN}},
            {"tool": "dry_run_plan", "arguments": {"yaml": VALID_PLAN.replace("csv.read", "csv.nope")}},
            {"tool": "retrieve_blocks", "arguments": {"instruction": "請求書の重複チェック", "mode": "bm25"}},
            {"tool": "retrieve_blocks", "arguments": {"instruction": "x", "k": 3}},
            {"tool": "apply_patch", "arguments": {"filePath": foreign_notes.display().to_string(), "patch": NOTES_PATCH}},
            {"tool": "apply_patch", "arguments": {"filePath": "notes.txt", "patch": "@@ -1 +1 @@\n-x\n+y\n"}},
        ]),
    );
    assert_eq!(report["server_info"]["name"], "keiri", "{report}");
    // The initialize handshake, at the newest version that still has one.
    assert_eq!(report["protocol_version"], "2025-11-25", "{report}");
    assert!(report["capabilities"]["tools"].is_object(), "{report}");
    assert!(report["instructions"].as_str().unwrap().contains(&root_arg));

    let tools = report["tools"].as_array().unwrap();
    for name in mcp_tools() {
        let tool = tools.iter().find(|t| t["name"] == name);
        let tool = tool.unwrap_or_else(|| panic!("{name} missing from tools/list"));
        assert!(
            tool["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name}"
        );
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        assert!(tool["inputSchema"]["properties"].is_object(), "{name}");
    }
    let patch_tool = tools
        .iter()
        .find(|t| t["name"] == "exstruct_patch")
        .unwrap();
    let input = &patch_tool["inputSchema"];
    assert_eq!(input["required"], json!(["xlsx_path", "ops"]));
    assert_eq!(input["properties"]["ops"]["type"], "array");
    let on_conflict = input["$defs"]["OnConflict"].to_string();
    for mode in ["overwrite", "skip", "rename"] {
        assert!(
            on_conflict.contains(&format!("\"{mode}\"")),
            "{mode}: {on_conflict}"
        );
    }
    let diff_tool = tools.iter().find(|t| t["name"] == "apply_patch").unwrap();
    assert_eq!(
        diff_tool["description"],
        "Applies a unified diff patch to a file. Best for making precise code changes."
    );
    assert_eq!(
        diff_tool["inputSchema"]["required"],
        json!(["filePath", "patch"])
    );
    let retrieve_tool = tools
        .iter()
        .find(|t| t["name"] == "retrieve_blocks")
        .unwrap();
    assert!(retrieve_tool["outputSchema"]["properties"]["candidates"].is_object());
    let scale_tool = tools
        .iter()
        .find(|t| t["name"] == "check_code_scale")
        .unwrap();
    assert!(scale_tool["inputSchema"]["properties"]["metrics_only"].is_object());
    let section_tool = tools
        .iter()
        .find(|t| t["name"] == "extract_code_section")
        .unwrap();
    for field in [
        "requests",
        "file_path",
        "start_line",
        "end_line",
        "output_format",
    ] {
        assert!(
            section_tool["inputSchema"]["properties"][field].is_object(),
            "{field}"
        );
    }

    check(
        &report,
        0,
        Ok((
            "/patch_diff/0/before",
            json!({"kind": "value", "value": 100}),
        )),
    );
    check(
        &report,
        0,
        Ok((
            "/patch_diff/0/after",
            json!({"kind": "value", "value": 250}),
        )),
    );
    check(
        &report,
        0,
        Ok((
            "/patch_diff/1/after",
            json!({"kind": "value", "value": "追加"}),
        )),
    );
    // Undo runs backwards: the last op is undone first.
    check(
        &report,
        0,
        Ok((
            "/inverse_ops/0",
            json!({"op": "set_value", "sheet": "Sheet1", "cell": "A2", "value": null}),
        )),
    );
    check(
        &report,
        0,
        Ok((
            "/inverse_ops/1",
            json!({"op": "set_value", "sheet": "Sheet1", "cell": "B1", "value": 100}),
        )),
    );
    check(&report, 0, Ok(("/error", Value::Null)));
    assert_eq!(out_name(&report, 0), "book_patched.xlsx");
    check(&report, 1, Err("PATH_DENIED"));
    check(&report, 2, Err("PATH_DENIED"));
    check(&report, 3, Err("PATH_DENIED"));
    check(&report, 4, Err("INVALID_REQUEST"));
    assert!(
        report["calls"][4]["structured"]["message"]
            .as_str()
            .unwrap()
            .contains("ops[0]")
    );
    check(&report, 5, Ok(("/files/0/lines", json!(3))));
    check(&report, 5, Ok(("/errors/0/code", json!("PATH_DENIED"))));
    check(&report, 6, Ok(("/output_format", json!("toon"))));
    assert!(
        report["calls"][6]["structured"]["toon_content"]
            .as_str()
            .unwrap()
            .contains("notes.txt")
    );
    check(
        &report,
        7,
        Ok(("/results/0/sections/0/content", json!("二行目"))),
    );
    check(&report, 8, Ok(("/output_format", json!("toon"))));
    let toon = report["calls"][8]["structured"]["toon_content"]
        .as_str()
        .unwrap();
    assert!(
        toon.contains("一行目") && toon.contains("三行目") && !toon.contains("二行目"),
        "{toon}"
    );
    check(&report, 9, Ok(("/valid", json!(true))));
    check(
        &report,
        10,
        Ok(("/order", json!(["read", "dupes", "report"]))),
    );
    check(&report, 11, Err("PLAN_INVALID"));
    assert!(report["calls"][11]["structured"]["details"]["findings"][0]["code"].is_string());
    check(&report, 12, Ok(("/mode", json!("bm25"))));
    let candidates = report["calls"][12]["structured"]["candidates"]
        .as_array()
        .unwrap();
    assert!(
        candidates
            .iter()
            .any(|c| c["id"] == "matching.duplicate_invoices"),
        "{candidates:?}"
    );
    check(&report, 13, Err("INVALID_REQUEST"));
    check(&report, 14, Err("PATH_DENIED"));
    check(&report, 15, Err("APPLY_FAILED"));
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        NOTES
    );

    assert_eq!(
        stamp(&book),
        original,
        "a dry run and refused calls leave the workbook as it was"
    );
    assert_eq!(file_names(&root), ["book.xlsx", "notes.txt", "private"]);
    assert_eq!(file_names(outside.path()), ["book.xlsx", "notes.txt"]);
    assert_eq!(std::fs::read_to_string(&foreign_notes).unwrap(), NOTES);

    // Session 2: the real save goes to {stem}_patched.xlsx; the original stays as it was.
    let report = session(
        &python,
        ws.path(),
        &["--root", &root_arg],
        "legacy",
        json!([
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": set_b1(250)}},
            {"tool": "apply_patch", "arguments": {"filePath": "notes.txt", "patch": NOTES_PATCH}},
        ]),
    );
    check(&report, 1, Ok(("/hunks", json!(1))));
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "一行目\n2行目\n三行目\n"
    );
    check(&report, 0, Ok(("/patch_diff/0/status", json!("applied"))));
    assert_eq!(out_name(&report, 0), "book_patched.xlsx");
    let patched = root.join("book_patched.xlsx");
    let xml = sheet_xml(&patched);
    assert!(xml.contains("<v>250</v>") && xml.contains("追加"), "{xml}");
    assert_eq!(stamp(&book), original);
    assert!(sheet_xml(&book).contains("<v>100</v>"));

    // Session 3: the server default (skip) applies when the request leaves on_conflict out,
    // and a value in the request wins over it.
    let saved = stamp(&patched);
    let report = session(
        &python,
        ws.path(),
        &["--root", &root_arg, "--on-conflict", "skip"],
        "legacy",
        json!([
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": set_b1(999)}},
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": set_b1(999), "on_conflict": "overwrite"}},
        ]),
    );
    check(&report, 0, Ok(("/patch_diff", json!([]))));
    assert!(
        !report["calls"][0]["structured"]["warnings"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    check(
        &report,
        1,
        Ok((
            "/patch_diff/0/after",
            json!({"kind": "value", "value": 999}),
        )),
    );
    assert_eq!(out_name(&report, 1), "book_patched.xlsx");
    assert_ne!(
        stamp(&patched),
        saved,
        "the request's overwrite replaced the output"
    );
    assert!(sheet_xml(&patched).contains("<v>999</v>"));

    // Session 4: the other way round (server default overwrite, request skip), negotiated the
    // 2026 way (server/discover) to cover clients that no longer send initialize.
    let report = session(
        &python,
        ws.path(),
        &["--root", &root_arg, "--on-conflict", "overwrite"],
        "auto",
        json!([
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": set_b1(777)}},
            {"tool": "exstruct_patch", "arguments": {"xlsx_path": "book.xlsx", "ops": set_b1(555), "on_conflict": "skip"}},
        ]),
    );
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    check(
        &report,
        0,
        Ok((
            "/patch_diff/0/after",
            json!({"kind": "value", "value": 777}),
        )),
    );
    check(&report, 1, Ok(("/patch_diff", json!([]))));
    assert!(sheet_xml(&patched).contains("<v>777</v>"));
    assert_eq!(
        file_names(&root),
        ["book.xlsx", "book_patched.xlsx", "notes.txt", "private"]
    );
    assert_eq!(stamp(&book), original);
}

// ---------------------------------------------------------------------------------------------
// One retriever behind every front-end.

/// The ids of a retrieval response's candidates, in order.
fn candidate_ids(response: &Value) -> Vec<String> {
    response["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("no candidates: {response}"))
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_panel_the_planner_the_chat_and_mcp_get_the_same_candidates() {
    use keiri_llm::testkit::{FakeServer, Reply};

    use super::{keiri, keiri_with_llm, stdout_json};

    const INSTRUCTION: &str =
        "毎月の請求書を確認して、二重に計上されたものを見つけてExcelで報告する";
    let ws = tempfile::tempdir().unwrap();
    put(
        &ws.path().join("invoices.csv"),
        "vendor_name,invoice_no,amount,issue_date\nA社,INV-1,1000,2026-10-01\n",
    );

    // The Candidates panel's call.
    let panel = stdout_json(
        &keiri(ws.path())
            .args([
                "retrieve",
                "--json",
                "--docs",
                "invoices.csv",
                "--",
                INSTRUCTION,
            ])
            .assert()
            .success(),
    );
    let expected = candidate_ids(&panel);
    if panel["mode"] == "hybrid" {
        // Where the model is installed (always in CI), the keyword ranking alone differs: a
        // front-end with its own BM25 index would fail this test.
        let bm25 = stdout_json(
            &keiri(ws.path())
                .args([
                    "retrieve",
                    "--json",
                    "--mode",
                    "bm25",
                    "--docs",
                    "invoices.csv",
                ])
                .args(["--", INSTRUCTION])
                .assert()
                .success(),
        );
        assert_ne!(
            candidate_ids(&bm25),
            expected,
            "choose an input where they differ"
        );
    } else {
        assert!(
            std::env::var("CI").is_err(),
            "CI runs with the embedding model: {panel}"
        );
        eprintln!("NOTE: no embedding model here; every front-end ranks with BM25");
    }

    // The planner: the skeleton request's block enum is its candidates, in order.
    let (url, server) =
        FakeServer::start_background(vec![Reply::error(400, "enough for this test")]).unwrap();
    keiri_with_llm(ws.path(), Some(&url))
        .args([
            "generate",
            "--json",
            "--apply-mode",
            "llm-only",
            "--docs",
            "invoices.csv",
        ])
        .args(["--instruction", INSTRUCTION])
        .assert()
        .failure();
    let requests = server.requests();
    let schema = &requests[0].body["response_format"]["json_schema"]["schema"];
    let planner: Vec<String> =
        schema["properties"]["nodes"]["items"]["properties"]["block"]["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("no block enum: {schema}"))
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
    assert_eq!(planner, expected, "the planner's candidates");

    // The chat agent's search tool, called by the (fake) model with the same input.
    let args = json!({"instruction": INSTRUCTION, "docs": ["invoices.csv"]}).to_string();
    let (url, server) = FakeServer::start_background(vec![
        Reply::tool_calls(&[("c1", "retrieve_blocks", &args)]),
        Reply::content("候補を調べました。"),
    ])
    .unwrap();
    keiri_with_llm(ws.path(), Some(&url))
        .args(["chat", "--message", "どのブロックを使えばいい？"])
        .assert()
        .success();
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the tool result went back to the model");
    let tool_message = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("no tool message: {}", requests[1].body))
        .clone();
    let result: Value = serde_json::from_str(tool_message["content"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("{e}: {tool_message}"));
    assert_eq!(candidate_ids(&result), expected, "the chat's candidates");

    // MCP's retrieve_blocks.
    let root = ws.path().display().to_string();
    let mut mcp = RawServer::start(&server_args(ws.path(), &["--root", &root]));
    mcp.request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw-test", "version": "0"}}),
    );
    mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = mcp.request(
        2,
        "tools/call",
        json!({"name": "retrieve_blocks",
               "arguments": {"instruction": INSTRUCTION, "docs": ["invoices.csv"]}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(
        candidate_ids(&call["result"]["structuredContent"]),
        expected,
        "MCP's candidates"
    );
    mcp.finish();
}

/// MCP's `retrieve_blocks` over a team's own catalog answers with dense scores on the first
/// call (a client asks once; it used to get BM25 while the process had not even started
/// embedding), and a second server finds the vectors in the disk cache.
#[test]
fn retrieve_blocks_over_a_teams_own_catalog_is_hybrid_at_once_and_cached() {
    use super::retrieve::{hybrid_at_once_then_from_the_cache, no_model_here, own_catalog};
    let ws = tempfile::tempdir().unwrap();
    let own = own_catalog(ws.path());
    let cache = ws.path().join("embed-cache");
    let config = super::test_config_dir(ws.path());
    let search = || {
        let args: Vec<String> = [
            "--workspace".as_ref(),
            ws.path().as_os_str(),
            "--catalog".as_ref(),
            own.as_os_str(),
            "mcp".as_ref(),
        ]
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
        let env = [
            ("KEIRI_EMBED_CACHE_DIR", cache.as_path()),
            ("KEIRI_CONFIG_DIR", config.as_path()),
            ("KEIRI_EMBEDDER", Path::new("auto")),
        ];
        let mut server = RawServer::handshake(RawServer::start_with_env(&args, &env));
        let answer = server
            .call(
                2,
                "retrieve_blocks",
                json!({"instruction": "請求書の二重計上を見つける", "mode": "hybrid"}),
            )
            .unwrap();
        server.finish();
        answer
    };
    if no_model_here() {
        return;
    }
    hybrid_at_once_then_from_the_cache(search, &cache);
}

/// Runtime chat over MCP: `run_plan` of a plan with an open var answers with a paused run
/// whose question is the plan's own (a CSV file); given the var, the run finishes.
#[test]
fn run_plan_with_an_open_var_returns_its_question_as_a_paused_run() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
    put(
        &ws.path().join("inputs/請求書.csv"),
        "請求書番号,取引先,金額\nINV-001,山田商事,10000\n",
    );
    let plan = "id: mcp_open\nvars: {src: null}\ngraph:\n  - {id: read, block: csv.read, in: {path: \"${vars.src}\"}, out: {rows: rows}}\n";
    let mut server = RawServer::ready(ws.path(), &[]);
    let body = server
        .call(2, "run_plan", json!({"yaml": plan}))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(body["status"], "paused", "{body}");
    let question = &body["paused"][0]["question"];
    assert_eq!(body["paused"][0]["node"], "run_inputs", "{body}");
    assert_eq!(question["fields"][0]["id"], "src", "{body}");
    assert_eq!(question["fields"][0]["type"], "file", "{body}");
    let body = server
        .call(
            3,
            "run_plan",
            json!({"yaml": plan, "vars": {"src": "inputs/請求書.csv"}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(body["status"], "finished", "{body}");
    server.finish();
}

/// Runtime chat through a client that can elicit (the official Python SDK with an elicitation
/// callback): `run_plan` of a plan with an open file asks it with the plan's own words as a
/// form (a required string), and the run finishes on the answer; a client without the
/// capability gets the paused run (above).
#[test]
fn run_plan_elicits_the_open_questions_when_the_client_can() {
    let Some(python) = python_client() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("inputs")).unwrap();
    put(
        &ws.path().join("inputs/請求書.csv"),
        "請求書番号,取引先,金額\nINV-001,山田商事,10000\nINV-002,佐藤工業,1200\n",
    );
    let plan = "id: mcp_elicit\nvars: {src: null}\ngraph:\n  - {id: read, block: csv.read, in: {path: \"${vars.src}\"}, out: {rows: rows}}\n";
    let report = session_spec(
        &python,
        json!({
            "command": keiri_bin(),
            "args": server_args(ws.path(), &[]),
            "calls": [{"tool": "run_plan", "arguments": {"yaml": plan}}],
            "elicit": {"src": "inputs/請求書.csv"},
        }),
    );
    let asked = &report["elicited"][0];
    let schema = &asked["requestedSchema"];
    assert_eq!(schema["properties"]["src"]["type"], "string", "{report}");
    assert_eq!(schema["required"], json!(["src"]), "{report}");
    assert!(
        asked["message"].as_str().unwrap().contains("src"),
        "{report}"
    );
    check(&report, 0, Ok(("/status", json!("finished"))));
    assert_eq!(report["elicited"].as_array().unwrap().len(), 1, "{report}");
}
