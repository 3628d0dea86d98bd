use keiri_plan::{ComposeOptions, TemplateSpec, compose};
use super::template::shipped_templates;
#[test]
fn scratch_timing() {
    let templates = shipped_templates();
    let all: Vec<&TemplateSpec> = templates.iter().collect();
    for copies in [10usize, 100] {
        let mut owned = Vec::new();
        for i in 0..copies { for t in &all { let mut t = (*t).clone(); t.id = format!("{}_{i}", t.id); owned.push(t); } }
        let list: Vec<&TemplateSpec> = owned.iter().collect();
        let opts = ComposeOptions { plan_id: "b".into(), ..Default::default() };
        let start = std::time::Instant::now();
        let c = compose(&list, &opts).unwrap();
        let others: usize = c.conflicts.iter().map(|c| match c { keiri_plan::Conflict::AmbiguousBinding { others, .. } => others.len(), _ => 0 }).sum();
        eprintln!("copies {copies}: {:?}, conflicts {}, others {others}, bindings {}, vars {}", start.elapsed(), c.conflicts.len(), c.bindings.len(), c.plan.vars.len());
        let start = std::time::Instant::now();
        let _ = c.clone();
        eprintln!("  clone of result: {:?}", start.elapsed());
    }
}
