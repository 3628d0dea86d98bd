//! Document use cases: text extraction, the prompt digest, batch section reads and file
//! metrics (all in `keiri-docs`).
//!
//! The request and response types are the tool contract and live in `keiri-docs` (so the MCP
//! server derives its schemas from the same types); front-ends reach them through [`docs`].
//! Paths pass the context's path policy. A file that cannot be read is data in the response
//! (`errors[]` with a stable code), not an [`ApiError`]; only a malformed request is.

use crate::{ApiError, Context};

/// Request and response types of the document functions.
pub mod docs {
    pub use keiri_docs::{
        BatchLimits, ContentFormat, Counts, Cut, DigestFile, DigestRequest, DigestResponse,
        ErrorCount, ExtractLimits, ExtractRequest, ExtractResponse, FileMetrics, FileResult,
        FileSections, FileText, Format, ItemError, LimitsInfo, MetricsRequest, MetricsResponse,
        NO_DOCUMENTS, NumberedLine, Output, OutputFormat, Section, SectionContent, SectionRange,
        SectionsRequest, SectionsResponse, ToonResponse,
    };
}

use docs::{
    BatchLimits, DigestRequest, DigestResponse, ExtractRequest, ExtractResponse, MetricsRequest,
    MetricsResponse, Output, SectionsRequest, SectionsResponse,
};

fn api_error(err: keiri_docs::Error) -> ApiError {
    ApiError::lower(&err)
}

/// Extracts the text of each file, within the request's limits.
pub fn documents_extract(
    ctx: &Context,
    req: ExtractRequest,
) -> Result<Output<ExtractResponse>, ApiError> {
    keiri_docs::extract_files(&ctx.path_policy(), &req, keiri_docs::Cache::shared())
        .map_err(api_error)
}
crate::surface::function!(plain documents_extract(crate::docs::ExtractRequest) -> crate::docs::Output<crate::docs::ExtractResponse>);

/// Digests the files to about `max_chars` characters for a prompt.
pub fn documents_digest(
    ctx: &Context,
    req: DigestRequest,
) -> Result<Output<DigestResponse>, ApiError> {
    keiri_docs::digest(&ctx.path_policy(), &req, keiri_docs::Cache::shared()).map_err(api_error)
}
crate::surface::function!(plain documents_digest(crate::docs::DigestRequest) -> crate::docs::Output<crate::docs::DigestResponse>);

/// Reads many line ranges from many files in one call (TOON output by default).
pub fn documents_extract_sections(
    ctx: &Context,
    req: SectionsRequest,
) -> Result<Output<SectionsResponse>, ApiError> {
    keiri_docs::extract_sections(
        &ctx.path_policy(),
        &req,
        &BatchLimits::default(),
        keiri_docs::Cache::shared(),
    )
    .map_err(api_error)
}
crate::surface::function!(plain documents_extract_sections(crate::docs::SectionsRequest) -> crate::docs::Output<crate::docs::SectionsResponse>);

/// Measures up to 200 files: size, lines, characters, tokens, hash, format, pages/sheets.
pub fn documents_metrics(
    ctx: &Context,
    req: MetricsRequest,
) -> Result<Output<MetricsResponse>, ApiError> {
    keiri_docs::file_metrics(
        &ctx.path_policy(),
        &req,
        &BatchLimits::default(),
        keiri_docs::Cache::shared(),
    )
    .map_err(api_error)
}
crate::surface::function!(plain documents_metrics(crate::docs::MetricsRequest) -> crate::docs::Output<crate::docs::MetricsResponse>);
