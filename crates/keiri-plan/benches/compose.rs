//! Templates, compose and requirements on the shipped templates and catalog: loading and
//! validating all templates, composing two and all of them, building the questions and
//! applying answers, and compose scaling with many templates (copies of the shipped ones
//! under new ids). Run with `cargo bench -p keiri-plan --bench compose`; the numbers go into
//! the crate README.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use keiri_plan::{
    Catalog, ComposeOptions, Options, TemplateSpec, Templates, apply_answers, compose, validate,
    validate_templates,
};
use serde_json::{Map, Value, json};

fn options() -> ComposeOptions {
    ComposeOptions {
        plan_id: "bench".into(),
        ..ComposeOptions::default()
    }
}

fn bench(c: &mut Criterion) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let (catalog, issues) = Catalog::load(&[root.join("block_specs")]);
    assert!(issues.is_empty());
    let dirs = [root.join("templates")];
    let (templates, issues) = Templates::load(&dirs);
    assert!(issues.is_empty() && templates.len() >= 7);
    let check = Options::default();

    c.bench_function("templates/load_all", |b| b.iter(|| Templates::load(&dirs)));
    c.bench_function("templates/validate_all", |b| {
        b.iter(|| validate_templates(&templates, &catalog, &check))
    });

    let pair: Vec<&TemplateSpec> = ["invoice_duplicate_detection", "exception_report"]
        .iter()
        .map(|id| templates.get(id).unwrap())
        .collect();
    c.bench_function("compose/two", |b| {
        b.iter(|| compose(&pair, &options()).unwrap())
    });
    let all: Vec<&TemplateSpec> = templates.iter().collect();
    c.bench_function("compose/all_shipped", |b| {
        b.iter(|| compose(&all, &options()).unwrap())
    });

    // The offline journey after compose: validate, questions, answers, validate again.
    let composition = compose(&pair, &options()).unwrap();
    c.bench_function("requirements/validate_build_apply_validate", |b| {
        b.iter(|| {
            let findings = validate(&composition.plan, &catalog, &check);
            let rs = composition.requirements(&findings, &catalog);
            let answers: Map<String, Value> = [
                ("invoice_csv".to_string(), json!("invoices.csv")),
                ("notify_to".to_string(), json!("keiri@example.co.jp")),
                ("notify_channel".to_string(), json!("email")),
            ]
            .into_iter()
            .collect();
            let plan = apply_answers(&composition.plan, &rs, &answers).unwrap();
            validate(&plan, &catalog, &check)
        })
    });

    let mut group = c.benchmark_group("compose/scaling");
    for copies in [10usize, 100] {
        let mut owned: Vec<TemplateSpec> = Vec::new();
        for i in 0..copies {
            for t in &all {
                let mut t = (*t).clone();
                t.id = format!("{}_{i}", t.id);
                owned.push(t);
            }
        }
        let list: Vec<&TemplateSpec> = owned.iter().collect();
        let nodes: usize = owned.iter().map(|t| t.graph_snippet.len()).sum();
        group.throughput(Throughput::Elements(nodes as u64));
        group.bench_with_input(BenchmarkId::from_parameter(nodes), &list, |b, list| {
            b.iter(|| compose(list, &options()).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
