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
//! * Quoted fields (RFC 4180) may hold the delimiter, doubled quotes and line breaks.

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
    for (i, c) in text.chars().enumerate() {
        if i >= SNIFF_CHARS || lines.len() >= SNIFF_RECORDS {
            finished = false;
            break;
        }
        match c {
            '"' => {
                quoted = !quoted;
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
        chars: text
            .strip_prefix('\u{feff}')
            .unwrap_or(text)
            .chars()
            .peekable(),
        delimiter: char::from(delimiter),
    }
}

/// The iterator of [`records`].
pub struct Records<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    delimiter: char,
}

impl Iterator for Records<'_> {
    type Item = Vec<String>;

    fn next(&mut self) -> Option<Vec<String>> {
        let mut record = Vec::new();
        let mut field = String::new();
        let mut quoted = false;
        let mut any = false;
        let chars = &mut self.chars;
        while let Some(c) = chars.next() {
            any = true;
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
                c if c == self.delimiter => record.push(std::mem::take(&mut field)),
                '\r' if chars.peek() == Some(&'\n') => {}
                '\n' => {
                    record.push(field);
                    return Some(record);
                }
                other => field.push(other),
            }
        }
        if !any {
            return None;
        }
        record.push(field);
        Some(record)
    }
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
}
