//! The files a run wrote, for `PlanRunResponse::files` (and `keiri run`'s `wrote:` lines).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// A file a run wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunFile {
    /// The top-level node that wrote it (a loop's or subflow's id for its body's files).
    pub node: String,
    /// The file, relative to the workspace when inside it.
    pub path: String,
}

/// Every file the run wrote, by node in plan order, then path: each file under the run's
/// `files/` folder (every write of a run without `write`, loop bodies' too) and the
/// `out_path` of each top-level node whose block has one (with `write`, the file where the
/// plan named it). Paths are shown relative to `workspace` when inside it.
pub(crate) fn written_files(
    workspace: &Path,
    plan: &keiri_plan::Plan,
    catalog: &keiri_plan::Catalog,
    outcome: &keiri_run::RunOutcome,
) -> Vec<RunFile> {
    let shown = |path: &Path| {
        path.strip_prefix(workspace)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    };
    let mut out: Vec<(usize, RunFile)> = Vec::new();
    let order = |id: &str| {
        plan.graph
            .iter()
            .position(|n| n.id == id)
            .unwrap_or(usize::MAX)
    };
    // Written under the run folder: `files/<node>/…`.
    out.extend(
        run_folder_files(
            workspace,
            &outcome.run_dir,
            plan.graph.iter().map(|n| n.id.as_str()),
        )
        .into_iter()
        .map(|f| (order(&f.node), f)),
    );
    // Written where the plan named (`write`): the top-level writers' `out_path`.
    let run = outcome
        .run_dir
        .parent()
        .and_then(Path::parent)
        .map(|runs| keiri_run::RunDir::open(runs, &outcome.plan_id, &outcome.run_id));
    if let Some(Ok(run)) = run {
        for node in &plan.graph {
            let writes = node
                .block
                .as_deref()
                .and_then(|b| catalog.get(b))
                .is_some_and(|spec| spec.outputs.contains_key("out_path"));
            let finished = outcome.nodes.get(&node.id) == Some(&keiri_run::NodeStatus::Finished);
            if !writes || !finished {
                continue;
            }
            let Ok(outputs) = run.load_shown(&node.id) else {
                continue;
            };
            if let Some(keiri_run::value::Value::Json(Json::String(path))) = outputs.get("out_path")
                && !path.is_empty()
            {
                let path = shown(Path::new(path));
                if !out.iter().any(|(_, f)| f.path == path) {
                    let file = RunFile {
                        node: node.id.clone(),
                        path,
                    };
                    out.push((order(&node.id), file));
                }
            }
        }
    }
    out.sort_by(|a, b| (a.0, &a.1.path).cmp(&(b.0, &b.1.path)));
    out.into_iter().map(|(_, f)| f).collect()
}

/// The files under a run's `files/<node>/` folders, for the nodes among `nodes` (a folder is
/// named by its node's file stem), in no particular order.
pub(crate) fn run_folder_files<'a>(
    workspace: &Path,
    run_dir: &Path,
    nodes: impl Iterator<Item = &'a str>,
) -> Vec<RunFile> {
    let nodes: Vec<&str> = nodes.collect();
    let mut out = Vec::new();
    for top in read_dir(&run_dir.join("files")) {
        let folder = top.file_name().unwrap_or_default().to_string_lossy();
        let Some(node) = nodes
            .iter()
            .find(|id| keiri_run::records::file_stem(id) == folder)
        else {
            continue;
        };
        let mut stack = vec![top];
        while let Some(path) = stack.pop() {
            if path.is_dir() {
                stack.extend(read_dir(&path));
            } else if path.is_file() {
                out.push(RunFile {
                    node: (*node).to_string(),
                    path: path
                        .strip_prefix(workspace)
                        .unwrap_or(&path)
                        .to_string_lossy()
                        .into_owned(),
                });
            }
        }
    }
    out
}

fn read_dir(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}
