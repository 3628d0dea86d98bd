//! A1 cell references and rectangular areas (`B3`, `$A$1`, `A1:C3`).

use std::fmt;

/// The last row of a worksheet (Excel 2007 and later).
pub const MAX_ROW: u32 = 1_048_576;
/// The last column of a worksheet (`XFD`).
pub const MAX_COL: u32 = 16_384;

/// One cell, 1-based. Ordered row-major, which is the order of cells in a worksheet part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellRef {
    pub row: u32,
    pub col: u32,
}

impl CellRef {
    /// A cell if both coordinates are on the sheet.
    pub fn new(row: u32, col: u32) -> Option<CellRef> {
        ((1..=MAX_ROW).contains(&row) && (1..=MAX_COL).contains(&col))
            .then_some(CellRef { row, col })
    }

    /// Parses `B3`, `$B$3`, `b3`; `$` marks are accepted and dropped. Leading zeros in the row
    /// (`A01`) are refused because Excel never writes them and they hide typos.
    pub fn parse(text: &str) -> Option<CellRef> {
        let (cell, rest) = parse_cell_prefix(text)?;
        rest.is_empty().then_some(cell)
    }

    /// The `B3` form.
    pub fn to_a1(self) -> String {
        format!("{}{}", column_name(self.col), self.row)
    }

    /// This cell moved by a row and column offset, if it stays on the sheet.
    pub fn offset(self, rows: i64, cols: i64) -> Option<CellRef> {
        let row = u32::try_from(i64::from(self.row) + rows).ok()?;
        let col = u32::try_from(i64::from(self.col) + cols).ok()?;
        CellRef::new(row, col)
    }
}

impl fmt::Display for CellRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", column_name(self.col), self.row)
    }
}

/// Parses a cell at the start of `text` and returns it with the rest of the text.
fn parse_cell_prefix(text: &str) -> Option<(CellRef, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    if bytes.first() == Some(&b'$') {
        i += 1;
    }
    let letters_start = i;
    while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
        i += 1;
    }
    let letters = &text[letters_start..i];
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    if bytes.get(i) == Some(&b'$') {
        i += 1;
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let digits = &text[digits_start..i];
    if digits.is_empty() || digits.starts_with('0') || digits.len() > 7 {
        return None;
    }
    let row: u32 = digits.parse().ok()?;
    let col = column_number(letters)?;
    Some((CellRef::new(row, col)?, &text[i..]))
}

/// `1 → A`, `27 → AA`, `16384 → XFD`.
pub fn column_name(mut col: u32) -> String {
    let mut out = Vec::with_capacity(3);
    while col > 0 {
        let rem = (col - 1) % 26;
        out.push(b'A' + rem as u8);
        col = (col - 1) / 26;
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// `A → 1`, `xfd → 16384`; `None` past `XFD` or for anything but 1–3 ASCII letters.
pub fn column_number(letters: &str) -> Option<u32> {
    if letters.is_empty() || letters.len() > 3 {
        return None;
    }
    let mut n: u32 = 0;
    for b in letters.bytes() {
        if !b.is_ascii_alphabetic() {
            return None;
        }
        n = n * 26 + u32::from(b.to_ascii_uppercase() - b'A' + 1);
    }
    (n <= MAX_COL).then_some(n)
}

/// A rectangle of cells, `first` top-left and `last` bottom-right.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Area {
    pub first: CellRef,
    pub last: CellRef,
}

impl Area {
    /// The area spanned by two corners, in any order.
    pub fn spanning(a: CellRef, b: CellRef) -> Area {
        Area {
            first: CellRef {
                row: a.row.min(b.row),
                col: a.col.min(b.col),
            },
            last: CellRef {
                row: a.row.max(b.row),
                col: a.col.max(b.col),
            },
        }
    }

    /// A one-cell area.
    pub fn cell(c: CellRef) -> Area {
        Area { first: c, last: c }
    }

    /// Parses `A1:C3` (corners in any order, `$` accepted) or a single cell `A1`.
    pub fn parse(text: &str) -> Option<Area> {
        match text.split_once(':') {
            Some((a, b)) => Some(Area::spanning(CellRef::parse(a)?, CellRef::parse(b)?)),
            None => CellRef::parse(text).map(Area::cell),
        }
    }

    pub fn rows(&self) -> u32 {
        self.last.row - self.first.row + 1
    }

    pub fn cols(&self) -> u32 {
        self.last.col - self.first.col + 1
    }

    /// Number of cells (fits in u64 even for a whole sheet).
    pub fn len(&self) -> u64 {
        u64::from(self.rows()) * u64::from(self.cols())
    }

    /// Always false: an area holds at least its corner cell.
    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn is_single_cell(&self) -> bool {
        self.first == self.last
    }

    pub fn contains(&self, c: CellRef) -> bool {
        (self.first.row..=self.last.row).contains(&c.row)
            && (self.first.col..=self.last.col).contains(&c.col)
    }

    /// The smallest area holding both.
    pub fn union(&self, other: &Area) -> Area {
        Area {
            first: CellRef {
                row: self.first.row.min(other.first.row),
                col: self.first.col.min(other.first.col),
            },
            last: CellRef {
                row: self.last.row.max(other.last.row),
                col: self.last.col.max(other.last.col),
            },
        }
    }

    /// Cells row by row, left to right.
    pub fn cells(&self) -> impl Iterator<Item = CellRef> + '_ {
        (self.first.row..=self.last.row).flat_map(move |row| {
            (self.first.col..=self.last.col).map(move |col| CellRef { row, col })
        })
    }

    /// `A1:C3`, or `A1` for a single cell.
    pub fn to_a1(&self) -> String {
        if self.is_single_cell() {
            self.first.to_a1()
        } else {
            format!("{}:{}", self.first, self.last)
        }
    }
}

impl fmt::Display for Area {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_a1())
    }
}

/// Parses a space-separated list of areas as used by `sqref` and `mergeCell ref`.
pub fn parse_area_list(text: &str) -> Vec<Area> {
    text.split_whitespace().filter_map(Area::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: Option<(u32, u32)>) {
        assert_eq!(
            CellRef::parse(input).map(|c| (c.row, c.col)),
            expect,
            "input {input:?}"
        );
    }

    #[test]
    fn parses_cells() {
        check("A1", Some((1, 1)));
        check("b3", Some((3, 2)));
        check("$C$10", Some((10, 3)));
        check("C$10", Some((10, 3)));
        check("XFD1048576", Some((1_048_576, 16_384)));
        check("XFE1", None);
        check("A1048577", None);
        check("A0", None);
        check("A01", None);
        check("1A", None);
        check("AAAA1", None);
        check("A1 ", None);
        check("", None);
        check("$$A1", None);
        check("Ａ１", None);
    }

    #[test]
    fn column_names() {
        for (n, name) in [
            (1, "A"),
            (26, "Z"),
            (27, "AA"),
            (52, "AZ"),
            (702, "ZZ"),
            (703, "AAA"),
            (16_384, "XFD"),
        ] {
            assert_eq!(column_name(n), name);
            assert_eq!(column_number(name), Some(n));
        }
    }

    #[test]
    fn areas() {
        let a = Area::parse("C3:A1").unwrap();
        assert_eq!(a.to_a1(), "A1:C3");
        assert_eq!((a.rows(), a.cols(), a.len()), (3, 3, 9));
        assert_eq!(Area::parse("$B$2").unwrap().to_a1(), "B2");
        assert!(Area::parse("A1:").is_none());
        assert!(Area::parse("A1:B2:C3").is_none());
        let cells: Vec<String> = Area::parse("A1:B2")
            .unwrap()
            .cells()
            .map(CellRef::to_a1)
            .collect();
        assert_eq!(cells, ["A1", "B1", "A2", "B2"]);
    }
}
