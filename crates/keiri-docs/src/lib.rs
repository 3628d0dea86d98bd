//! Document text for the planner and the chat agent: extraction with limits, a short digest
//! for prompts, batch extraction of many line ranges from many files, file metrics, and
//! output as JSON or TOON.
//!
//! * [`extract_files`] turns `.txt`/`.md`/`.csv` (UTF-8, UTF-8 with BOM, UTF-16 with BOM,
//!   Shift_JIS/CP932, EUC-JP — detected, never mojibake), `.pdf` (text of the first pages),
//!   `.docx` (paragraphs and tables in document order) and `.xlsx`/`.xlsm` (one sheet's
//!   window of cells as tab-separated rows), and source code and configuration files
//!   (`.py`, `.rs`, `.ts`, `.json`, `.yaml`, `Makefile`, …, format `code`, decoded like
//!   text) into text, within a total and a per-file
//!   character budget, a size cap and a page cap. Whatever a limit cuts is reported in the
//!   file's `cuts`, never dropped silently.
//! * [`digest`] compresses those texts to about 4,000 characters with a fair share per file,
//!   or says exactly [`NO_DOCUMENTS`].
//! * [`extract_sections`] reads `requests[{file_path, sections[{start_line, end_line,
//!   label}]}]` in one call with batch limits, partial success and `fail_fast`.
//! * [`file_metrics`] measures up to 200 files, four at a time.
//! * [`workbook_cells`] reads every worksheet's cell values (to compare two workbooks) and
//!   [`workbook_window`] the cells of a few small rectangles with their formulas and the values
//!   cached for them (the neighbours a preview grid draws around a change).
//! * [`compare_cells`] turns two workbooks' cells into a per-cell diff (a patch's shape), and
//!   [`grid_context`] reads the cells around a diff's changes for a preview grid.
//! * [`schema::tables`] gives a CSV's or workbook's header rows (per sheet) with the type
//!   their first values suggest, for checking plans against the files they read.
//! * [`text`] is the one text decoder of the workspace ([`EncodingChoice`], [`text::candidates`],
//!   [`text::StreamDecoder`], [`text::decode_as`]) and [`csv`] the one set of CSV layout
//!   rules (delimiter detection, blank records, trailing empty columns): design time here and
//!   keiri-run's `csv.read` use both, so a file is read the same way when a plan is checked and
//!   when it runs. Encodings are named `utf-8`, `utf-8-sig`, `utf-16le`, `utf-16be`, `cp932`,
//!   `euc-jp` everywhere.
//!
//! Every path passes the caller's [`keiri_fs::PathPolicy`]. Untrusted bytes never panic or
//! hang this crate: a corrupt, encrypted or hostile file (zip bomb, PDF stream bomb, looping
//! PDF structure, binary renamed `.txt`, a workbook declaring two billion shared strings or a
//! row number past Excel's grid) becomes a per-file error with a stable [`Error::code`], and
//! the other files of the call still extract. A panic inside any parser is `CORRUPT_FILE` for
//! that file (which needs the default `panic = "unwind"`; the workspace's profiles keep it).
//!
//! This crate must not write files, call the network, or know about plans, prompts or HTTP;
//! it returns data and the callers decide what to do with it.
//!
//! Dependencies and why:
//! * `calamine` reads workbooks (shared strings, dates, Strict OOXML) through its streaming
//!   cell reader, so a sparse sheet never becomes a dense grid. calamine 0.38 trusts the
//!   numbers a file declares: it reserves the shared-string table by `uniqueCount` (a crafted
//!   2 KB file aborts the process asking for ~51 GB) and multiplies row numbers and column
//!   letters without overflow checks ("attempt to multiply with overflow" in debug builds). So
//!   the `bounds` module checks those numbers before calamine parses anything, and every parser
//!   runs behind a panic guard (`guard`). The overflow is to be reported upstream; the report,
//!   with a minimal file, is written out in `docs/upstream/calamine-overflow.md` — pin the fixed
//!   version once there is one.
//! * `zip` + `quick-xml` read `.docx` directly: a pull parser gives document order and
//!   bounded memory, which the docx crates built on DOM trees do not.
//! * `flate2` + `weezl` decode PDF streams behind our own size budget; the PDF reader itself
//!   is ours (see the `pdf` module for why no crate fit).
//! * `encoding_rs` decodes strictly (no replacement characters). The tie between CP932 and
//!   EUC-JP is our own rule (`text::japanese_order`), not chardetng's web-page statistics,
//!   which read half-width katakana exports as EUC-JP.
//! * `memchr` finds the quotes of a CSV (`csv::QuoteCheck`) with the vector instructions
//!   of the machine, where a byte loop would read a 300 MB export one byte at a time.
//! * `sha2` gives the content hash of metrics and the cache.
//! * `toon-format` is the maintained TOON encoder (spec 4.x, the version the reference
//!   TypeScript implementation `@toon-format/toon` 4.4 implements; the "v3" predates
//!   it); we never hand-write TOON.
//! * `schemars` derives JSON Schemas of the request and response types for the MCP tools.
//! * `keiri-xlsx` for its A1 cell references: one parser of `B3`/`$A$1:C3` in the workspace.

mod bounds;
mod cache;
pub mod csv;
mod digest;
mod docx;
mod error;
mod extract;
mod files;
mod guard;
mod lines;
mod metrics;
mod model;
mod output;
mod parallel;
mod pdf;
pub mod schema;
mod sections;
pub mod text;
mod workbook_diff;
mod xlsx;
mod zipguard;

pub use cache::{Cache, CacheStats, Loaded, content_hash};
pub use digest::NO_DOCUMENTS;
pub use error::{Error, Result};
pub use extract::{Cut, ExtractOptions, Extracted, Format, extract_bytes, read_capped};
pub use files::{MAX_REQUEST_FILES, digest, extract_files};
pub use lines::count as count_lines;
pub use metrics::{estimate_tokens, file_metrics};
pub use model::*;
pub use output::to_toon;
pub use sections::{extract_sections, reading_options};
pub use text::{DecodedText, EncodingChoice, TextEncoding, decode as decode_text};
pub use workbook_diff::{
    ContextCell, GRID_CONTEXT, GRID_MAX_COLS, GRID_MAX_ROWS, SheetContext, compare_cells,
    grid_context,
};
pub use xlsx::{
    CellData, CellWindow, SheetCells, WindowCell, WorkbookCells, open_workbook, workbook_cells,
    workbook_window,
};
