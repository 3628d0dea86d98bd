//! Property tests: A1 references round-trip, and fill shifting matches a reference
//! implementation that shifts references in a formula *tree* (so it knows where every
//! reference is) on randomly generated formulas.

use keiri_xlsx::{CellRef, MAX_COL, MAX_ROW, column_name, shift_formula};
use proptest::prelude::*;

proptest! {
    #[test]
    fn a1_round_trips(row in 1..=MAX_ROW, col in 1..=MAX_COL, lower in any::<bool>(), dollar_col in any::<bool>(), dollar_row in any::<bool>()) {
        let cell = CellRef { row, col };
        prop_assert_eq!(CellRef::parse(&cell.to_a1()), Some(cell));
        let mut letters = column_name(col);
        if lower {
            letters = letters.to_lowercase();
        }
        let text = format!("{}{letters}{}{row}", if dollar_col { "$" } else { "" }, if dollar_row { "$" } else { "" });
        prop_assert_eq!(CellRef::parse(&text), Some(cell));
    }

    #[test]
    fn a1_parse_never_accepts_off_sheet(row in (MAX_ROW + 1)..=9_999_999u32, col in 1..=MAX_COL) {
        let off = format!("{}{row}", column_name(col));
        prop_assert_eq!(CellRef::parse(&off), None);
    }
}

#[derive(Debug, Clone)]
struct Pos {
    col: u32,
    col_abs: bool,
    row: u32,
    row_abs: bool,
}

#[derive(Debug, Clone)]
enum Node {
    Num(u32),
    Str(String),
    Name(&'static str),
    Cell(Option<&'static str>, Pos),
    Range(Option<&'static str>, Pos, Pos),
    Cols(u32, bool, u32, bool),
    Func(&'static str, Vec<Node>),
    Bin(Box<Node>, &'static str, Box<Node>),
    Paren(Box<Node>),
}

const SHEETS: &[&str] = &["Sheet2", "'My Sheet'", "入力", "'2024.12'"];
const NAMES: &[&str] = &["Rate", "_total", "税率", "LOG10X"];
const FUNCS: &[&str] = &["SUM", "IF", "LOG10", "VLOOKUP", "_xlfn.IFS"];
// `:` is left out: `A1:B2` is one area reference, not an operator between two cells.
const OPS: &[&str] = &["+", "-", "*", "/", "&", "<>"];

fn pos() -> impl Strategy<Value = Pos> {
    (1..40u32, any::<bool>(), 1..40u32, any::<bool>()).prop_map(|(col, col_abs, row, row_abs)| {
        Pos {
            col,
            col_abs,
            row,
            row_abs,
        }
    })
}

fn sheet() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![Just(None), proptest::sample::select(SHEETS).prop_map(Some)]
}

fn node() -> impl Strategy<Value = Node> {
    let leaf = prop_oneof![
        (0..1000u32).prop_map(Node::Num),
        "[A-Z0-9 \"]{0,6}".prop_map(Node::Str),
        proptest::sample::select(NAMES).prop_map(Node::Name),
        (sheet(), pos()).prop_map(|(s, p)| Node::Cell(s, p)),
        (sheet(), pos(), pos()).prop_map(|(s, a, b)| Node::Range(s, a, b)),
        (1..30u32, any::<bool>(), 1..30u32, any::<bool>())
            .prop_map(|(a, aa, b, ba)| Node::Cols(a, aa, b, ba)),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            (
                proptest::sample::select(FUNCS),
                proptest::collection::vec(inner.clone(), 0..4)
            )
                .prop_map(|(f, args)| Node::Func(f, args)),
            (inner.clone(), proptest::sample::select(OPS), inner.clone())
                .prop_map(|(a, op, b)| Node::Bin(Box::new(a), op, Box::new(b))),
            inner.prop_map(|n| Node::Paren(Box::new(n))),
        ]
    })
}

fn render_pos(p: &Pos) -> String {
    format!(
        "{}{}{}{}",
        if p.col_abs { "$" } else { "" },
        column_name(p.col),
        if p.row_abs { "$" } else { "" },
        p.row
    )
}

/// Renders the tree; with `shift`, references move like Excel's fill.
fn render(n: &Node, shift: Option<(i64, i64)>) -> String {
    let moved = |p: &Pos| -> Option<Pos> {
        let Some((dr, dc)) = shift else {
            return Some(p.clone());
        };
        let col = if p.col_abs {
            i64::from(p.col)
        } else {
            i64::from(p.col) + dc
        };
        let row = if p.row_abs {
            i64::from(p.row)
        } else {
            i64::from(p.row) + dr
        };
        let on_sheet =
            (1..=i64::from(MAX_COL)).contains(&col) && (1..=i64::from(MAX_ROW)).contains(&row);
        on_sheet.then_some(Pos {
            col: col as u32,
            col_abs: p.col_abs,
            row: row as u32,
            row_abs: p.row_abs,
        })
    };
    let prefix = |s: &Option<&str>| s.map(|s| format!("{s}!")).unwrap_or_default();
    match n {
        Node::Num(v) => v.to_string(),
        Node::Str(s) => format!("\"{}\"", s.replace('"', "\"\"")),
        Node::Name(s) => s.to_string(),
        Node::Cell(s, p) => match moved(p) {
            Some(p) => format!("{}{}", prefix(s), render_pos(&p)),
            None => format!("{}#REF!", prefix(s)),
        },
        Node::Range(s, a, b) => match (moved(a), moved(b)) {
            (Some(a), Some(b)) => format!("{}{}:{}", prefix(s), render_pos(&a), render_pos(&b)),
            _ => format!("{}#REF!", prefix(s)),
        },
        Node::Cols(a, aa, b, ba) => {
            let dc = shift.map_or(0, |(_, dc)| dc);
            let m = |c: u32, abs: bool| {
                if abs {
                    Some(i64::from(c))
                } else {
                    Some(i64::from(c) + dc).filter(|c| (1..=i64::from(MAX_COL)).contains(c))
                }
            };
            match (m(*a, *aa), m(*b, *ba)) {
                (Some(x), Some(y)) => format!(
                    "{}{}:{}{}",
                    if *aa { "$" } else { "" },
                    column_name(x as u32),
                    if *ba { "$" } else { "" },
                    column_name(y as u32)
                ),
                _ => "#REF!".to_string(),
            }
        }
        Node::Func(f, args) => format!(
            "{f}({})",
            args.iter()
                .map(|a| render(a, shift))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Node::Bin(a, op, b) => format!("{}{op}{}", render(a, shift), render(b, shift)),
        Node::Paren(a) => format!("({})", render(a, shift)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn fill_shift_matches_the_reference(tree in node(), dr in -6i64..6, dc in -6i64..6) {
        let text = render(&tree, None);
        let got = shift_formula(&text, dr, dc).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(got.text, render(&tree, Some((dr, dc))), "formula {}", text);
        // Moving back restores the formula whenever nothing fell off the sheet.
        if got.lost.is_empty() {
            let back = shift_formula(&render(&tree, Some((dr, dc))), -dr, -dc).unwrap();
            prop_assert_eq!(back.text, text);
        }
    }

    #[test]
    fn formula_functions_never_panic(text in "\\PC{0,40}", dr in -3i64..3, dc in -3i64..3) {
        let _ = shift_formula(&text, dr, dc);
    }
}
