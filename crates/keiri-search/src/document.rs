//! What is indexed: one [`Document`] per block spec (and, once the planner ships
//! `TemplateSpec`, per template), flattened into the text fields the BM25 index and the
//! embedder read.

use keiri_plan::{BlockSpec, Catalog, TemplateSpec, Templates};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The kind of thing a document describes. Each kind has its own categories, so a category
/// filter and the per-category Top-K cap always apply within one kind.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum DocKind {
    /// A block spec from `block_specs/<category>/<id>.yaml`.
    Block,
    /// A reusable subflow from `templates/<category>/<id>.yaml` (built by the planner crate
    /// with [`Document::new`]; this crate does not load templates itself).
    Template,
}

impl DocKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Block => "block",
            DocKind::Template => "template",
        }
    }
}

/// One searchable item, already flattened to text.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub kind: DocKind,
    pub id: String,
    pub category: String,
    /// The title shown in the candidate list (Japanese when present).
    pub title: String,
    /// The id split into words (`matching.duplicate_invoices` → `matching duplicate invoices`).
    pub id_words: String,
    /// Japanese and English titles.
    pub titles: String,
    /// Tags, space separated.
    pub tags: String,
    /// Japanese and English descriptions.
    pub description: String,
    /// Input and output names (`vendor_field`, `rows`).
    pub port_names: Vec<String>,
    /// Input and output descriptions and enum values.
    pub port_text: String,
    /// Texts embedded for dense retrieval; the dense score is the best cosine over them, so a
    /// Japanese query meets the Japanese passage and an English query the English one.
    pub passages: Vec<String>,
}

impl Document {
    /// A document of any kind from its parts (templates are built this way by their owner).
    pub fn new(kind: DocKind, id: &str, category: &str) -> Document {
        Document {
            kind,
            id: id.to_string(),
            category: category.to_string(),
            title: id.to_string(),
            id_words: split_identifier(id).join(" "),
            titles: String::new(),
            tags: String::new(),
            description: String::new(),
            port_names: Vec::new(),
            port_text: String::new(),
            passages: Vec::new(),
        }
    }

    /// The document of a block spec.
    pub fn from_block(spec: &BlockSpec) -> Document {
        let mut doc = Document::new(DocKind::Block, &spec.id, &spec.category);
        let title_ja = spec.title_ja.clone().unwrap_or_default();
        let title_en = spec.title_en.clone().unwrap_or_default();
        doc.title = first_non_empty(&[&title_ja, &title_en, &spec.id]).to_string();
        doc.titles = join_non_empty(&[&title_ja, &title_en], "\n");
        doc.tags = spec.tags.join(" ");
        let description_en = spec.description_en.clone().unwrap_or_default();
        doc.description = join_non_empty(&[&spec.description, &description_en], "\n");

        let mut port_text = Vec::new();
        for (name, port) in spec.inputs.iter().chain(spec.outputs.iter()) {
            doc.port_names.push(name.clone());
            port_text.push(port.description.clone());
            if let Some(en) = &port.description_en {
                port_text.push(en.clone());
            }
            for value in port.enum_values.iter().flatten() {
                if let Some(s) = value.as_str() {
                    port_text.push(s.to_string());
                }
            }
        }
        doc.port_text = join_non_empty(
            &port_text.iter().map(String::as_str).collect::<Vec<_>>(),
            "\n",
        );

        // Japanese passage: title, description and the tags (which mix both languages).
        let ja = join_non_empty(&[&title_ja, spec.description.trim(), &doc.tags], "\n");
        // English passage: title, description and the id words, which are English.
        let en = join_non_empty(&[&title_en, description_en.trim(), &doc.id_words], "\n");
        // Short passages too: a clause of an instruction ("…をExcelに書き出す") is closer to
        // a title than to a paragraph, and e5 compares texts of similar length best.
        let ja_title = join_non_empty(&[&title_ja, &doc.tags], " ");
        let en_title = join_non_empty(&[&title_en, &doc.id_words], " ");
        for passage in [ja, en, ja_title, en_title] {
            if !passage.trim().is_empty() && !doc.passages.contains(&passage) {
                doc.passages.push(passage);
            }
        }
        if doc.passages.is_empty() {
            doc.passages.push(doc.id_words.clone());
        }
        doc
    }
}

impl Document {
    /// The document of a template: its id, titles, descriptions and tags in the same fields
    /// (and so with the same tokenizer and boosts) as a block's, one passage for the dense
    /// side. The planner's template search and the bundled pack both build it here.
    pub fn from_template(t: &TemplateSpec) -> Document {
        let mut doc = Document::new(DocKind::Template, &t.id, &t.category);
        let title_en = t.title_en.clone().unwrap_or_default();
        let description_en = t.description_en.clone().unwrap_or_default();
        if !t.title.trim().is_empty() {
            doc.title = t.title.clone();
        }
        doc.titles = join_non_empty(&[&t.title, &title_en], "\n");
        doc.tags = t.tags.join(" ");
        doc.description = join_non_empty(&[&t.description, &description_en], "\n");
        doc.passages = vec![format!("{}\n{}\n{}", t.title, t.description, doc.tags)];
        doc
    }
}

/// Every passage of the blocks of `catalog` and of `templates`, sorted and without
/// duplicates: what the bundled embedding pack must hold.
pub fn passages_of(catalog: &Catalog, templates: &Templates) -> Vec<String> {
    let mut passages: Vec<String> = catalog
        .blocks()
        .map(Document::from_block)
        .chain(templates.iter().map(Document::from_template))
        .flat_map(|d| d.passages)
        .collect();
    passages.sort();
    passages.dedup();
    passages
}

/// Splits an identifier on `.`, `_`, `-`, spaces and camelCase boundaries, lowercased:
/// `readCSVFile.v2` → `read`, `csv`, `file`, `v2`.
pub fn split_identifier(id: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in id.split(['.', '_', '-', '/', ' ']) {
        let chars: Vec<char> = part.chars().collect();
        let mut current = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let prev = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
            let next = chars.get(i + 1).copied();
            let boundary = match prev {
                Some(p) if c.is_uppercase() => {
                    p.is_lowercase()
                        || p.is_ascii_digit()
                        || (p.is_uppercase() && next.is_some_and(char::is_lowercase))
                }
                _ => false,
            };
            if boundary && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            current.extend(c.to_lowercase());
        }
        if !current.is_empty() {
            words.push(current);
        }
    }
    words
}

fn first_non_empty<'a>(values: &[&'a str]) -> &'a str {
    values
        .iter()
        .copied()
        .find(|v| !v.trim().is_empty())
        .unwrap_or_default()
}

fn join_non_empty(values: &[&str], separator: &str) -> String {
    values
        .iter()
        .map(|v| v.trim())
        .filter(|v| !v.is_empty())
        .collect::<Vec<_>>()
        .join(separator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(input: &str, expect: &[&str]) {
        assert_eq!(
            split_identifier(input),
            expect,
            "split_identifier({input:?})"
        );
    }

    #[test]
    fn identifiers() {
        check(
            "matching.duplicate_invoices",
            &["matching", "duplicate", "invoices"],
        );
        check("readCSVFile.v2", &["read", "csv", "file", "v2"]);
        check("ui.table_review", &["ui", "table", "review"]);
        check("HTTPRequest", &["http", "request"]);
        check("", &[]);
        check("..", &[]);
    }
}
