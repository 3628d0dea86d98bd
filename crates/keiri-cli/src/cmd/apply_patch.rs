//! `keiri apply-patch FILE --patch PATCH|-`: apply one unified diff to one workspace file.
//!
//! The patch comes from a file or, with `-`, from standard input. The result (or the error,
//! as `{code, message, details}`) is printed as JSON on stdout. Exit codes: 0 applied (or a dry
//! run that would apply), 1 the patch did not apply (`APPLY_FAILED`, file unchanged), 2 any
//! other error (bad arguments, path refused, file missing or too large).

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use keiri_api::patches::{ApplyPatchRequest, BackendKind};
use keiri_api::{ApiError, Context, ErrorCode};

use crate::output::print_json;

/// Patches above this size are refused (the API's own limit; read one byte more to tell).
const MAX_PATCH_BYTES: u64 = 10 * 1024 * 1024;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum BackendArg {
    /// The built-in applier (no git needed).
    Native,
    /// `git apply --whitespace=fix`.
    Git,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The file to change (relative to the workspace, or absolute inside it).
    #[arg(value_name = "FILE")]
    pub file: String,
    /// The unified diff: a file, or `-` for standard input.
    #[arg(long, value_name = "PATCH|-")]
    pub patch: String,
    /// Which applier to use.
    #[arg(long, value_enum, default_value = "native")]
    pub backend: BackendArg,
    /// Report what would change without writing the file.
    #[arg(long)]
    pub dry_run: bool,
}

fn read_patch(source: &str) -> Result<String, ApiError> {
    let mut bytes = Vec::new();
    let read = if source == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_PATCH_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(Path::new(source))
            .and_then(|f| f.take(MAX_PATCH_BYTES + 1).read_to_end(&mut bytes))
    };
    if let Err(e) = read {
        let code = if e.kind() == std::io::ErrorKind::NotFound {
            ErrorCode::NotFound
        } else {
            ErrorCode::IoError
        };
        return Err(ApiError::new(
            code,
            format!("reading the patch {source}: {e}"),
        ));
    }
    if bytes.len() as u64 > MAX_PATCH_BYTES {
        return Err(ApiError::new(
            ErrorCode::InvalidRequest,
            format!("the patch {source} is larger than {MAX_PATCH_BYTES} bytes"),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidRequest,
            format!(
                "the patch {source} is not UTF-8 text (invalid byte at {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn print_error(err: &ApiError) -> anyhow::Result<ExitCode> {
    print_json(err)?;
    Ok(match err.code {
        ErrorCode::ApplyFailed => ExitCode::from(1),
        _ => ExitCode::from(2),
    })
}

pub fn run(ctx: &Context, args: &Args) -> anyhow::Result<ExitCode> {
    let patch = match read_patch(&args.patch) {
        Ok(patch) => patch,
        Err(e) => return print_error(&e),
    };
    let req = ApplyPatchRequest {
        file_path: args.file.clone(),
        patch,
        backend: match args.backend {
            BackendArg::Native => BackendKind::Native,
            BackendArg::Git => BackendKind::Git,
        },
        dry_run: args.dry_run,
    };
    match keiri_api::apply_patch(ctx, req) {
        Ok(result) => {
            print_json(&result)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => print_error(&e),
    }
}
