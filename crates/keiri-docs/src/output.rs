//! Response rendering: JSON as is, or TOON.
//!
//! `toon_content` is exactly the JSON response encoded with the maintained `toon-format`
//! encoder, so decoding it (with any conforming decoder) gives back the JSON a caller would
//! have received with `output_format: json`; the conformance test checks that against the
//! reference TypeScript implementation.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::{
    Counts, DigestResponse, ErrorCount, ExtractResponse, ItemError, LimitsInfo, MetricsResponse,
    Output, OutputFormat, SectionsResponse, ToonResponse,
};

/// The metadata a TOON response keeps outside `toon_content`.
pub(crate) trait Summary {
    fn success(&self) -> bool;
    fn counts(&self) -> Counts;
    fn truncated(&self) -> bool;
    fn limits(&self) -> Option<LimitsInfo>;
    fn all_errors(&self) -> Vec<&ItemError>;
    /// The seed's `count_files`: every file answered, failed ones included.
    fn count_files(&self) -> usize {
        self.counts().files_requested
    }
    /// The seed's `count_sections`, for a section extraction.
    fn count_sections(&self) -> Option<usize> {
        None
    }
}

/// Encodes any serialisable value as TOON (deterministic for our ordered types).
pub fn to_toon<T: Serialize>(value: &T) -> Result<String> {
    toon_format::encode(value, &toon_format::EncodeOptions::default()).map_err(Error::Toon)
}

pub(crate) fn render<T: Serialize + Summary>(value: T, format: OutputFormat) -> Result<Output<T>> {
    match format {
        OutputFormat::Json => Ok(Output::Json(value)),
        OutputFormat::Toon => {
            let mut summary: Vec<ErrorCount> = Vec::new();
            for e in value.all_errors() {
                match summary.iter_mut().find(|c| c.code == e.code) {
                    Some(c) => c.count += 1,
                    None => summary.push(ErrorCount {
                        code: e.code.clone(),
                        count: 1,
                    }),
                }
            }
            summary.sort_by(|a, b| a.code.cmp(&b.code));
            Ok(Output::Toon(ToonResponse {
                success: value.success(),
                format: OutputFormat::Toon,
                output_format: OutputFormat::Toon,
                toon_content: to_toon(&value)?,
                count_files: value.count_files(),
                count_sections: value.count_sections(),
                counts: value.counts(),
                truncated: value.truncated(),
                limits: value.limits(),
                error_summary: summary,
            }))
        }
    }
}

impl Summary for ExtractResponse {
    fn success(&self) -> bool {
        self.success
    }
    fn counts(&self) -> Counts {
        Counts {
            files_requested: self.files.len() + self.errors.len(),
            files_succeeded: self.files.len(),
            sections_requested: None,
            sections_extracted: None,
            errors: self.errors.len(),
        }
    }
    fn truncated(&self) -> bool {
        self.truncated
    }
    fn limits(&self) -> Option<LimitsInfo> {
        Some(LimitsInfo::Extract(self.limits))
    }
    fn all_errors(&self) -> Vec<&ItemError> {
        self.errors.iter().collect()
    }
}

impl Summary for DigestResponse {
    fn success(&self) -> bool {
        self.success
    }
    fn counts(&self) -> Counts {
        Counts {
            files_requested: self.files.len() + self.errors.len(),
            files_succeeded: self.files.len(),
            sections_requested: None,
            sections_extracted: None,
            errors: self.errors.len(),
        }
    }
    fn truncated(&self) -> bool {
        self.files.iter().any(|f| f.cut)
    }
    fn limits(&self) -> Option<LimitsInfo> {
        None
    }
    fn all_errors(&self) -> Vec<&ItemError> {
        self.errors.iter().collect()
    }
}

impl Summary for SectionsResponse {
    fn success(&self) -> bool {
        self.success
    }
    fn count_files(&self) -> usize {
        self.count_files
    }
    fn count_sections(&self) -> Option<usize> {
        Some(self.count_sections)
    }
    fn counts(&self) -> Counts {
        Counts {
            files_requested: self.files_requested,
            files_succeeded: self.files_succeeded,
            sections_requested: Some(self.sections_requested),
            sections_extracted: Some(self.sections_extracted),
            errors: self.all_errors().len(),
        }
    }
    fn truncated(&self) -> bool {
        self.truncated
    }
    fn limits(&self) -> Option<LimitsInfo> {
        Some(LimitsInfo::Batch(self.limits))
    }
    fn all_errors(&self) -> Vec<&ItemError> {
        self.errors
            .iter()
            .chain(self.results.iter().flat_map(|r| r.errors.iter()))
            .collect()
    }
}

impl Summary for MetricsResponse {
    fn success(&self) -> bool {
        self.success
    }
    fn counts(&self) -> Counts {
        Counts {
            files_requested: self.files.len() + self.errors.len(),
            files_succeeded: self.files.len(),
            sections_requested: None,
            sections_extracted: None,
            errors: self.errors.len(),
        }
    }
    fn truncated(&self) -> bool {
        false
    }
    fn limits(&self) -> Option<LimitsInfo> {
        None
    }
    fn all_errors(&self) -> Vec<&ItemError> {
        self.errors.iter().collect()
    }
}
