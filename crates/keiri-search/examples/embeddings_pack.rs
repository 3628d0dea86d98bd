//! Regenerates the bundled embedding pack: the local model's passage vectors of every block
//! in `block_specs/` and every template in `templates/`, written to
//! `block_specs/.embeddings/<model>.kev` (`make embeddings` runs it).
//!
//! `cargo run --release -p keiri-search --example embeddings_pack -- [--check] [REPO]`
//!
//! With `--check` it writes nothing and exits 1 when the pack is missing or does not hold
//! exactly the shipped texts (no model needed for that).

use std::path::PathBuf;
use std::process::ExitCode;

use keiri_plan::{Catalog, Templates};
use keiri_search::embed::{E5Embedder, LOCAL_MODEL_NAME, Pack, find_local_model_dir, text_key};
use keiri_search::{EmbedKind, passages_of};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(message) => {
            eprintln!("embeddings_pack: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut check = false;
    let mut repo = PathBuf::from(".");
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            other => repo = PathBuf::from(other),
        }
    }
    let catalog_dir = repo.join("block_specs");
    let (catalog, issues) = Catalog::load(std::slice::from_ref(&catalog_dir));
    let (templates, template_issues) = Templates::load(&[repo.join("templates")]);
    if !issues.is_empty() || !template_issues.is_empty() {
        return Err(format!(
            "the catalog or templates do not load: {:?}",
            issues.iter().chain(&template_issues).collect::<Vec<_>>()
        ));
    }
    let passages = passages_of(&catalog, &templates);
    let path = Pack::path_in(&catalog_dir, LOCAL_MODEL_NAME);
    if check {
        let pack = Pack::load(&path).map_err(|e| e.to_string())?;
        let mut want: Vec<[u8; 32]> = passages
            .iter()
            .map(|t| text_key(LOCAL_MODEL_NAME, EmbedKind::Passage, t))
            .collect();
        want.sort();
        let mut have: Vec<[u8; 32]> = pack.keys().copied().collect();
        have.sort();
        if want == have {
            println!("{} is up to date ({} passages)", path.display(), have.len());
            return Ok(ExitCode::SUCCESS);
        }
        println!("{} is stale: run `make embeddings`", path.display());
        return Ok(ExitCode::from(1));
    }
    let dir = find_local_model_dir()
        .ok_or("the local model is not installed (run `make setup-models`)")?;
    let model = E5Embedder::shared(&dir).map_err(|e| e.to_string())?;
    let texts: Vec<(EmbedKind, String)> = passages
        .into_iter()
        .map(|t| (EmbedKind::Passage, t))
        .collect();
    let pack = Pack::build(model.as_ref(), &texts).map_err(|e| e.to_string())?;
    pack.save(&path).map_err(|e| e.to_string())?;
    // Atomic writes create private files; the pack is shipped and installed, so everyone
    // must be able to read it.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("wrote {} ({} passages)", path.display(), pack.len());
    Ok(ExitCode::SUCCESS)
}
