//! Prompt-size and client-side cost measurements (a bench binary, not timed tests):
//!
//! * tokens of the candidate catalog in TOON vs plain JSON (o200k_base, the GPT-4.1/4o
//!   tokenizer, and cl100k_base), for the whole bundled catalog and for a 30-block slice;
//! * time to build the wiring schema and to check a 200-node answer against the whitelists.
//!
//! Run: `cargo bench -p keiri-design`.

use std::error::Error;
use std::path::PathBuf;
use std::time::Instant;

use keiri_design::prompt::{catalog_rows, encode_catalog, encode_catalog_json};
use keiri_design::schema::{
    WiredInput, WiredNode, WiredOutput, Wiring, candidate_blocks, check_wiring, wiring_schema,
};
use keiri_plan::Catalog;

fn main() -> Result<(), Box<dyn Error>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    let (catalog, _) = Catalog::load(&[dir]);
    let all: Vec<String> = catalog.blocks().map(|b| b.id.clone()).collect();
    let o200k = tiktoken_rs::o200k_base()?;
    let cl100k = tiktoken_rs::cl100k_base()?;
    println!("| catalog slice | encoding | chars | o200k tokens | cl100k tokens |");
    println!("|---|---|---|---|---|");
    for (label, ids) in [
        (format!("all {} blocks", all.len()), all.clone()),
        (
            "30 blocks (max candidates)".to_string(),
            all.iter().take(30).cloned().collect(),
        ),
    ] {
        let rows = catalog_rows(&catalog, &ids);
        for (name, text) in [
            ("TOON", encode_catalog(&rows)),
            ("JSON", encode_catalog_json(&rows)),
        ] {
            println!(
                "| {label} | {name} | {} | {} | {} |",
                text.chars().count(),
                o200k.encode_with_special_tokens(&text).len(),
                cl100k.encode_with_special_tokens(&text).len()
            );
        }
    }

    let candidates = candidate_blocks(&catalog, &all);
    let runs = 200;
    let started = Instant::now();
    let mut size = 0;
    for _ in 0..runs {
        size += wiring_schema(&candidates, &keiri_design::schema::Shapes::default())
            .to_string()
            .len();
    }
    println!(
        "\nwiring_schema for {} candidates: {:.1} µs per build ({} bytes)",
        candidates.len(),
        started.elapsed().as_secs_f64() * 1e6 / runs as f64,
        size / runs
    );

    let nodes: Vec<WiredNode> = (0..200)
        .map(|i| {
            let c = &candidates[i % candidates.len()];
            WiredNode {
                id: format!("n{i}"),
                block: c.id.clone(),
                inputs: c
                    .inputs
                    .iter()
                    .map(|k| WiredInput {
                        key: k.clone(),
                        value_json: "\"x\"".into(),
                    })
                    .collect(),
                outputs: c
                    .outputs
                    .iter()
                    .map(|k| WiredOutput {
                        key: k.clone(),
                        alias: k.clone(),
                    })
                    .collect(),
                ..WiredNode::default()
            }
        })
        .collect();
    let wiring = Wiring {
        nodes,
        ..Wiring::default()
    };
    let started = Instant::now();
    let mut problems = 0;
    for _ in 0..runs {
        problems += check_wiring(&wiring, &candidates, &[]).1.len();
    }
    println!(
        "check_wiring, 200-node answer: {:.1} µs per check ({} problems per run)",
        started.elapsed().as_secs_f64() * 1e6 / runs as f64,
        problems / runs
    );
    Ok(())
}
