//! Validation time for generated plans of 100, 1,000 and 10,000 nodes (a chain of reads,
//! filters with references and interpolations, LLM calls and writes), against the shipped
//! catalog. Run with `cargo bench -p keiri-plan`; the numbers go into the crate README.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use keiri_plan::{Catalog, Options, load_plan, validate};

fn generate(nodes: usize) -> String {
    let mut s = String::from(
        "apiVersion: v1\nid: bench\nvars:\n  src: invoices.csv\n  limit: 10\ngraph:\n",
    );
    for i in 0..nodes {
        match i % 4 {
            0 => s.push_str(&format!(
                "  - id: n{i}\n    block: csv.read\n    in: {{path: \"${{vars.src}}\", encoding: cp932}}\n    out: {{rows: rows}}\n"
            )),
            1 | 2 => s.push_str(&format!(
                "  - id: n{i}\n    block: transforms.filter_rows\n    in: {{rows: \"${{n{}.rows}}\", condition: \"amount > ${{vars.limit}}\"}}\n    out: {{rows: rows}}\n",
                i - 1
            )),
            _ => s.push_str(&format!(
                "  - id: n{i}\n    block: ai.process_llm\n    in: {{prompt: \"要約: ${{n{}.rows}}\", output_schema: {{total: number}}, input_data: {{rows: [\"${{n{}.rows}}\"]}}}}\n    out: {{results: results}}\n",
                i - 1,
                i - 1
            )),
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../block_specs");
    let (catalog, issues) = Catalog::load(&[dir]);
    assert!(issues.is_empty());
    let options = Options::default();
    let mut group = c.benchmark_group("validate");
    group.sample_size(20);
    for n in [100usize, 1_000, 10_000] {
        let text = generate(n);
        let plan = load_plan(&text).unwrap().plan;
        assert!(!keiri_plan::has_errors(&validate(
            &plan, &catalog, &options
        )));
        group.throughput(Throughput::Elements(n as u64));
        group.bench_with_input(BenchmarkId::new("validate", n), &plan, |b, plan| {
            b.iter(|| validate(plan, &catalog, &options))
        });
        group.bench_with_input(BenchmarkId::new("load+validate", n), &text, |b, text| {
            b.iter(|| validate(&load_plan(text).unwrap().plan, &catalog, &options))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
