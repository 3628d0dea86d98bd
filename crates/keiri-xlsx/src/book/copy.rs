//! `copy_sheet`: a worksheet duplicated under a new name, as Excel's "Move or Copy… / Create a
//! copy" makes it. Everything the worksheet part itself holds comes along (values, formulas,
//! styles, merges, column widths, row heights, conditional formats, data validations, page
//! setup, internal hyperlinks); external hyperlinks keep their relationships; the defined names
//! scoped to the sheet are duplicated for the copy (see `Book::workbook_xml`). Parts the sheet
//! only points to — drawings and charts, comments, tables, controls, the printer driver's
//! settings — are not duplicated: the copy leaves out the element that points to each, and
//! the returned warnings name them.

use super::{Book, Origin};
use crate::error::Error;
use crate::package;
use crate::sheet::SheetDoc;
use crate::xml;

/// The worksheet elements that point to a related part, and what each one is, for warnings.
const RELATED: &[(&[u8], &str)] = &[
    (b"drawing", "drawings (charts, shapes, pictures)"),
    (
        b"legacyDrawing",
        "comments or form controls (legacy drawing)",
    ),
    (b"legacyDrawingHF", "header/footer pictures"),
    (b"picture", "the background picture"),
    (b"oleObjects", "embedded objects"),
    (b"controls", "controls"),
    (
        b"tableParts",
        "tables (a table name is unique in a workbook)",
    ),
    (b"customProperties", "custom properties"),
    (b"webPublishItems", "web publishing items"),
];

impl Book {
    /// Adds a copy of sheet `source` named `name` at tab `position` (0-based; `None`: last).
    /// Returns warnings naming what was not copied.
    pub fn copy_sheet(
        &mut self,
        source: usize,
        name: &str,
        position: Option<usize>,
    ) -> Result<Vec<String>, Error> {
        let (xml_text, source_part, original) = {
            let (doc, _) = self.doc_mut(source)?;
            let text = doc.to_xml();
            match self.sheets.get(source).map(|s| &s.origin) {
                Some(Origin::Existing {
                    part,
                    original_index,
                }) => (text, part.clone(), Some(*original_index)),
                _ => (text, None, None),
            }
        };
        let source_name = self
            .sheets
            .get(source)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        let mut warnings = Vec::new();
        let probe = SheetDoc::parse(xml_text.clone())
            .map_err(|e| Error::unreadable(&self.pkg.display, format!("{source_name}: {e}")))?;
        let mut splices: Vec<(usize, usize, String)> = Vec::new();
        for (element, what) in RELATED {
            if let Some((a, b)) = probe.element_span(element) {
                splices.push((a, b, String::new()));
                warnings.push(format!(
                    "copy_sheet: {what} of {source_name:?} are not copied to {name:?}"
                ));
            }
        }
        // Extensions that point to parts (slicers, timelines) go; the others (newer
        // conditional formats and validations) stay.
        if let Some((a, b)) = probe.element_span(b"extLst")
            && xml_text.get(a..b).is_some_and(has_relationship_id)
        {
            splices.push((a, b, String::new()));
            warnings.push(format!(
                "copy_sheet: slicers and other extensions of {source_name:?} that point to \
                 other parts are not copied to {name:?}"
            ));
        }
        if let Some((a, b)) = start_tag(&xml_text, probe.element_span(b"pageSetup"), "pageSetup")
            && let Some(tag) = xml_text.get(a..b)
            && has_relationship_id(tag)
        {
            let attr = relationship_attr(tag).unwrap_or_else(|| "r:id".to_string());
            let empty = tag.trim_end().ends_with("/>");
            if let Some(new) = xml::rewrite_start_tag(tag, &[], &[attr.as_str()], empty) {
                splices.push((a, b, new));
            }
            warnings.push(format!(
                "copy_sheet: the printer driver's settings of {source_name:?} are not copied to \
                 {name:?} (its page setup is)"
            ));
        }
        // A VBA code name is unique in a workbook: the copy gets none (Excel gives it one).
        if let Some((a, b)) = probe.element_span(b"sheetPr")
            && let Some(tag_end) = xml_text.get(a..b).and_then(|t| t.find('>'))
            && let Some(tag) = xml_text.get(a..a + tag_end + 1)
            && tag.contains("codeName=")
        {
            let empty = tag.trim_end().ends_with("/>");
            if let Some(new) = xml::rewrite_start_tag(tag, &[], &["codeName"], empty) {
                splices.push((a, a + tag_end + 1, new));
            }
        }
        // One selected tab: two would open grouped in Excel, and an edit would go to both.
        if let Some((a, b)) = start_tag(&xml_text, probe.element_span(b"sheetViews"), "sheetView")
            && let Some(tag) = xml_text.get(a..b)
            && tag.contains("tabSelected=")
        {
            let empty = tag.trim_end().ends_with("/>");
            if let Some(new) = xml::rewrite_start_tag(tag, &[], &["tabSelected"], empty) {
                splices.push((a, b, new));
            }
        }
        drop(probe);
        let copied = xml::splice(&xml_text, splices);
        let doc = SheetDoc::parse(copied)
            .map_err(|e| Error::Backend(format!("copying sheet {source_name:?}: {e}")))?;
        let (part, rid, sheet_id) = self.new_sheet_slot();
        // External hyperlinks keep their relationships (the ids are the part's own, so the
        // copy's rels part reuses them unchanged).
        if let Some(source_part) = &source_part {
            let rels_part = package::rels_part_of(source_part);
            if let Some(text) = self.pkg.read_text(&rels_part)? {
                let rels = package::parse_rels(&self.pkg.display, &rels_part, text)?;
                let links: Vec<String> = rels
                    .rels
                    .iter()
                    .filter(|r| r.kind() == "hyperlink")
                    .filter_map(|r| rels.text.get(r.span.0..r.span.1).map(str::to_string))
                    .collect();
                if !links.is_empty() {
                    self.sheet_rels
                        .push((package::rels_part_of(&part), None, links));
                }
            }
        }
        self.insert_added(name, doc, (part, rid, sheet_id), original, position);
        Ok(warnings)
    }
}

/// A formula with each reference to sheet `old` pointed at sheet `new` (a defined name copied
/// with its sheet). A formula that does not parse is returned as it is.
pub(super) fn rename_sheet_refs(formula: &str, old: &str, new: &str) -> String {
    use crate::formula::{Kind, tokenize};
    let Ok(tokens) = tokenize(formula) else {
        return formula.to_string();
    };
    let prefix = format!("'{}'!", new.replace('\'', "''"));
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for t in tokens {
        let (p, area_start) = match &t.kind {
            Kind::Reference(r) => (r.prefix.as_ref(), r.area_start),
            _ => continue,
        };
        let Some(p) = p else { continue };
        if p.external.is_none() && p.last_sheet.is_none() && super::same_sheet_name(&p.sheet, old) {
            edits.push((t.start, area_start, prefix.clone()));
        }
    }
    xml::splice(formula, edits)
}

/// The first start tag of element `local` (any prefix) within `within` of `text`.
fn start_tag(text: &str, within: Option<(usize, usize)>, local: &str) -> Option<(usize, usize)> {
    let (a, b) = within?;
    let inner = text.get(a..b)?;
    let mut from = 0;
    while let Some(lt) = inner.get(from..)?.find('<') {
        let at = from + lt;
        let rest = inner.get(at + 1..)?;
        let name_end = rest
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .unwrap_or(rest.len());
        let name = rest.get(..name_end)?;
        if name.rsplit(':').next() == Some(local) {
            let close = inner.get(at..)?.find('>')?;
            return Some((a + at, a + at + close + 1));
        }
        from = at + 1;
    }
    None
}

/// Whether XML text has a relationship id attribute (`r:id="…"`, or another prefix's `:id`).
fn has_relationship_id(text: &str) -> bool {
    relationship_attr(text).is_some()
}

/// The first `prefix:id` attribute name in a tag or element.
fn relationship_attr(text: &str) -> Option<String> {
    let at = text.find(":id=\"")?;
    let start = text.get(..at)?.rfind(|c: char| c.is_whitespace())? + 1;
    text.get(start..at + 3).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relationship_attributes_are_found_by_any_prefix() {
        assert_eq!(
            relationship_attr("<pageSetup paperSize=\"9\" r:id=\"rId1\"/>").as_deref(),
            Some("r:id")
        );
        assert_eq!(
            relationship_attr("<x:pageSetup rel:id=\"rId2\"/>").as_deref(),
            Some("rel:id")
        );
        assert!(!has_relationship_id("<pageSetup paperSize=\"9\"/>"));
    }

    #[test]
    fn a_copied_name_refers_to_the_copy() {
        assert_eq!(
            rename_sheet_refs("'2024.12'!$A$1:$P$34", "2024.12", "2025.3"),
            "'2025.3'!$A$1:$P$34"
        );
        assert_eq!(
            rename_sheet_refs("明細!$A:$A,明細!$1:$1,他!$A$1", "明細", "O'Neil"),
            "'O''Neil'!$A:$A,'O''Neil'!$1:$1,他!$A$1"
        );
    }
}
