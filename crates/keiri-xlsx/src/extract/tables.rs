//! Table candidates drawn with borders, a simplified form of ExStruct's border clusters: cells
//! whose format has a border are grouped into 4-connected clusters; a cluster of at least four
//! cells gives its bounding box, overlapping boxes are merged, and each box is trimmed to the
//! rows and columns that hold values. A box of at least two rows and two columns is a
//! candidate. (ExStruct also scores candidates by value density; that is not done here.)

use std::collections::{BTreeSet, HashSet, VecDeque};

use crate::a1::{Area, CellRef};
use crate::package::Package;
use crate::sheet::SheetDoc;

use super::tree;

/// Cells of one cluster before it counts.
const MIN_CLUSTER_CELLS: usize = 4;
/// Bordered blocks of one sheet that are merged and trimmed; a sheet with more gets none.
const MAX_BOXES: usize = 5_000;

/// What extraction needs from the cell formats (`cellXfs` index → fact).
#[derive(Default)]
pub(crate) struct FormatFacts {
    /// The format draws a border.
    pub bordered: Vec<bool>,
    /// The format's number format shows a date or time.
    pub date: Vec<bool>,
}

/// Built-in number formats that show dates or times (ECMA-376 §18.8.30, with the East Asian
/// ones Excel writes for Japanese dates).
fn builtin_date_format(id: u32) -> bool {
    matches!(id, 14..=22 | 27..=36 | 45..=47 | 50..=58)
}

/// Whether a custom number format code shows a date or time: a y, m, d, h or s in its first
/// section, outside quoted text, escapes and bracketed colours, locales and conditions (`[h]`
/// elapsed hours count).
pub(crate) fn is_date_code(code: &str) -> bool {
    let mut chars = code.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                for q in chars.by_ref() {
                    if q == '"' {
                        break;
                    }
                }
            }
            '\\' | '_' | '*' => {
                chars.next();
            }
            '[' => {
                let mut inner = String::new();
                for q in chars.by_ref() {
                    if q == ']' {
                        break;
                    }
                    inner.push(q);
                }
                let lower = inner.to_ascii_lowercase();
                if !lower.is_empty() && lower.chars().all(|c| matches!(c, 'h' | 'm' | 's')) {
                    return true;
                }
            }
            ';' => return false,
            // Japanese era formats (`ggge年m月d日`) have their m and d too.
            c if matches!(c.to_ascii_lowercase(), 'y' | 'm' | 'd' | 'h' | 's') => return true,
            _ => {}
        }
    }
    false
}

/// Reads the cell formats of the workbook's styles part. `Err` is why it could not be read.
pub(crate) fn format_facts(pkg: &Package) -> Result<FormatFacts, String> {
    let Some(part) = pkg
        .names()
        .iter()
        .find(|n| {
            let lower = n.to_ascii_lowercase();
            lower.ends_with("/styles.xml") && !lower.contains("_rels/")
        })
        .cloned()
    else {
        return Ok(FormatFacts::default());
    };
    let text = pkg
        .read_text(&part)
        .map_err(|e| e.to_string())?
        .unwrap_or_default();
    let root = tree::parse(&text).map_err(|e| format!("{part}: {e}"))?;
    let borders: Vec<bool> = root
        .child("borders")
        .map(|b| {
            b.children_named("border")
                .map(|border| {
                    border.children.iter().any(|side| {
                        matches!(
                            side.name.as_str(),
                            "left" | "right" | "top" | "bottom" | "start" | "end"
                        ) && side.attr("style").is_some_and(|s| s != "none")
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let custom_dates: std::collections::HashSet<u32> = root
        .child("numFmts")
        .map(|n| {
            n.children_named("numFmt")
                .filter(|f| f.attr("formatCode").is_some_and(is_date_code))
                .filter_map(|f| f.attr("numFmtId")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    let mut facts = FormatFacts::default();
    if let Some(xfs) = root.child("cellXfs") {
        for xf in xfs.children_named("xf") {
            facts.bordered.push(
                xf.attr("borderId")
                    .and_then(|b| b.parse::<usize>().ok())
                    .and_then(|b| borders.get(b).copied())
                    .unwrap_or(false),
            );
            let id: Option<u32> = xf.attr("numFmtId").and_then(|n| n.parse().ok());
            facts.date.push(id.is_some_and(|id| {
                custom_dates.contains(&id) || (builtin_date_format(id) && id < 164)
            }));
        }
    }
    Ok(facts)
}

/// The bordered table candidates of a sheet. `values` holds the cells with values; at most
/// `budget` bordered cells and [`MAX_BOXES`] blocks are looked at (`None` when there were more).
pub(crate) fn border_candidates(
    doc: &SheetDoc,
    bordered: &[bool],
    values: &BTreeSet<(u32, u32)>,
    budget: u64,
) -> Option<Vec<Area>> {
    if !bordered.iter().any(|b| *b) {
        return Some(Vec::new());
    }
    let mut cells: HashSet<(u32, u32)> = HashSet::new();
    for at in doc.written_cells() {
        let style = doc.style_id(at) as usize;
        if bordered.get(style).copied().unwrap_or(false) {
            if cells.len() as u64 >= budget {
                return None;
            }
            cells.insert((at.row, at.col));
        }
    }
    let mut boxes: Vec<(u32, u32, u32, u32)> = Vec::new();
    let mut seen: HashSet<(u32, u32)> = HashSet::new();
    let mut ordered: Vec<&(u32, u32)> = cells.iter().collect();
    ordered.sort_unstable();
    for &start in ordered {
        if !seen.insert(start) {
            continue;
        }
        let mut queue = VecDeque::from([start]);
        let (mut r1, mut c1, mut r2, mut c2) = (start.0, start.1, start.0, start.1);
        let mut count = 0usize;
        while let Some((r, c)) = queue.pop_front() {
            count += 1;
            r1 = r1.min(r);
            r2 = r2.max(r);
            c1 = c1.min(c);
            c2 = c2.max(c);
            let neighbours = [
                (r.wrapping_sub(1), c),
                (r + 1, c),
                (r, c.wrapping_sub(1)),
                (r, c + 1),
            ];
            for n in neighbours {
                if cells.contains(&n) && seen.insert(n) {
                    queue.push_back(n);
                }
            }
        }
        if count >= MIN_CLUSTER_CELLS {
            boxes.push((r1, c1, r2, c2));
        }
    }
    // Merging compares boxes pairwise: past this many the sheet is not searched.
    if boxes.len() > MAX_BOXES {
        return None;
    }
    // Merge overlapping boxes until none overlap.
    let overlaps = |a: &(u32, u32, u32, u32), b: &(u32, u32, u32, u32)| {
        !(a.1 > b.3 || a.3 < b.1 || a.0 > b.2 || a.2 < b.0)
    };
    let mut merged: Vec<(u32, u32, u32, u32)> = Vec::new();
    for b in boxes {
        let mut current = b;
        while let Some(i) = merged.iter().position(|m| overlaps(m, &current)) {
            let m = merged.swap_remove(i);
            current = (
                m.0.min(current.0),
                m.1.min(current.1),
                m.2.max(current.2),
                m.3.max(current.3),
            );
        }
        merged.push(current);
    }
    merged.sort_unstable();
    // Trim each box to the values inside it. A box is no taller than the bordered cells it
    // was built from, so this walks at most as many rows as there are bordered cells.
    let mut out = Vec::new();
    for (r1, c1, r2, c2) in merged {
        let mut inside: Option<(u32, u32, u32, u32)> = None;
        for r in r1..=r2 {
            let mut row = values.range((r, c1)..=(r, c2));
            let Some(&(_, first)) = row.next() else {
                continue;
            };
            let last = row.next_back().map_or(first, |&(_, c)| c);
            inside = Some(match inside {
                None => (r, first, r, last),
                Some((a, b, _, d)) => (a, b.min(first), r, d.max(last)),
            });
        }
        if let Some((r1, c1, r2, c2)) = inside
            && r2 > r1
            && c2 > c1
            && let (Some(first), Some(last)) = (CellRef::new(r1, c1), CellRef::new(r2, c2))
        {
            out.push(Area::spanning(first, last));
        }
    }
    Some(out)
}
