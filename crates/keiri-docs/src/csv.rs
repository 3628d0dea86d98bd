//! The layout of a delimited text file, read as accountants' tools read it: one set of rules
//! for a CSV's columns at design time ([`crate::schema`]) and for keiri-run's `csv.read`.
//!
//! * The delimiter is `,`, tab, `;` or `|`, detected from the first records
//!   ([`sniff_delimiter`]) unless the caller names one.
//! * Blank records are skipped and counted: empty or whitespace-only lines, and records whose
//!   every field is blank, such as the `,,,,,,` that Excel writes for a formatted empty row
//!   ([`is_blank_record`]).
//! * Trailing columns whose header is blank and whose every value is blank are dropped: some
//!   exports end each line with extra delimiters ([`blank_header_suffix`]).
//! * Quoted fields (RFC 4180) may hold the delimiter, doubled quotes and line breaks. A quote
//!   opens a quoted field only at the field's start; elsewhere (`ボルト 1/2" 特注`, an inch
//!   mark in an unquoted export) it is text, as Excel, pandas and DuckDB read it. keiri-run's
//!   `csv.read` hands such records to Polars requoted ([`QuoteCheck`], [`requote`]), as
//!   Polars alone fails the file ("CSV malformed").

/// The delimiters [`sniff_delimiter`] chooses from, in the order that wins a tie.
pub const DELIMITERS: [u8; 4] = [b',', b'\t', b';', b'|'];

/// Records looked at to detect the delimiter.
const SNIFF_RECORDS: usize = 30;

/// Characters looked at to detect the delimiter, so a huge first record stays cheap.
const SNIFF_CHARS: usize = 64 * 1024;

/// The delimiter a caller asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delimiter {
    /// Detected with [`sniff_delimiter`].
    #[default]
    Auto,
    Byte(u8),
}

impl Delimiter {
    /// `auto` (or empty), `\t` / `tab` (also written `\\t`), or one ASCII character other than
    /// a quote or a line break; `None` otherwise.
    pub fn parse(name: &str) -> Option<Delimiter> {
        match name {
            "" | "auto" | "AUTO" => Some(Delimiter::Auto),
            "\t" | "\\t" | "tab" | "TAB" => Some(Delimiter::Byte(b'\t')),
            s if s.len() == 1 && s.is_ascii() && !matches!(s, "\"" | "\r" | "\n") => {
                Some(Delimiter::Byte(s.as_bytes()[0]))
            }
            _ => None,
        }
    }

    /// The delimiter to use for `text`, whose first `skip_records` records are skipped.
    pub fn resolve(self, text: &str, skip_records: usize) -> u8 {
        match self {
            Delimiter::Auto => sniff_delimiter(text, skip_records),
            Delimiter::Byte(b) => b,
        }
    }
}

/// The delimiter of `text` (the start of a file is enough), after its first `skip_records`
/// records (title lines): the one of [`DELIMITERS`] that occurs, outside quotes, the same
/// number of times on the most records, preferring the larger count and then the order of
/// [`DELIMITERS`]; `,` when none occurs. Blank records and an unfinished last line are not
/// counted.
pub fn sniff_delimiter(text: &str, skip_records: usize) -> u8 {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines: Vec<[usize; 4]> = Vec::new();
    let mut counts = [0usize; 4];
    let mut content = false;
    let mut quoted = false;
    let mut skipped = 0;
    let mut finished = true;
    // Whether the character before is a line break or a delimiter (any of them, as this is
    // what is being found out): only there does a quote open a quoted field, as [`records`]
    // reads it; elsewhere (`1/2"`, an inch mark) it is a character.
    let mut field_start = true;
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        if i >= SNIFF_CHARS || lines.len() >= SNIFF_RECORDS {
            finished = false;
            break;
        }
        let starts = field_start;
        field_start = c == '\n' || (c.is_ascii() && DELIMITERS.contains(&(c as u8)) && !quoted);
        match c {
            '"' if quoted => {
                if chars.peek().is_some_and(|&(_, next)| next == '"') {
                    chars.next();
                } else {
                    quoted = false;
                }
            }
            '"' => {
                quoted = starts;
                content = true;
            }
            '\n' if !quoted => {
                if content && skipped < skip_records {
                    skipped += 1;
                } else if content && counts.iter().any(|&n| n > 0) {
                    lines.push(counts);
                }
                counts = [0; 4];
                content = false;
            }
            c if !quoted && c.is_ascii() && DELIMITERS.contains(&(c as u8)) => {
                if let Some(k) = DELIMITERS.iter().position(|&d| d == c as u8) {
                    counts[k] += 1;
                }
            }
            c if c.is_whitespace() => {}
            _ => content = true,
        }
    }
    // The text's last line counts only when the text is all there (a piece of a file may end
    // inside a record).
    if finished && content && skipped >= skip_records && counts.iter().any(|&n| n > 0) {
        lines.push(counts);
    }
    let mut best: Option<(usize, usize, u8)> = None;
    for (k, &delimiter) in DELIMITERS.iter().enumerate() {
        let mut frequency: Vec<(usize, usize)> = Vec::new();
        for count in lines.iter().map(|l| l[k]).filter(|&n| n > 0) {
            match frequency.iter_mut().find(|(n, _)| *n == count) {
                Some((_, times)) => *times += 1,
                None => frequency.push((count, 1)),
            }
        }
        let Some(&(count, times)) = frequency
            .iter()
            .max_by_key(|&&(count, times)| (times, count))
        else {
            continue;
        };
        if best.is_none_or(|(t, c, _)| (times, count) > (t, c)) {
            best = Some((times, count, delimiter));
        }
    }
    best.map_or(b',', |(_, _, delimiter)| delimiter)
}

/// Whether a field is blank: empty or whitespace only.
pub fn is_blank_field(field: &str) -> bool {
    field.trim().is_empty()
}

/// Whether a record is blank: an empty or whitespace-only line, or every field blank
/// (`,,,,,,`). Such records are skipped, never rows of empty values.
pub fn is_blank_record<S: AsRef<str>>(fields: &[S]) -> bool {
    fields.iter().all(|f| is_blank_field(f.as_ref()))
}

/// How many of the header's last names are blank: those columns are dropped when every value
/// in them is blank too (the caller checks the values it holds).
pub fn blank_header_suffix<S: AsRef<str>>(header: &[S]) -> usize {
    header
        .iter()
        .rev()
        .take_while(|name| is_blank_field(name.as_ref()))
        .count()
}

/// The records of RFC 4180 text, blank ones included: quoted fields may hold the delimiter,
/// doubled quotes and line breaks; a CR before a line break is dropped.
pub fn records(text: &str, delimiter: u8) -> Records<'_> {
    Records {
        text: text.strip_prefix('\u{feff}').unwrap_or(text),
        at: 0,
        delimiter,
        values: Vec::new(),
        ends: Vec::new(),
    }
}

/// The iterator of [`records`].
pub struct Records<'a> {
    text: &'a str,
    at: usize,
    delimiter: u8,
    values: Vec<u8>,
    ends: Vec<usize>,
}

impl Iterator for Records<'_> {
    type Item = Vec<String>;

    fn next(&mut self) -> Option<Vec<String>> {
        if self.at >= self.text.len() {
            return None;
        }
        let bytes = self.text.as_bytes();
        let read = read_record(
            bytes,
            self.at,
            self.delimiter,
            true,
            &mut self.values,
            &mut self.ends,
        );
        self.at = read.map_or(bytes.len(), |(end, _)| end);
        let mut from = 0;
        Some(
            self.ends
                .iter()
                .map(|&to| {
                    let value = String::from_utf8_lossy(&self.values[from..to]).into_owned();
                    from = to;
                    value
                })
                .collect(),
        )
    }
}

/// Reads the record of `bytes` that starts at `start` as [`records`] reads it: a quote opens a
/// quoted value only at the value's start, where `""` is a quote and a line break or the
/// delimiter is text; a CR before a line break is dropped. Its values go one after another
/// into `values`, each ending where `ends` says (both cleared first). Returns where the next
/// record starts and whether an RFC 4180 parser reads the record the same (no quote inside
/// a value that did not begin with one, nothing after a closing quote); `None` when the text
/// ends inside the record and is not `finished` (the rest may come later).
fn read_record(
    bytes: &[u8],
    start: usize,
    delimiter: u8,
    finished: bool,
    values: &mut Vec<u8>,
    ends: &mut Vec<usize>,
) -> Option<(usize, bool)> {
    values.clear();
    ends.clear();
    let mut quoted = false;
    let mut clean = true;
    let mut i = start;
    loop {
        let Some(&b) = bytes.get(i) else {
            if !finished {
                return None;
            }
            ends.push(values.len());
            return Some((i, clean));
        };
        if quoted {
            match (b, bytes.get(i + 1)) {
                (b'"', Some(b'"')) => {
                    values.push(b'"');
                    i += 2;
                }
                (b'"', None) if !finished => return None,
                (b'"', next) => {
                    quoted = false;
                    i += 1;
                    clean &= match next {
                        None | Some(b'\n') => true,
                        Some(&c) if c == delimiter => true,
                        Some(b'\r') => bytes.get(i + 1) == Some(&b'\n'),
                        Some(_) => false,
                    };
                }
                _ => {
                    values.push(b);
                    i += 1;
                }
            }
            continue;
        }
        let value_empty = values.len() == ends.last().copied().unwrap_or(0);
        match b {
            b'"' if value_empty => quoted = true,
            b'"' => {
                clean = false;
                values.push(b);
            }
            _ if b == delimiter => ends.push(values.len()),
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => {}
            b'\n' => {
                ends.push(values.len());
                return Some((i + 1, clean));
            }
            _ => values.push(b),
        }
        i += 1;
    }
}

/// Finds where a text's quotes stop being read alike by [`records`] and by a parser that
/// takes every quote as opening or closing a quoted field (Polars' CSV reader counts rows
/// so: a file with one inch mark fails with "CSV malformed"). [`records`] reads a quote as
/// opening a quoted field only at the field's start, as Excel, pandas, DuckDB and Python's
/// csv module do: `ボルト 1/2" 特注` is text. [`QuoteCheck::advance`] looks at the quotes
/// only, so a clean file costs one search for `"`; [`requote`] writes the records it stops at
/// so both read them alike.
#[derive(Debug, Clone, Copy)]
pub struct QuoteCheck {
    delimiter: u8,
    /// Where the next call goes on, and whether that is inside a quoted field.
    pos: usize,
    quoted: bool,
}

impl QuoteCheck {
    /// A check of text that begins at a record's start (after a BOM, if any).
    pub fn new(delimiter: u8) -> QuoteCheck {
        QuoteCheck {
            delimiter,
            pos: 0,
            quoted: false,
        }
    }

    /// Reads the quotes of `text` from where the last call stopped (the same text, grown).
    /// `Ok(end)`: no quote of `text[..end]` is read unlike (what follows waits for more text:
    /// a quote whose next byte decides what it is); `Err(at)`: the quote at byte `at` is a
    /// character inside a field that did not begin with one, or closes a quoted field that
    /// goes on after it (`"abc"def`). `finished`: `text` is all there is.
    pub fn advance(&mut self, text: &[u8], finished: bool) -> Result<usize, usize> {
        let bom = if text.starts_with("\u{feff}".as_bytes()) {
            3
        } else {
            0
        };
        while let Some(found) = memchr::memchr(b'"', &text[self.pos..]) {
            let at = self.pos + found;
            if !self.quoted {
                let starts =
                    at == bom || matches!(text[at - 1], b'\n') || text[at - 1] == self.delimiter;
                if !starts {
                    return Err(at);
                }
                self.quoted = true;
                self.pos = at + 1;
                continue;
            }
            let next = text.get(at + 1).copied();
            let ends = match next {
                Some(b'"') => {
                    self.pos = at + 2;
                    continue;
                }
                None if !finished => None,
                None | Some(b'\n') => Some(true),
                Some(b) if b == self.delimiter => Some(true),
                Some(b'\r') => match text.get(at + 2) {
                    None if !finished => None,
                    next => Some(next == Some(&b'\n')),
                },
                Some(_) => Some(false),
            };
            match ends {
                None => {
                    self.pos = at;
                    return Ok(at);
                }
                Some(false) => return Err(at),
                Some(true) => {
                    self.quoted = false;
                    self.pos = at + 1;
                }
            }
        }
        self.pos = text.len();
        Ok(text.len())
    }

    /// Goes on from `at`, a record's start, the text before it having been rewritten.
    pub fn restart(&mut self, at: usize) {
        self.pos = at;
        self.quoted = false;
    }

    /// The first `n` bytes of the text were taken away (up to where the check has read).
    pub fn drained(&mut self, n: usize) {
        self.pos -= n;
    }
}

/// The complete records of `text` (which begins at a record's start) written so that every
/// RFC 4180 parser reads them as [`records`] does, and how many bytes of `text` they are. A
/// record with a quote [`QuoteCheck`] stops at has each of its fields written quoted, its
/// quotes doubled; the others are copied as they are, line ends too. The last record is
/// complete only when `finished` (it may go on in text not read yet).
pub fn requote(text: &str, delimiter: u8, finished: bool) -> (String, usize) {
    let bytes = text.as_bytes();
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..bom]);
    let mut start = bom;
    // One record's values, kept from record to record.
    let (mut values, mut ends) = (Vec::new(), Vec::new());
    while start < bytes.len() {
        let Some((end, clean)) =
            read_record(bytes, start, delimiter, finished, &mut values, &mut ends)
        else {
            break;
        };
        let record = &text[start..end];
        if clean {
            out.push_str(record);
        } else {
            let mut from = 0;
            for (k, &to) in ends.iter().enumerate() {
                if k > 0 {
                    out.push(char::from(delimiter));
                }
                // Values end only at ASCII bytes, so each is whole UTF-8.
                let value = std::str::from_utf8(&values[from..to]).unwrap_or_default();
                out.push('"');
                out.push_str(&value.replace('"', "\"\""));
                out.push('"');
                from = to;
            }
            out.push_str(if record.ends_with("\r\n") {
                "\r\n"
            } else if record.ends_with('\n') {
                "\n"
            } else {
                ""
            });
        }
        start = end;
    }
    (out, start)
}

/// How to read a delimited file's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub delimiter: Delimiter,
    /// Whether the first record (after the skipped ones) names the columns.
    pub header: bool,
    /// Records before the header (title or export-date lines) to skip.
    pub skip_rows: usize,
}

impl Default for Layout {
    fn default() -> Layout {
        Layout {
            delimiter: Delimiter::Auto,
            header: true,
            skip_rows: 0,
        }
    }
}

/// A table read from delimited text with the rules of this module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    /// The delimiter used (detected or named).
    pub delimiter: u8,
    /// The header's names, trimmed (`col1`, `col2`, … without a header).
    pub columns: Vec<String>,
    /// Up to the requested number of rows, blank records left out, as wide as `columns`
    /// (short records padded with empty fields).
    pub rows: Vec<Vec<String>>,
    /// Every non-blank record after the header (not only the rows kept).
    pub data_rows: usize,
    /// Blank records skipped after the header (all of them, not only those before the last
    /// row kept).
    pub blank_rows: usize,
    /// Trailing columns dropped (blank header, blank values).
    pub dropped_columns: usize,
}

/// The header and the number of data rows of delimited text read with the default layout
/// (delimiter detected, header in the first record, blank records left out): what an
/// attachment is summarised as (「8 行 × 5 列: 取引先, 請求日, …」).
pub fn shape(text: &str) -> crate::model::TableShape {
    let table = read_table(text, &Layout::default(), 0);
    crate::model::TableShape {
        rows: table.data_rows,
        columns: table.columns,
    }
}

/// The table of `text` read with `layout`: the header and at most `max_rows` rows. The whole
/// text is read to count blank records and to check the values of trailing columns with a
/// blank header.
pub fn read_table(text: &str, layout: &Layout, max_rows: usize) -> Table {
    read(text, layout, max_rows, true)
}

/// The columns and the first `max_rows` rows of `text`, as [`read_table`] gives them, reading
/// no further than they need: the rest of the text is read only when the header ends in blank
/// names (whether those columns are dropped depends on every row's values) or there is no
/// header (the widest record names the columns). `data_rows` and `blank_rows` count only
/// what was read. What a plan is checked against before it runs (`crate::schema`): a file
/// of 100,000 lines took a quarter of a reconciliation's run to be read whole for 20 rows.
pub fn read_sample(text: &str, layout: &Layout, max_rows: usize) -> Table {
    read(text, layout, max_rows, false)
}

fn read(text: &str, layout: &Layout, max_rows: usize, whole: bool) -> Table {
    let delimiter = layout.delimiter.resolve(text, layout.skip_rows);
    let mut all = records(text, delimiter).skip(layout.skip_rows);
    let mut header: Option<Vec<String>> = None;
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut blank_rows = 0;
    let mut data_rows = 0;
    let mut width = 0;
    // Per trailing blank-header column, whether a value was seen in it.
    let mut suffix: Vec<bool> = Vec::new();
    for record in all.by_ref() {
        if is_blank_record(&record) {
            if header.is_some() || !layout.header {
                blank_rows += 1;
            }
            continue;
        }
        if header.is_none() && layout.header {
            suffix = vec![false; blank_header_suffix(&record)];
            width = record.len();
            header = Some(record);
            continue;
        }
        width = width.max(record.len());
        let header_width = header.as_ref().map_or(0, Vec::len);
        for (k, seen) in suffix.iter_mut().enumerate() {
            let column = header_width - 1 - k;
            if record.get(column).is_some_and(|v| !is_blank_field(v)) {
                *seen = true;
            }
        }
        data_rows += 1;
        if rows.len() < max_rows {
            rows.push(record);
        }
        if !whole && layout.header && suffix.is_empty() && rows.len() >= max_rows {
            break;
        }
    }
    let mut columns: Vec<String> = match header {
        Some(names) => names.iter().map(|n| n.trim().to_string()).collect(),
        None if layout.header => Vec::new(),
        None => (1..=width).map(|i| format!("col{i}")).collect(),
    };
    let dropped_columns = if layout.header {
        suffix.iter().take_while(|seen| !**seen).count()
    } else {
        0
    };
    columns.truncate(columns.len() - dropped_columns);
    for row in &mut rows {
        row.resize(columns.len(), String::new());
    }
    Table {
        delimiter,
        columns,
        rows,
        data_rows,
        blank_rows,
        dropped_columns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_messy_export_is_summarised_by_its_rows_and_columns() {
        // A BOM, CRLF, a quoted field with a line break, blank lines between and after rows,
        // and a trailing empty column: three data rows of four named columns.
        let text = "\u{feff}伝票番号,日付,摘要,金額,\r\n1,2026-04-01,\"文具\r\n（事務用）\",1100,\r\n\r\n2,2026-04-02,電車代,2000,\r\n3,2026-04-03,入金,55000,\r\n\r\n,,,,\r\n";
        let shape = shape(text);
        assert_eq!(shape.rows, 3);
        assert_eq!(shape.columns, ["伝票番号", "日付", "摘要", "金額"]);
        // Tab-separated (Excel's "Unicode text") is detected the same way.
        let shape = super::shape("取引先\t金額\nA社\t100\n");
        assert_eq!((shape.rows, shape.columns.len()), (1, 2));
    }

    #[test]
    fn the_delimiter_is_the_one_every_record_shares() {
        for (text, skip, delimiter) in [
            ("日付,金額\n2024/04/01,100\n", 0, b','),
            (
                "日付\t金額\n2024/04/01\t1,000\n2024/04/02\t2,000\n",
                0,
                b'\t',
            ),
            ("科目;金額;部門\n旅費;100;営業\n", 0, b';'),
            ("科目|金額\n旅費|100\n", 0, b'|'),
            // A quoted comma does not count; the tab does.
            ("\"a,b\"\tc\n\"d,e\"\tf\n", 0, b'\t'),
            // Title lines without delimiters do not count, skipped or not.
            (
                "売上明細\n出力日 2024/05/01\n得意先,金額\nあさひ商事,1000\n",
                2,
                b',',
            ),
            (
                "売上明細\n出力日 2024/05/01\n得意先,金額\nあさひ商事,1000\n",
                0,
                b',',
            ),
            // One column: comma.
            ("金額\n100\n", 0, b','),
            ("", 0, b','),
        ] {
            assert_eq!(
                char::from(sniff_delimiter(text, skip)),
                char::from(delimiter),
                "{text:?}"
            );
        }
    }

    #[test]
    fn delimiter_names() {
        assert_eq!(Delimiter::parse("auto"), Some(Delimiter::Auto));
        assert_eq!(Delimiter::parse("\\t"), Some(Delimiter::Byte(b'\t')));
        assert_eq!(Delimiter::parse("tab"), Some(Delimiter::Byte(b'\t')));
        assert_eq!(Delimiter::parse(";"), Some(Delimiter::Byte(b';')));
        assert_eq!(Delimiter::parse(",,"), None);
        assert_eq!(Delimiter::parse("\""), None);
        assert_eq!(Delimiter::parse("、"), None);
    }

    #[test]
    fn blank_records_and_trailing_empty_columns_are_left_out() {
        let text = "日付,金額,,\r\n2024/04/01,100,,\r\n,,,\r\n  \r\n2024/04/02,200,,\r\n\r\n\r\n";
        let table = read_table(text, &Layout::default(), 10);
        assert_eq!(table.columns, ["日付", "金額"]);
        assert_eq!(table.rows, [["2024/04/01", "100"], ["2024/04/02", "200"]]);
        assert_eq!(table.blank_rows, 4);
        assert_eq!(table.dropped_columns, 2);
        // A blank-header column with a value is kept, and so is every column before it.
        let text = "日付,,\n2024/04/01,,\n2024/04/02,メモ,\n";
        let table = read_table(text, &Layout::default(), 10);
        assert_eq!(table.columns, ["日付", ""]);
        assert_eq!(table.dropped_columns, 1);
    }

    /// A sample reads no further than the columns and its rows need, and gives what the whole
    /// read gives: it stops after its rows under a named header, and reads on when a
    /// blank-header column may hold a value further down or there is no header.
    #[test]
    fn a_sample_gives_the_columns_and_rows_of_the_whole_read() {
        let mut text = String::from("伝票番号,金額,摘要\r\n");
        for i in 0..100 {
            text.push_str(&format!("{i},\"1,{i:03}\",文具\r\n\r\n"));
        }
        let (sample, whole) = (
            read_sample(&text, &Layout::default(), 20),
            read_table(&text, &Layout::default(), 20),
        );
        assert_eq!(
            (&sample.columns, &sample.rows),
            (&whole.columns, &whole.rows)
        );
        assert_eq!(sample.rows[19], ["19", "1,019", "文具"]);
        assert_eq!((sample.data_rows, whole.data_rows), (20, 100));
        // A value under the blank header at row 60 keeps the column: read to the end.
        let mut text = String::from("日付,金額,\n");
        for i in 0..100 {
            let memo = if i == 60 { "要確認" } else { "" };
            text.push_str(&format!("2024/04/01,{i},{memo}\n"));
        }
        let sample = read_sample(&text, &Layout::default(), 20);
        assert_eq!(sample.columns, ["日付", "金額", ""]);
        assert_eq!(sample.data_rows, 100);
        // Without a header the widest record names the columns, wherever it is.
        let no_header = Layout {
            header: false,
            ..Layout::default()
        };
        let text = "a,1\nb,2\nc,3\nd,4,5\n";
        let sample = read_sample(text, &no_header, 2);
        assert_eq!(sample.columns, ["col1", "col2", "col3"]);
        assert_eq!(sample.rows, [["a", "1", ""], ["b", "2", ""]]);
    }

    #[test]
    fn records_keep_quoted_delimiters_and_line_breaks() {
        let got: Vec<Vec<String>> = records("\"取引\r\n先\",\"a\"\"b\",c\r\n\r\nx", b',').collect();
        assert_eq!(
            got,
            vec![
                vec!["取引\r\n先".to_string(), "a\"b".into(), "c".into()],
                vec![String::new()],
                vec!["x".to_string()],
            ]
        );
    }

    /// Item names with inch marks, as a parts list exports them unquoted: [`records`] reads
    /// the quote as text; the check stops at it, not at the quoted amounts, the doubled quote
    /// or the quoted line break; `requote` writes those records quoted, which every parser
    /// then reads the same.
    #[test]
    fn an_inch_mark_in_an_unquoted_field_is_text_and_is_requoted() {
        let text = "品番,品名,金額\r\nP1,\"ボルト \"\"M8\"\"\",\"1,100\"\r\nP2,ボルト 1/2\" 特注,\"2,200\"\r\nP3,\"座金\n丸\",300\r\nP4,板 5\" x 3\",\"400\"\r\n";
        let rows: Vec<Vec<String>> = records(text, b',').collect();
        assert_eq!(rows[1], ["P1", "ボルト \"M8\"", "1,100"]);
        assert_eq!(rows[2], ["P2", "ボルト 1/2\" 特注", "2,200"]);
        assert_eq!(rows[3], ["P3", "座金\n丸", "300"]);
        assert_eq!(rows[4], ["P4", "板 5\" x 3\"", "400"]);
        let at = text.find("2\" 特注").unwrap() + 1;
        assert_eq!(
            QuoteCheck::new(b',').advance(text.as_bytes(), true),
            Err(at)
        );
        let (out, used) = requote(text, b',', true);
        assert_eq!(used, text.len());
        assert_eq!(
            out,
            "品番,品名,金額\r\nP1,\"ボルト \"\"M8\"\"\",\"1,100\"\r\n\"P2\",\"ボルト 1/2\"\" 特注\",\"2,200\"\r\nP3,\"座金\n丸\",300\r\n\"P4\",\"板 5\"\" x 3\"\"\",\"400\"\r\n"
        );
        assert_eq!(records(&out, b',').collect::<Vec<_>>(), rows);
        assert_eq!(
            QuoteCheck::new(b',').advance(out.as_bytes(), true),
            Ok(out.len())
        );
        // Text after a closing quote is part of the field, and requoted too.
        let (out, _) = requote("a,\"b\"c,d\n", b',', true);
        assert_eq!(out, "\"a\",\"bc\",\"d\"\n");
        // An unfinished record is left for later: a quote at the end may be doubled next.
        assert_eq!(
            requote("P1,a\"b,1\nP2,\"c", b',', false),
            ("\"P1\",\"a\"\"b\",\"1\"\n".to_string(), 9)
        );
        assert_eq!(QuoteCheck::new(b',').advance(b"P1,\"c\"", false), Ok(5));
        // Inch marks in the first records do not hide the delimiter.
        assert_eq!(
            sniff_delimiter(
                "品番\t品名\t数\nP1\tボルト 1/2\"\t3\nP2\t座金\t4\nP3\t板 5\"\t5\n",
                0
            ),
            b'\t'
        );
    }

    /// [`records`] as it was written before it shared [`read_record`] with [`requote`], a
    /// character at a time: the reading the proptest below holds it to.
    fn records_by_chars(text: &str, delimiter: char) -> Vec<Vec<String>> {
        let mut chars = text
            .strip_prefix('\u{feff}')
            .unwrap_or(text)
            .chars()
            .peekable();
        let mut all = Vec::new();
        while chars.peek().is_some() {
            let (mut record, mut field, mut quoted) = (Vec::new(), String::new(), false);
            while let Some(c) = chars.next() {
                if quoted {
                    match c {
                        '"' if chars.peek() == Some(&'"') => {
                            field.push('"');
                            chars.next();
                        }
                        '"' => quoted = false,
                        other => field.push(other),
                    }
                    continue;
                }
                match c {
                    '"' if field.is_empty() => quoted = true,
                    c if c == delimiter => record.push(std::mem::take(&mut field)),
                    '\r' if chars.peek() == Some(&'\n') => {}
                    '\n' => break,
                    other => field.push(other),
                }
            }
            record.push(field);
            all.push(record);
        }
        all
    }

    proptest::proptest! {
        /// Whatever its quotes, requoted text reads as the text does, holds no quote the check
        /// stops at, and is the same requoted in two calls (the first unfinished) as in one.
        #[test]
        fn requoted_text_reads_the_same_and_passes_the_check(
            chars in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just('"'), proptest::strategy::Just(','),
                    proptest::strategy::Just('\n'), proptest::strategy::Just('\r'),
                    proptest::strategy::Just('a'), proptest::strategy::Just('あ'),
                ],
                0..80,
            ),
            split in 0usize..90,
        ) {
            let text: String = chars.into_iter().collect();
            proptest::prop_assert_eq!(
                records(&text, b',').collect::<Vec<_>>(),
                records_by_chars(&text, ',')
            );
            let (out, used) = requote(&text, b',', true);
            proptest::prop_assert_eq!(used, text.len());
            if QuoteCheck::new(b',').advance(text.as_bytes(), true).is_ok() {
                proptest::prop_assert_eq!(&out, &text);
            }
            proptest::prop_assert_eq!(
                records(&out, b',').collect::<Vec<_>>(),
                records(&text, b',').collect::<Vec<_>>()
            );
            proptest::prop_assert_eq!(QuoteCheck::new(b',').advance(out.as_bytes(), true), Ok(out.len()));
            let split = text.char_indices().map(|(i, _)| i).chain([text.len()]).nth(split).unwrap_or(text.len());
            let (first, used) = requote(&text[..split], b',', false);
            let (rest, _) = requote(&text[used..], b',', true);
            proptest::prop_assert_eq!(first + &rest, out);
        }
    }
}
