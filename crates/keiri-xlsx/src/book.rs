//! The workbook being patched: its sheets (existing and added), lazily loaded worksheet parts,
//! the shared strings, and the package changes a save makes.

use std::collections::HashSet;

use unicode_normalization::UnicodeNormalization;

use crate::a1::Area;
use crate::error::Error;
use crate::package::{self, Changes, ContentTypes, NewPart, Package, Rels, WorkbookXml};
use crate::sheet::SheetDoc;
use crate::styles::Styles;
use crate::xml;

mod copy;

const TABLE_CONTENT_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.spreadsheetml.table+xml";
const WORKSHEET_CONTENT_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml";
const STYLES_CONTENT_TYPE: &str =
    "application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SheetKind {
    Worksheet,
    Chartsheet,
    Dialogsheet,
    Macrosheet,
    Unknown,
}

impl SheetKind {
    pub fn describe(self) -> &'static str {
        match self {
            SheetKind::Worksheet => "a worksheet",
            SheetKind::Chartsheet => "a chart sheet",
            SheetKind::Dialogsheet => "a dialog sheet",
            SheetKind::Macrosheet => "a macro sheet",
            SheetKind::Unknown => "a sheet whose part is missing",
        }
    }
}

pub(crate) enum Origin {
    /// A sheet of the original workbook: its index in `workbook.xml` and its part.
    Existing {
        original_index: usize,
        part: Option<String>,
    },
    /// A sheet added by this patch.
    Added {
        part: String,
        rid: String,
        sheet_id: u32,
        /// For a copy of an original sheet: that sheet's index in `workbook.xml` (its scoped
        /// defined names are copied with it).
        copy_of: Option<usize>,
    },
}

pub(crate) struct BookSheet {
    pub name: String,
    pub kind: SheetKind,
    pub origin: Origin,
    pub doc: Option<SheetDoc>,
}

pub(crate) struct Book {
    pub pkg: Package,
    ct_part: String,
    ct: ContentTypes,
    wb_part: String,
    pub wb: WorkbookXml,
    wb_rels_part: String,
    wb_rels: Rels,
    pub sheets: Vec<BookSheet>,
    /// Original sheets deleted by this patch, by original index.
    deleted: Vec<(usize, Option<String>)>,
    sst: Option<Vec<String>>,
    /// Tables added by this patch: (part, xml, the worksheet part it belongs to).
    new_tables: Vec<(String, String, String)>,
    /// Relationship parts of worksheets that got a table: part → (original, if any; new
    /// relationship elements).
    sheet_rels: Vec<(String, Option<Rels>, Vec<String>)>,
    /// Original tables deleted by this patch: (table part, sheet rels part, relationship span).
    deleted_tables: Vec<(String, String, (usize, usize))>,
    /// `styles.xml` and its part name, loaded by the first styling op.
    styles: Option<(String, Styles)>,
    /// The relationship id of a styles part this patch creates (the workbook had none).
    new_styles_rid: Option<String>,
    /// Whether any op changed anything.
    pub changed: bool,
    /// Whether values, formulas or sheets changed: then the save asks for a full calculation
    /// and drops calcChain. Styling and structure ops leave both alone.
    pub recalc: bool,
}

/// Two sheet names are the same for Excel when they match ignoring case (and, here, Unicode
/// normalisation form, since names typed on different systems may differ only in that).
pub(crate) fn same_sheet_name(a: &str, b: &str) -> bool {
    a == b || normalise_name(a) == normalise_name(b)
}

fn normalise_name(s: &str) -> String {
    s.nfc().collect::<String>().to_lowercase()
}

/// Excel's rules for a sheet name.
pub(crate) fn check_sheet_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("the sheet name is empty".to_string());
    }
    if name.encode_utf16().count() > 31 {
        return Err(format!(
            "the sheet name {name:?} is longer than 31 characters"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| matches!(c, '[' | ']' | ':' | '*' | '?' | '/' | '\\'))
    {
        return Err(format!(
            "the sheet name {name:?} contains {c:?}; Excel does not allow [ ] : * ? / \\"
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(format!(
            "the sheet name {name:?} contains a control character"
        ));
    }
    if name.starts_with('\'') || name.ends_with('\'') {
        return Err(format!(
            "the sheet name {name:?} begins or ends with an apostrophe"
        ));
    }
    if name.eq_ignore_ascii_case("history") {
        return Err("\"History\" is reserved by Excel".to_string());
    }
    Ok(())
}

impl Book {
    pub fn open(pkg: Package) -> Result<Book, Error> {
        let display = pkg.display.clone();
        let ct_part = "[Content_Types].xml".to_string();
        let ct_text = pkg.read_text(&ct_part)?.ok_or_else(|| {
            Error::unreadable(&display, "no [Content_Types].xml: not an Office package")
        })?;
        let ct = package::parse_content_types(&display, ct_text)?;
        let root_rels_text = pkg
            .read_text("_rels/.rels")?
            .ok_or_else(|| Error::unreadable(&display, "no _rels/.rels"))?;
        let root_rels = package::parse_rels(&display, "_rels/.rels", root_rels_text)?;
        let office = root_rels
            .rels
            .iter()
            .find(|r| r.kind() == "officeDocument" && !r.external)
            .ok_or_else(|| Error::unreadable(&display, "no officeDocument relationship"))?;
        let wb_part = package::resolve_target("", &office.target);
        let wb_text = pkg.read_text(&wb_part)?.ok_or_else(|| {
            Error::unreadable(&display, format!("the workbook part {wb_part} is missing"))
        })?;
        let wb = package::parse_workbook(&display, &wb_part, wb_text)?;
        let wb_rels_part = package::rels_part_of(&wb_part);
        let wb_rels_text = pkg
            .read_text(&wb_rels_part)?
            .ok_or_else(|| Error::unreadable(&display, format!("{wb_rels_part} is missing")))?;
        let wb_rels = package::parse_rels(&display, &wb_rels_part, wb_rels_text)?;
        let mut sheets = Vec::with_capacity(wb.sheets.len());
        for (i, entry) in wb.sheets.iter().enumerate() {
            let rel = wb_rels
                .rels
                .iter()
                .find(|r| r.id == entry.rid && !r.external);
            let part = rel.map(|r| package::resolve_target(&wb_part, &r.target));
            let kind = match (rel.map(|r| r.kind()), &part) {
                (Some(_), Some(p)) if pkg.find(p).is_none() => SheetKind::Unknown,
                (Some("worksheet"), _) => SheetKind::Worksheet,
                (Some("chartsheet"), _) => SheetKind::Chartsheet,
                (Some("dialogsheet"), _) => SheetKind::Dialogsheet,
                (Some("xlMacrosheet" | "xlIntlMacrosheet"), _) => SheetKind::Macrosheet,
                _ => SheetKind::Unknown,
            };
            sheets.push(BookSheet {
                name: entry.name.clone(),
                kind,
                origin: Origin::Existing {
                    original_index: i,
                    part,
                },
                doc: None,
            });
        }
        Ok(Book {
            pkg,
            ct_part,
            ct,
            wb_part,
            wb,
            wb_rels_part,
            wb_rels,
            sheets,
            deleted: Vec::new(),
            sst: None,
            new_tables: Vec::new(),
            sheet_rels: Vec::new(),
            deleted_tables: Vec::new(),
            styles: None,
            new_styles_rid: None,
            changed: false,
            recalc: false,
        })
    }

    /// The sheet with this name (exact first, then Excel's case-insensitive match).
    pub fn find_sheet(&self, name: &str) -> Option<usize> {
        self.sheets.iter().position(|s| s.name == name).or_else(|| {
            self.sheets
                .iter()
                .position(|s| same_sheet_name(&s.name, name))
        })
    }

    /// Makes sure the shared strings and the sheet's part are loaded.
    pub fn load(&mut self, index: usize) -> Result<(), Error> {
        if self.sst.is_none() {
            let part = self
                .wb_rels
                .rels
                .iter()
                .find(|r| r.kind() == "sharedStrings" && !r.external)
                .map(|r| package::resolve_target(&self.wb_part, &r.target));
            let strings = match part {
                Some(part) => match self.pkg.read_text(&part)? {
                    Some(text) => sheet_strings(&self.pkg.display, &part, &text)?,
                    None => Vec::new(),
                },
                None => Vec::new(),
            };
            self.sst = Some(strings);
        }
        let display = self.pkg.display.clone();
        let Some(sheet) = self.sheets.get(index) else {
            return Ok(());
        };
        if sheet.doc.is_some() {
            return Ok(());
        }
        let part = match &sheet.origin {
            Origin::Existing {
                part: Some(part), ..
            } => part.clone(),
            _ => return Ok(()),
        };
        let text = self
            .pkg
            .read_text(&part)?
            .ok_or_else(|| Error::unreadable(&display, format!("{part} is missing")))?;
        let doc = SheetDoc::parse(text)
            .map_err(|e| Error::unreadable(&display, format!("{part}: {e}")))?;
        if let Some(sheet) = self.sheets.get_mut(index) {
            sheet.doc = Some(doc);
        }
        Ok(())
    }

    /// The loaded sheet and the shared strings, borrowed together.
    pub fn doc_mut(&mut self, index: usize) -> Result<(&mut SheetDoc, &[String]), Error> {
        self.load(index)?;
        let sst = self.sst.as_deref().unwrap_or(&[]);
        match self.sheets.get_mut(index).and_then(|s| s.doc.as_mut()) {
            Some(doc) => Ok((doc, sst)),
            None => Err(Error::unreadable(
                &self.pkg.display,
                "a worksheet part is missing",
            )),
        }
    }

    /// The workbook's styles, loaded on first use. `Ok(Err)` is why the styling ops cannot
    /// use them (no styles part, an unreadable one).
    pub fn styles_mut(&mut self) -> Result<Result<&mut Styles, String>, Error> {
        if self.styles.is_none() {
            let part = self
                .wb_rels
                .rels
                .iter()
                .find(|r| r.kind() == "styles" && !r.external)
                .map(|r| package::resolve_target(&self.wb_part, &r.target));
            let Some(part) = part else {
                // A workbook may have no styles part (it is optional; generators omit it):
                // the first styling op starts from Excel's default stylesheet, written as a
                // new part with its relationship and content type.
                let part = self.free_part_name("styles");
                let styles = Styles::parse(default_styles_xml(&self.wb.main_ns))
                    .map_err(|e| Error::Backend(format!("building a styles part: {e}")))?;
                self.new_styles_rid = Some(self.free_rid());
                self.styles = Some((part, styles));
                return Ok(self
                    .styles
                    .as_mut()
                    .map(|(_, s)| s)
                    .ok_or_else(|| "the styles part is missing".to_string()));
            };
            let Some(text) = self.pkg.read_text(&part)? else {
                return Ok(Err(format!("the styles part {part} is missing")));
            };
            match Styles::parse(text) {
                Ok(styles) => self.styles = Some((part, styles)),
                Err(e) => return Ok(Err(e)),
            }
        }
        Ok(self
            .styles
            .as_mut()
            .map(|(_, s)| s)
            .ok_or_else(|| "the styles part is missing".to_string()))
    }

    /// The name, id and range of every table of the workbook (original and added), and the
    /// sheet part each belongs to when known.
    fn tables(&self) -> Result<Vec<(String, u32, Option<Area>)>, Error> {
        let mut out = Vec::new();
        for name in self.pkg.names() {
            let lower = name.to_ascii_lowercase();
            if !(lower.contains("tables/") && lower.ends_with(".xml") && !lower.contains("_rels/"))
            {
                continue;
            }
            if let Some(text) = self.pkg.read_text(name)? {
                out.push(table_facts(name, &text));
            }
        }
        for (part, text, _) in &self.new_tables {
            out.push(table_facts(part, text));
        }
        Ok(out)
    }

    /// Makes `area` of sheet `index` an Excel table: a new `tables/tableN.xml` part, its
    /// relationship from the worksheet, its content type and a `<tablePart>` in the sheet.
    /// `Ok(Err)` is why it cannot (a name taken, an overlap, a sheet added by this patch).
    pub fn add_table(
        &mut self,
        index: usize,
        area: Area,
        name: Option<&str>,
        style: &str,
        headers: &[String],
    ) -> Result<Result<String, String>, Error> {
        let sheet_part = match self.sheets.get(index).map(|s| &s.origin) {
            Some(Origin::Existing {
                part: Some(part), ..
            }) => part.clone(),
            _ => {
                return Ok(Err(
                    "apply_table_style needs a sheet saved in the workbook; add the sheet in \
                     one patch and the table in the next"
                        .to_string(),
                ));
            }
        };
        let tables = self.tables()?;
        // Tables on this sheet: those its relationships point at (original) or added here.
        let rels_part = package::rels_part_of(&sheet_part);
        let mut on_sheet: Vec<String> = Vec::new();
        if let Some(text) = self.pkg.read_text(&rels_part)? {
            let rels = package::parse_rels(&self.pkg.display, &rels_part, text)?;
            for r in rels
                .rels
                .iter()
                .filter(|r| r.kind() == "table" && !r.external)
            {
                on_sheet.push(package::resolve_target(&sheet_part, &r.target).to_lowercase());
            }
        }
        for (part, _, sheet) in &self.new_tables {
            if *sheet == sheet_part {
                on_sheet.push(part.to_lowercase());
            }
        }
        for (part, _, range) in &tables {
            if on_sheet.contains(&part.to_lowercase())
                && let Some(r) = range
                && r.first.row <= area.last.row
                && area.first.row <= r.last.row
                && r.first.col <= area.last.col
                && area.first.col <= r.last.col
            {
                return Ok(Err(format!(
                    "apply_table_style range {} intersects the existing table at {}",
                    area.to_a1(),
                    r.to_a1()
                )));
            }
        }
        let names: Vec<String> = tables
            .iter()
            .map(|(p, _, _)| p.clone())
            .filter_map(|p| {
                self.new_tables
                    .iter()
                    .find(|(np, _, _)| *np == p)
                    .map(|(_, t, _)| t.clone())
                    .or_else(|| self.pkg.read_text(&p).ok().flatten())
            })
            .filter_map(|t| table_attr(&t, "displayName").or_else(|| table_attr(&t, "name")))
            .map(|n| n.to_lowercase())
            .chain(self.wb.defined_names.iter().map(|d| d.name.to_lowercase()))
            .collect();
        let name = match name {
            Some(n) => {
                let n = n.trim().to_string();
                if names.contains(&n.to_lowercase()) {
                    return Ok(Err(format!("Table name already exists: {n}")));
                }
                n
            }
            None => (1..10_000)
                .map(|i| format!("Table{i}"))
                .find(|n| !names.contains(&n.to_lowercase()))
                .unwrap_or_default(),
        };
        let id = tables.iter().map(|(_, id, _)| *id).max().unwrap_or(0) + 1;
        let base = self.wb_part.rsplit_once('/').map_or("", |(d, _)| d);
        let dir = if base.is_empty() {
            "tables".to_string()
        } else {
            format!("{base}/tables")
        };
        let taken: HashSet<String> = self
            .pkg
            .names()
            .iter()
            .map(|n| n.to_lowercase())
            .chain(self.new_tables.iter().map(|(p, _, _)| p.to_lowercase()))
            .collect();
        let part = (1..)
            .map(|n| format!("{dir}/table{n}.xml"))
            .find(|p| !taken.contains(&p.to_lowercase()))
            .unwrap_or_default();
        let reference = area.to_a1();
        let columns: String = headers
            .iter()
            .enumerate()
            .map(|(i, h)| {
                format!(
                    "<tableColumn id=\"{}\" name=\"{}\"/>",
                    i + 1,
                    xml::escape_attr(h)
                )
            })
            .collect();
        let table = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n<table xmlns=\"{}\" \
             id=\"{id}\" name=\"{n}\" displayName=\"{n}\" ref=\"{reference}\" totalsRowShown=\"0\">\
             <autoFilter ref=\"{reference}\"/><tableColumns count=\"{}\">{columns}</tableColumns>\
             <tableStyleInfo name=\"{}\" showFirstColumn=\"0\" showLastColumn=\"0\" \
             showRowStripes=\"1\" showColumnStripes=\"0\"/></table>",
            xml::escape_attr(&self.wb.main_ns),
            headers.len(),
            xml::escape_attr(style),
            n = xml::escape_attr(&name),
        );
        // The worksheet's relationship to the table.
        let entry = match self.sheet_rels.iter().position(|(p, _, _)| *p == rels_part) {
            Some(i) => i,
            None => {
                let original = match self.pkg.read_text(&rels_part)? {
                    Some(text) => Some(package::parse_rels(&self.pkg.display, &rels_part, text)?),
                    None => None,
                };
                self.sheet_rels
                    .push((rels_part.clone(), original, Vec::new()));
                self.sheet_rels.len() - 1
            }
        };
        let rel_type_base = self
            .wb_rels
            .rels
            .iter()
            .find(|r| r.kind() == "worksheet")
            .and_then(|r| r.rel_type.rsplit_once('/').map(|(b, _)| b.to_string()))
            .unwrap_or_else(|| self.wb.rel_ns.clone());
        let Some((_, original, added)) = self.sheet_rels.get_mut(entry) else {
            return Ok(Err("internal: relationship entry missing".to_string()));
        };
        let used: HashSet<String> = original
            .iter()
            .flat_map(|r| r.rels.iter().map(|r| r.id.clone()))
            .chain(added.iter().filter_map(|x| {
                x.split("Id=\"")
                    .nth(1)
                    .and_then(|s| s.split('"').next())
                    .map(str::to_string)
            }))
            .collect();
        let rid = (1..)
            .map(|n| format!("rId{n}"))
            .find(|id| !used.contains(id))
            .unwrap_or_default();
        let rel_prefix = original
            .as_ref()
            .map(|r| r.prefix.clone())
            .unwrap_or_default();
        added.push(format!(
            "<{rel_prefix}Relationship Id=\"{rid}\" Type=\"{rel_type_base}/table\" Target=\"/{}\"/>",
            xml::escape_attr(&part)
        ));
        self.new_tables.push((part, table, sheet_part));
        let rel_ns = self.wb.rel_ns.clone();
        let (doc, _) = self.doc_mut(index)?;
        let p = doc.prefix().to_string();
        doc.add_table_part(format!(
            "<{p}tablePart xmlns:r=\"{}\" r:id=\"{rid}\"/>",
            xml::escape_attr(&rel_ns)
        ));
        self.changed = true;
        Ok(Ok(name))
    }

    /// Removes an original table of sheet `index` by name: its part, its relationship, its
    /// content-type override and its `<tablePart>`; the cells stay as they are.
    pub fn delete_table(&mut self, index: usize, name: &str) -> Result<Result<(), String>, Error> {
        let sheet_part = match self.sheets.get(index).map(|s| &s.origin) {
            Some(Origin::Existing {
                part: Some(part), ..
            }) => part.clone(),
            _ => return Ok(Err(format!("the sheet has no table named {name}"))),
        };
        let rels_part = package::rels_part_of(&sheet_part);
        let Some(text) = self.pkg.read_text(&rels_part)? else {
            return Ok(Err(format!("the sheet has no table named {name}")));
        };
        let rels = package::parse_rels(&self.pkg.display, &rels_part, text)?;
        let mut found = None;
        for r in rels
            .rels
            .iter()
            .filter(|r| r.kind() == "table" && !r.external)
        {
            let part = package::resolve_target(&sheet_part, &r.target);
            let Some(table) = self.pkg.read_text(&part)? else {
                continue;
            };
            let table_name =
                table_attr(&table, "displayName").or_else(|| table_attr(&table, "name"));
            if table_name.is_some_and(|n| n.eq_ignore_ascii_case(name.trim())) {
                found = Some((part, r.id.clone(), r.span));
            }
        }
        let Some((part, rid, span)) = found else {
            return Ok(Err(format!(
                "the sheet has no table named {name} saved in the workbook (a table added by \
                 this patch cannot be deleted in it)"
            )));
        };
        if self.deleted_tables.iter().any(|(p, _, _)| *p == part) {
            return Ok(Err(format!("the table {name} is already deleted")));
        }
        if !self.sheet_rels.iter().any(|(p, _, _)| *p == rels_part) {
            self.sheet_rels
                .push((rels_part.clone(), Some(rels), Vec::new()));
        }
        self.deleted_tables.push((part, rels_part, span));
        let (doc, _) = self.doc_mut(index)?;
        doc.remove_table_part(&rid);
        self.changed = true;
        Ok(Ok(()))
    }

    /// Whether a sheet's part has its own relationships (drawings, comments, tables, …).
    pub fn has_related_parts(&self, index: usize) -> bool {
        match self.sheets.get(index).map(|s| &s.origin) {
            Some(Origin::Existing {
                part: Some(part), ..
            }) => self.pkg.find(&package::rels_part_of(part)).is_some(),
            _ => false,
        }
    }

    /// Appends a new empty worksheet.
    pub fn add_sheet(&mut self, name: &str) -> Result<(), Error> {
        let doc = SheetDoc::parse(SheetDoc::empty_xml(&self.wb.main_ns))
            .map_err(|e| Error::Backend(format!("building a new sheet: {e}")))?;
        let slot = self.new_sheet_slot();
        self.insert_added(name, doc, slot, None, None);
        Ok(())
    }

    /// Puts a worksheet this patch adds at tab `position` (0-based; `None`: last).
    fn insert_added(
        &mut self,
        name: &str,
        doc: SheetDoc,
        (part, rid, sheet_id): (String, String, u32),
        copy_of: Option<usize>,
        position: Option<usize>,
    ) {
        let sheet = BookSheet {
            name: name.to_string(),
            kind: SheetKind::Worksheet,
            origin: Origin::Added {
                part,
                rid,
                sheet_id,
                copy_of,
            },
            doc: Some(doc),
        };
        let at = position.unwrap_or(self.sheets.len()).min(self.sheets.len());
        self.sheets.insert(at, sheet);
        self.changed = true;
        self.recalc = true;
    }

    /// A new worksheet's part name (beside the existing worksheets), relationship id and sheet
    /// id, none of them taken.
    fn new_sheet_slot(&self) -> (String, String, u32) {
        let dir = self
            .sheets
            .iter()
            .find_map(|s| match &s.origin {
                Origin::Existing { part: Some(p), .. } if s.kind == SheetKind::Worksheet => {
                    p.rsplit_once('/').map(|(d, _)| d.to_string())
                }
                _ => None,
            })
            .unwrap_or_else(|| {
                let base = self.wb_part.rsplit_once('/').map_or("", |(d, _)| d);
                if base.is_empty() {
                    "worksheets".to_string()
                } else {
                    format!("{base}/worksheets")
                }
            });
        let taken: HashSet<String> = self
            .pkg
            .names()
            .iter()
            .map(|n| n.to_lowercase())
            .chain(self.sheets.iter().filter_map(|s| match &s.origin {
                Origin::Added { part, .. } => Some(part.to_lowercase()),
                _ => None,
            }))
            .collect();
        let part = (1..)
            .map(|n| format!("{dir}/sheet{n}.xml"))
            .find(|p| !taken.contains(&p.to_lowercase()))
            .unwrap_or_default();
        let rid = self.free_rid();
        let sheet_id = self
            .wb
            .sheets
            .iter()
            .map(|s| s.sheet_id)
            .chain(self.sheets.iter().filter_map(|s| match &s.origin {
                Origin::Added { sheet_id, .. } => Some(*sheet_id),
                _ => None,
            }))
            .max()
            .unwrap_or(0)
            .saturating_add(1);
        (part, rid, sheet_id)
    }

    /// A workbook relationship id no relationship uses, nor one this patch adds.
    fn free_rid(&self) -> String {
        let used_ids: HashSet<String> = self
            .wb_rels
            .rels
            .iter()
            .map(|r| r.id.clone())
            .chain(self.sheets.iter().filter_map(|s| match &s.origin {
                Origin::Added { rid, .. } => Some(rid.clone()),
                _ => None,
            }))
            .chain(self.new_styles_rid.clone())
            .collect();
        (1..)
            .map(|n| format!("rId{n}"))
            .find(|id| !used_ids.contains(id))
            .unwrap_or_default()
    }

    /// `<workbook folder>/<stem>.xml`, or `<stem>N.xml` when that name is taken.
    fn free_part_name(&self, stem: &str) -> String {
        let dir = self.wb_part.rsplit_once('/').map_or("", |(d, _)| d);
        let taken: HashSet<String> = self.pkg.names().iter().map(|n| n.to_lowercase()).collect();
        std::iter::once(String::new())
            .chain((1..).map(|n: u32| n.to_string()))
            .map(|n| {
                if dir.is_empty() {
                    format!("{stem}{n}.xml")
                } else {
                    format!("{dir}/{stem}{n}.xml")
                }
            })
            .find(|p| !taken.contains(&p.to_lowercase()))
            .unwrap_or_default()
    }

    pub fn delete_sheet(&mut self, index: usize) {
        if index >= self.sheets.len() {
            return;
        }
        let sheet = self.sheets.remove(index);
        if let Origin::Existing {
            original_index,
            part,
        } = sheet.origin
        {
            self.deleted.push((original_index, part));
        }
        self.changed = true;
        self.recalc = true;
    }

    /// The package changes for a save. Only parts that changed are listed.
    pub fn changes(&self) -> Result<Changes<'_>, Error> {
        let mut changes = Changes::default();
        if !self.changed {
            return Ok(changes);
        }
        // styles.xml, only when a styling op appended a format.
        let mut new_styles: Option<(&str, &str)> = None; // (part, rid)
        if let Some((part, styles)) = &self.styles
            && styles.is_changed()
        {
            match (&self.new_styles_rid, self.pkg.find(part)) {
                (Some(rid), _) => {
                    changes
                        .added
                        .push((part.clone(), NewPart::Bytes(styles.to_xml().into_bytes())));
                    new_styles = Some((part, rid));
                }
                (None, Some(i)) => {
                    changes
                        .replaced
                        .insert(i, NewPart::Bytes(styles.to_xml().into_bytes()));
                }
                (None, None) => {}
            }
        }
        // Worksheets: rewritten when touched, new ones added.
        let mut added_parts: Vec<(String, String)> = Vec::new(); // (part, rid)
        for sheet in &self.sheets {
            match &sheet.origin {
                Origin::Existing {
                    part: Some(part), ..
                } => {
                    if let Some(doc) = sheet.doc.as_ref().filter(|d| d.is_touched())
                        && let Some(i) = self.pkg.find(part)
                    {
                        let write = move |out: &mut dyn std::io::Write| doc.write_xml(out);
                        changes.replaced.insert(i, NewPart::Stream(Box::new(write)));
                    }
                }
                Origin::Added { part, rid, .. } => {
                    let xml = sheet.doc.as_ref().map(SheetDoc::to_xml).unwrap_or_default();
                    changes
                        .added
                        .push((part.clone(), NewPart::Bytes(xml.into_bytes())));
                    added_parts.push((part.clone(), rid.clone()));
                }
                Origin::Existing { part: None, .. } => {}
            }
        }
        let mut removed_parts: Vec<String> = self
            .deleted
            .iter()
            .filter_map(|(_, p)| p.clone())
            .chain(self.deleted_tables.iter().map(|(p, _, _)| p.clone()))
            .collect();
        for part in &removed_parts {
            if let Some(i) = self.pkg.find(part) {
                changes.removed.insert(i);
            }
        }
        // Tables: their parts, the worksheets' relationships to them.
        for (part, text, _) in &self.new_tables {
            changes
                .added
                .push((part.clone(), NewPart::Bytes(text.clone().into_bytes())));
        }
        for (rels_part, original, added) in &self.sheet_rels {
            match original {
                Some(rels) => {
                    if let Some(i) = self.pkg.find(rels_part) {
                        let mut splices: Vec<(usize, usize, String)> = self
                            .deleted_tables
                            .iter()
                            .filter(|(_, r, _)| r == rels_part)
                            .map(|(_, _, span)| (span.0, span.1, String::new()))
                            .collect();
                        if splices.len() == rels.rels.len() && added.is_empty() {
                            // Nothing left to relate: the part goes, as Excel writes no empty
                            // relationship parts.
                            changes.removed.insert(i);
                            continue;
                        }
                        if !added.is_empty() {
                            splices.push(rels.insertion(added.concat()));
                        }
                        let text = xml::splice(&rels.text, splices);
                        changes
                            .replaced
                            .insert(i, NewPart::Bytes(text.into_bytes()));
                    }
                }
                None => {
                    let text = format!(
                        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n\
                         <Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">{}</Relationships>",
                        added.concat()
                    );
                    changes
                        .added
                        .push((rels_part.clone(), NewPart::Bytes(text.into_bytes())));
                }
            }
        }
        // Excel must recalculate: drop the calculation chain, which lists formula cells and
        // would be stale, and ask for a full calculation on load.
        let calc_chain: Vec<&package::Rel> = self
            .wb_rels
            .rels
            .iter()
            .filter(|r| self.recalc && r.kind() == "calcChain")
            .collect();
        for rel in &calc_chain {
            let part = package::resolve_target(&self.wb_part, &rel.target);
            if let Some(i) = self.pkg.find(&part) {
                changes.removed.insert(i);
            }
            removed_parts.push(part);
        }

        // workbook.xml.rels
        let deleted_rids: HashSet<&str> = self
            .deleted
            .iter()
            .filter_map(|(i, _)| self.wb.sheets.get(*i).map(|s| s.rid.as_str()))
            .collect();
        let rel_type_base = self
            .wb_rels
            .rels
            .iter()
            .find(|r| r.kind() == "worksheet")
            .and_then(|r| r.rel_type.rsplit_once('/').map(|(b, _)| b.to_string()))
            .unwrap_or_else(|| self.wb.rel_ns.clone());
        let mut splices: Vec<(usize, usize, String)> = self
            .wb_rels
            .rels
            .iter()
            .filter(|r| {
                (self.recalc && r.kind() == "calcChain") || deleted_rids.contains(r.id.as_str())
            })
            .map(|r| (r.span.0, r.span.1, String::new()))
            .collect();
        let p = &self.wb_rels.prefix;
        let new_rels: String = added_parts
            .iter()
            .map(|(part, rid)| (part.as_str(), rid.as_str(), "worksheet"))
            .chain(new_styles.map(|(part, rid)| (part, rid, "styles")))
            .map(|(part, rid, kind)| {
                format!(
                    "<{p}Relationship Id=\"{}\" Type=\"{rel_type_base}/{kind}\" Target=\"/{}\"/>",
                    xml::escape_attr(rid),
                    xml::escape_attr(part)
                )
            })
            .collect();
        if !new_rels.is_empty() {
            splices.push(self.wb_rels.insertion(new_rels));
        }
        if !splices.is_empty()
            && let Some(i) = self.pkg.find(&self.wb_rels_part)
        {
            changes.replaced.insert(
                i,
                NewPart::Bytes(xml::splice(&self.wb_rels.text, splices).into_bytes()),
            );
        }

        // [Content_Types].xml
        let removed_keys: HashSet<String> =
            removed_parts.iter().map(|p| p.to_lowercase()).collect();
        let mut splices: Vec<(usize, usize, String)> = self
            .ct
            .overrides
            .iter()
            .filter(|(key, _)| removed_keys.contains(key))
            .map(|(_, span)| (span.0, span.1, String::new()))
            .collect();
        let p = &self.ct.prefix;
        let new_types: String = added_parts
            .iter()
            .map(|(part, _)| (part.as_str(), WORKSHEET_CONTENT_TYPE))
            .chain(
                self.new_tables
                    .iter()
                    .map(|(part, _, _)| (part.as_str(), TABLE_CONTENT_TYPE)),
            )
            .chain(new_styles.map(|(part, _)| (part, STYLES_CONTENT_TYPE)))
            .map(|(part, content_type)| {
                format!(
                    "<{p}Override PartName=\"/{}\" ContentType=\"{content_type}\"/>",
                    xml::escape_attr(part)
                )
            })
            .collect();
        if !new_types.is_empty() {
            splices.push((self.ct.end_tag, self.ct.end_tag, new_types));
        }
        if !splices.is_empty()
            && let Some(i) = self.pkg.find(&self.ct_part)
        {
            changes.replaced.insert(
                i,
                NewPart::Bytes(xml::splice(&self.ct.text, splices).into_bytes()),
            );
        }

        // workbook.xml, only if something in it changes (it may already ask for a full
        // calculation on load).
        let workbook = self.workbook_xml();
        if workbook != self.wb.text
            && let Some(i) = self.pkg.find(&self.wb_part)
        {
            changes
                .replaced
                .insert(i, NewPart::Bytes(workbook.into_bytes()));
        }
        Ok(changes)
    }

    fn workbook_xml(&self) -> String {
        let wb = &self.wb;
        let p = &wb.elem_prefix;
        let mut splices: Vec<(usize, usize, String)> = Vec::new();
        let structure_changed = !self.deleted.is_empty()
            || self
                .sheets
                .iter()
                .any(|s| matches!(s.origin, Origin::Added { .. }));
        if structure_changed {
            let mut inner = String::new();
            for sheet in &self.sheets {
                match &sheet.origin {
                    Origin::Existing { original_index, .. } => {
                        if let Some(e) = wb.sheets.get(*original_index) {
                            inner.push_str(wb.text.get(e.span.0..e.span.1).unwrap_or(""));
                        }
                    }
                    Origin::Added { rid, sheet_id, .. } => {
                        let (rel_attr, ns_decl) = match &wb.rel_prefix {
                            Some(prefix) => (format!("{prefix}:id"), String::new()),
                            None => ("r:id".to_string(), format!(" xmlns:r=\"{}\"", wb.rel_ns)),
                        };
                        inner.push_str(&format!(
                            "<{p}sheet name=\"{}\" sheetId=\"{sheet_id}\"{ns_decl} {rel_attr}=\"{}\"/>",
                            xml::escape_attr(&sheet.name),
                            xml::escape_attr(rid)
                        ));
                    }
                }
            }
            splices.push((wb.sheets_inner.0, wb.sheets_inner.1, inner));
        }
        if structure_changed {
            // Sheet-scoped names and the active tab refer to sheets by position.
            let new_index = |original: usize| -> Option<usize> {
                self.sheets.iter().position(|s| matches!(s.origin, Origin::Existing { original_index, .. } if original_index == original))
            };
            for dn in &wb.defined_names {
                let Some(local) = dn.local_sheet else {
                    continue;
                };
                match new_index(local as usize) {
                    None => splices.push((dn.span.0, dn.span.1, String::new())),
                    Some(n) if n != local as usize => {
                        let tag = wb.text.get(dn.start_tag.0..dn.start_tag.1).unwrap_or("");
                        if let Some(new) = xml::rewrite_start_tag(
                            tag,
                            &[("localSheetId", &n.to_string())],
                            &[],
                            dn.empty,
                        ) {
                            splices.push((dn.start_tag.0, dn.start_tag.1, new));
                        }
                    }
                    Some(_) => {}
                }
            }
            // A copied sheet gets its own copy of each name scoped to its source, right after
            // the source's, referring to the copy.
            for (position, sheet) in self.sheets.iter().enumerate() {
                let Origin::Added {
                    copy_of: Some(source),
                    ..
                } = sheet.origin
                else {
                    continue;
                };
                let source_name = wb.sheets.get(source).map_or("", |e| e.name.as_str());
                for dn in &wb.defined_names {
                    if dn.local_sheet != Some(source as u32) || dn.empty {
                        continue;
                    }
                    let tag = wb.text.get(dn.start_tag.0..dn.start_tag.1).unwrap_or("");
                    let Some(start) = xml::rewrite_start_tag(
                        tag,
                        &[("localSheetId", &position.to_string())],
                        &[],
                        false,
                    ) else {
                        continue;
                    };
                    let formula = copy::rename_sheet_refs(&dn.formula, source_name, &sheet.name);
                    splices.push((
                        dn.span.1,
                        dn.span.1,
                        format!("{start}{}</{p}definedName>", xml::escape_text(&formula)),
                    ));
                }
            }
            let last = self.sheets.len().saturating_sub(1);
            for (span, empty) in &wb.views {
                let tag = wb.text.get(span.0..span.1).unwrap_or("");
                let mut set: Vec<(&str, String)> = Vec::new();
                for attr in ["activeTab", "firstSheet"] {
                    if let Some(v) = tag_attr(tag, attr).and_then(|v| v.parse::<usize>().ok()) {
                        let mapped = new_index(v).unwrap_or(v.min(last)).min(last);
                        if mapped != v {
                            set.push((attr, mapped.to_string()));
                        }
                    }
                }
                if !set.is_empty() {
                    let pairs: Vec<(&str, &str)> =
                        set.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    if let Some(new) = xml::rewrite_start_tag(tag, &pairs, &[], *empty) {
                        splices.push((span.0, span.1, new));
                    }
                }
            }
        }
        match wb.calc_pr {
            _ if !self.recalc => {}
            Some((span, empty, _)) => {
                let tag = wb.text.get(span.0..span.1).unwrap_or("");
                let already =
                    tag_attr(tag, "fullCalcOnLoad").is_some_and(|v| v == "1" || v == "true");
                if already {
                    // Nothing to change; keep the tag byte for byte.
                } else if let Some(new) =
                    xml::rewrite_start_tag(tag, &[("fullCalcOnLoad", "1")], &[], empty)
                {
                    splices.push((span.0, span.1, new));
                }
            }
            None => splices.push((
                wb.calc_pr_insert,
                wb.calc_pr_insert,
                format!("<{p}calcPr fullCalcOnLoad=\"1\"/>"),
            )),
        }
        xml::splice(&wb.text, splices)
    }
}

/// The root `<table>` attribute of a table part.
fn table_attr(text: &str, name: &str) -> Option<String> {
    let mut r = xml::reader(text);
    loop {
        match r.read_event().ok()? {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                return xml::attr(&e, name.as_bytes());
            }
            quick_xml::events::Event::Eof => return None,
            _ => {}
        }
    }
}

/// (part, id, range) of a table part.
fn table_facts(part: &str, text: &str) -> (String, u32, Option<Area>) {
    let id = table_attr(text, "id")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let range = table_attr(text, "ref").and_then(|v| Area::parse(&v));
    (part.to_string(), id, range)
}

fn tag_attr(tag: &str, name: &str) -> Option<String> {
    let mut r = xml::reader(tag);
    match r.read_event().ok()? {
        quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
            xml::attr(&e, name.as_bytes())
        }
        _ => None,
    }
}

fn sheet_strings(display: &str, part: &str, text: &str) -> Result<Vec<String>, Error> {
    crate::sheet::parse_shared_strings(text)
        .map_err(|e| Error::unreadable(display, format!("{part}: {e}")))
}

/// The stylesheet Excel writes for a new workbook (one font, the two required fills, one
/// border, the Normal style), in the workbook's main namespace (transitional or strict).
fn default_styles_xml(main_ns: &str) -> String {
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\r\n\
         <styleSheet xmlns=\"{}\"><fonts count=\"1\"><font><sz val=\"11\"/><name val=\"Calibri\"/>\
         <family val=\"2\"/></font></fonts><fills count=\"2\"><fill><patternFill patternType=\"none\"/>\
         </fill><fill><patternFill patternType=\"gray125\"/></fill></fills><borders count=\"1\">\
         <border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count=\"1\">\
         <xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\"/></cellStyleXfs>\
         <cellXfs count=\"1\"><xf numFmtId=\"0\" fontId=\"0\" fillId=\"0\" borderId=\"0\" xfId=\"0\"/>\
         </cellXfs><cellStyles count=\"1\"><cellStyle name=\"Normal\" xfId=\"0\" builtinId=\"0\"/>\
         </cellStyles></styleSheet>",
        xml::escape_attr(main_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sheet_name_rules() {
        for ok in ["売上集計", "Sheet 2", "2024.12", "a'b", &"x".repeat(31)] {
            assert!(check_sheet_name(ok).is_ok(), "{ok}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("a/b", "contains"),
            ("[x]", "contains"),
            ("'x", "apostrophe"),
            ("History", "reserved"),
            (&"x".repeat(32), "longer"),
        ] {
            let err = check_sheet_name(bad).unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
        assert!(same_sheet_name("Sheet1", "SHEET1"));
        assert!(same_sheet_name("Ｓｈｅｅｔ", "ｓｈｅｅｔ"));
        assert!(!same_sheet_name("Sheet1", "Sheet2"));
    }
}
