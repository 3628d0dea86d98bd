//! The `excel.patch_workbook` block spec lists every op the engine accepts: its `operations`
//! items are generated from the op definitions. `KEIRI_UPDATE_GENERATED=1` (`make generated`)
//! rewrites the generated region instead of failing.

use std::path::PathBuf;

fn spec_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../block_specs/output/excel.patch_workbook.yaml")
}

#[test]
fn the_block_spec_lists_every_op() {
    let path = spec_path();
    let text = std::fs::read_to_string(&path).unwrap();
    let begin = text
        .find(keiri_xlsx::GENERATED_BEGIN)
        .expect("the begin marker");
    let line_start = text[..begin].rfind('\n').map_or(0, |i| i + 1);
    let indent = begin - line_start;
    let body_start = begin + keiri_xlsx::GENERATED_BEGIN.len() + 1;
    let end = text[body_start..]
        .find(keiri_xlsx::GENERATED_END)
        .map(|i| body_start + i)
        .expect("the end marker");
    let end_line = text[..end].rfind('\n').map_or(0, |i| i + 1);
    let current = &text[body_start..end_line];
    let want = keiri_xlsx::patch_workbook_items_yaml(indent);
    if current == want {
        return;
    }
    if std::env::var_os("KEIRI_UPDATE_GENERATED").is_some() {
        let updated = format!("{}{want}{}", &text[..body_start], &text[end_line..]);
        keiri_fs::write_atomic(&path, updated.as_bytes()).unwrap();
        return;
    }
    panic!(
        "{} is stale: its operations items differ from the op definitions; run `make generated`",
        path.display()
    );
}

#[test]
fn every_op_of_the_spec_is_accepted_and_described() {
    // Independently of the rendering: the ops named in the spec are exactly the ops the
    // engine parses and `list_ops` describes.
    let text = std::fs::read_to_string(spec_path()).unwrap();
    let listed: Vec<String> = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("enum: [set_value"))
        .map(|rest| {
            format!("set_value{rest}")
                .trim_end_matches(']')
                .split(", ")
                .map(str::to_string)
                .collect()
        })
        .expect("the op enum");
    let described: Vec<String> = keiri_xlsx::list_ops().into_iter().map(|o| o.op).collect();
    assert_eq!(listed, described);
    assert_eq!(listed.len(), keiri_xlsx::OpKind::ALL.len());
    assert!(listed.iter().any(|o| o == "set_fill_color"));
    for op in &listed {
        assert!(keiri_xlsx::OpKind::parse(op).is_some(), "{op}");
    }
}
