#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Integration tests of keiri-plan, one binary with a module per area.

mod catalog;
mod column_reads;
mod columns;
mod compat;
mod compose;
mod dry_run;
mod fuzz;
mod io;
mod mapping_columns;
mod register;
mod requirements;
mod template;
mod validate;

use std::path::{Path, PathBuf};

use keiri_plan::Catalog;

/// Load problems as (file name, line), sorted by file: what a loader test compares.
pub fn issue_summary(issues: &[keiri_plan::CatalogIssue]) -> Vec<(String, Option<usize>)> {
    let mut got: Vec<(String, Option<usize>)> = issues
        .iter()
        .map(|i| {
            (
                i.file.file_name().unwrap().to_string_lossy().into_owned(),
                i.line,
            )
        })
        .collect();
    got.sort();
    got
}

/// A small catalog written for these tests, so rule tests do not depend on the shipped one.
pub const TEST_SPECS: &[(&str, &str)] = &[
    (
        "input/csv.read.yaml",
        r#"
id: csv.read
version: 1.0.0
description: CSVを読み込む
description_en: Read a CSV file
inputs:
  path: {type: string, required: true, description: パス}
  encoding: {type: string, enum: [auto, utf-8, shift_jis], default: auto, description: 文字コード}
  header: {type: boolean, description: 見出し行}
outputs:
  rows: {type: array, items: {type: object}, description: 行}
  summary: {type: object, description: 概要}
"#,
    ),
    (
        "transforms/transforms.filter.yaml",
        r#"
id: transforms.filter
version: 1.0.0
description: 行を絞り込む
inputs:
  rows: {type: array, required: true, description: 行}
  condition: {type: string, required: true, description: 条件}
  limit: {type: integer, description: 上限}
outputs:
  rows: {type: array, description: 行}
  count: {type: integer, description: 件数}
"#,
    ),
    (
        "ai/ai.process_llm.yaml",
        r#"
id: ai.process_llm
version: 1.0.0
description: LLMで処理する
inputs:
  prompt: {type: string, description: プロンプト}
  instruction: {type: string, description: 指示}
  output_schema: {type: object, required: true, description: 出力スキーマ}
  input_data: {type: any, description: 入力}
outputs:
  results: {type: array, description: 結果}
  summary: {type: object, description: 要約}
"#,
    ),
    (
        "output/excel.write.yaml",
        r#"
id: excel.write
version: 1.0.0
description: Excelに書き出す
inputs:
  rows: {type: array, required: true, description: 行}
  path: {type: string, required: true, description: 出力先}
  title: {type: string, description: 見出し}
outputs:
  out_path: {type: string, description: 出力パス}
"#,
    ),
    (
        "ui/ui.confirm.yaml",
        r#"
id: ui.confirm
version: 1.0.0
description: 確認
inputs:
  message: {type: string, description: メッセージ}
outputs:
  approved: {type: boolean, description: 承認}
"#,
    ),
];

/// Writes [`TEST_SPECS`] into a temp dir and loads them.
pub fn test_catalog() -> Catalog {
    let dir = tempfile::tempdir().unwrap();
    write_specs(dir.path(), TEST_SPECS);
    let (catalog, issues) = Catalog::load(&[dir.path().to_path_buf()]);
    assert!(issues.is_empty(), "{issues:?}");
    catalog
}

pub fn write_specs(dir: &Path, specs: &[(&str, &str)]) {
    for (rel, text) in specs {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::File::create(&path).unwrap();
        // Test setup only; product writes go through keiri_fs.
        #[allow(clippy::disallowed_methods)]
        std::fs::write(&path, text).unwrap();
    }
}

/// The repository root (two levels above this crate).
/// A CSV's schema: its path and headers (typed as text).
pub fn csv_schema(path: &str, columns: &[&str]) -> keiri_plan::FileSchema {
    keiri_plan::FileSchema {
        path: path.into(),
        tables: vec![keiri_plan::TableSchema {
            sheet: None,
            columns: columns
                .iter()
                .map(|c| keiri_plan::ColumnSchema {
                    name: (*c).into(),
                    ty: "text".into(),
                })
                .collect(),
        }],
    }
}

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `../shared` beside the checkout, where CI puts the shared fixtures and reference data (see
/// keiri-testkit for what a test does when it is absent).
pub fn shared_dir() -> PathBuf {
    keiri_testkit::shared_dir()
}
