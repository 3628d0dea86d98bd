//! The lexical side: a tantivy BM25 index over the document fields, held in memory, plus a
//! vocabulary score for query words that name an input or output.

use std::collections::{HashMap, HashSet};

use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{Language, Stemmer, TextAnalyzer, TokenStream};
use tantivy::{Index, IndexReader, TantivyDocument, Term};

use crate::document::{DocKind, Document, split_identifier};
use crate::error::Error;
use crate::tokenize::{KeiriTokenizer, TOKENIZER_NAME, TokenKind, tokenize_detailed};

/// Per-field boosts: a hit in the id or a title says more about what a block does than a hit
/// in a port description, which repeats generic words (rows, column, path) everywhere.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldBoosts {
    pub id: f32,
    pub titles: f32,
    pub tags: f32,
    pub description: f32,
    pub port_names: f32,
    pub port_text: f32,
    pub category: f32,
}

impl Default for FieldBoosts {
    fn default() -> Self {
        FieldBoosts {
            id: 2.0,
            titles: 2.0,
            tags: 1.5,
            description: 1.0,
            port_names: 0.5,
            port_text: 0.3,
            category: 0.5,
        }
    }
}

/// Query-side weights of the token kinds: single CJK characters are many and vague, so they
/// count for less than bigrams and whole words.
const WEIGHT_WORD: f32 = 1.0;
const WEIGHT_BIGRAM: f32 = 1.0;
const WEIGHT_CJK_CHAR: f32 = 0.3;
/// Hiragana-only tokens (を, して, する) are mostly particles and verb endings: they say how
/// a sentence is built, not what it is about.
const WEIGHT_HIRAGANA: f32 = 0.1;

fn is_hiragana_only(text: &str) -> bool {
    text.chars().all(|c| ('\u{3041}'..='\u{309F}').contains(&c))
}

/// A query token after analysis (stemmed), with the text shown to the user.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryTerm {
    /// The indexed form (lowercase, English words stemmed).
    pub term: String,
    /// The surface form from the query, shown as a matched term.
    pub display: String,
    pub kind: TokenKind,
    /// Weight from kind, repetition and source (instruction or attached document).
    pub weight: f32,
}

#[derive(Clone, Copy)]
struct Fields {
    ord: Field,
    kind: Field,
    category: Field,
    id: Field,
    titles: Field,
    tags: Field,
    description: Field,
    port_names: Field,
    port_text: Field,
    category_text: Field,
}

/// The BM25 index of one document set.
pub struct Bm25Index {
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    boosts: FieldBoosts,
    /// Every analysed term of each document, for the matched-terms list.
    doc_terms: Vec<HashSet<String>>,
    /// Port names of each document, whole and split into parts.
    doc_ports: Vec<(HashSet<String>, HashSet<String>)>,
    /// Inverse document frequency of each port-name word over the documents.
    port_idf: HashMap<String, f32>,
}

impl std::fmt::Debug for Bm25Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bm25Index")
            .field("docs", &self.doc_terms.len())
            .finish_non_exhaustive()
    }
}

fn new_analyzer() -> TextAnalyzer {
    // English stemming folds invoice/invoices and match/matching; it leaves CJK tokens
    // untouched because the Snowball rules only rewrite Latin suffixes.
    TextAnalyzer::builder(KeiriTokenizer)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Analyses `text` into (indexed term, surface text, kind) triples.
fn analyse(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, String, TokenKind)> {
    let detailed = tokenize_detailed(text);
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::with_capacity(detailed.len());
    let mut i = 0;
    while stream.advance() {
        if let Some(original) = detailed.get(i) {
            out.push((
                stream.token().text.clone(),
                original.text.clone(),
                original.kind,
            ));
        }
        i += 1;
    }
    out
}

impl Bm25Index {
    /// Indexes `docs`; document `i` keeps ordinal `i` in every score vector.
    pub fn build(docs: &[Document], boosts: FieldBoosts) -> Result<Bm25Index, Error> {
        let mut schema = Schema::builder();
        let text = TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER_NAME)
                .set_index_option(IndexRecordOption::WithFreqs),
        );
        let fields = Fields {
            ord: schema.add_u64_field("ord", FAST),
            kind: schema.add_text_field("kind", STRING),
            category: schema.add_text_field("category", STRING),
            id: schema.add_text_field("id", text.clone()),
            titles: schema.add_text_field("titles", text.clone()),
            tags: schema.add_text_field("tags", text.clone()),
            description: schema.add_text_field("description", text.clone()),
            port_names: schema.add_text_field("port_names", text.clone()),
            port_text: schema.add_text_field("port_text", text.clone()),
            category_text: schema.add_text_field("category_text", text),
        };
        let index = Index::create_in_ram(schema.build());
        index.tokenizers().register(TOKENIZER_NAME, new_analyzer());
        // One thread and tantivy's smallest arena: other work shares the cores, and a
        // larger arena measured no faster for 5,000 blocks.
        let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, 15_000_000)?;
        let mut analyzer = new_analyzer();
        let mut doc_terms = Vec::with_capacity(docs.len());
        let mut doc_ports = Vec::with_capacity(docs.len());
        let mut port_df: HashMap<String, usize> = HashMap::new();
        for (ord, doc) in docs.iter().enumerate() {
            let port_names = doc
                .port_names
                .iter()
                .map(|n| split_identifier(n).join(" "))
                .collect::<Vec<_>>()
                .join("\n");
            let mut d = TantivyDocument::default();
            d.add_u64(fields.ord, ord as u64);
            d.add_text(fields.kind, doc.kind.as_str());
            d.add_text(fields.category, &doc.category);
            d.add_text(fields.id, &doc.id_words);
            d.add_text(fields.titles, &doc.titles);
            d.add_text(fields.tags, &doc.tags);
            d.add_text(fields.description, &doc.description);
            d.add_text(fields.port_names, &port_names);
            d.add_text(fields.port_text, &doc.port_text);
            d.add_text(fields.category_text, &doc.category);
            writer.add_document(d)?;

            let mut terms = HashSet::new();
            for field_text in [
                &doc.id_words,
                &doc.titles,
                &doc.tags,
                &doc.description,
                &port_names,
                &doc.port_text,
                &doc.category,
            ] {
                terms.extend(analyse(&mut analyzer, field_text).into_iter().map(|t| t.0));
            }
            doc_terms.push(terms);

            let whole: HashSet<String> = doc.port_names.iter().map(|n| n.to_lowercase()).collect();
            let parts: HashSet<String> = doc
                .port_names
                .iter()
                .flat_map(|n| split_identifier(n))
                .collect();
            for word in whole.union(&parts) {
                *port_df.entry(word.clone()).or_default() += 1;
            }
            doc_ports.push((whole, parts));
        }
        writer.commit()?;
        let reader = index.reader()?;
        let n = docs.len().max(1) as f32;
        let port_idf = port_df
            .into_iter()
            .map(|(word, df)| (word, (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln()))
            .collect();
        Ok(Bm25Index {
            reader,
            fields,
            analyzer: new_analyzer(),
            boosts,
            doc_terms,
            doc_ports,
            port_idf,
        })
    }

    pub fn len(&self) -> usize {
        self.doc_terms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.doc_terms.is_empty()
    }

    /// Turns an instruction (weight 1) and attached document texts (weight `doc_weight`)
    /// into weighted query terms, at most `max_terms` distinct ones.
    pub fn query_terms(
        &self,
        instruction: &str,
        docs: &[String],
        doc_weight: f32,
        max_terms: usize,
    ) -> Vec<QueryTerm> {
        let mut analyzer = self.analyzer.clone();
        let mut order: Vec<String> = Vec::new();
        let mut by_term: HashMap<String, (QueryTerm, f32)> = HashMap::new();
        let sources = std::iter::once((instruction, 1.0))
            .chain(docs.iter().map(|d| (d.as_str(), doc_weight)));
        for (text, source_weight) in sources {
            for (term, display, kind) in analyse(&mut analyzer, text) {
                let kind_weight = match kind {
                    TokenKind::Word => WEIGHT_WORD,
                    _ if is_hiragana_only(&display) => WEIGHT_HIRAGANA,
                    TokenKind::CjkBigram => WEIGHT_BIGRAM,
                    TokenKind::CjkChar => WEIGHT_CJK_CHAR,
                };
                match by_term.get_mut(&term) {
                    Some((_, count)) => *count += source_weight,
                    None => {
                        if order.len() >= max_terms {
                            continue;
                        }
                        order.push(term.clone());
                        let qt = QueryTerm {
                            term: term.clone(),
                            display,
                            kind,
                            weight: kind_weight,
                        };
                        by_term.insert(term, (qt, source_weight));
                    }
                }
            }
        }
        order
            .into_iter()
            .filter_map(|term| by_term.remove(&term))
            // A repeated term counts more, but sub-linearly, as in BM25's own tf saturation.
            .map(|(mut qt, count)| {
                qt.weight *= if count <= 1.0 {
                    count
                } else {
                    1.0 + count.ln()
                };
                qt
            })
            .collect()
    }

    /// BM25 score of every document (0 for non-matching or filtered-out ones).
    pub fn scores(
        &self,
        terms: &[QueryTerm],
        kind: Option<DocKind>,
        category: Option<&str>,
    ) -> Result<Vec<f32>, Error> {
        let mut scores = vec![0.0_f32; self.len()];
        if terms.is_empty() || self.is_empty() {
            return Ok(scores);
        }
        let b = self.boosts;
        let text_fields = [
            (self.fields.id, b.id),
            (self.fields.titles, b.titles),
            (self.fields.tags, b.tags),
            (self.fields.description, b.description),
            (self.fields.port_names, b.port_names),
            (self.fields.port_text, b.port_text),
            (self.fields.category_text, b.category),
        ];
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for qt in terms {
            for (field, boost) in text_fields {
                if boost <= 0.0 || qt.weight <= 0.0 {
                    continue;
                }
                let term = Term::from_field_text(field, &qt.term);
                let query = TermQuery::new(term, IndexRecordOption::WithFreqs);
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(query), boost * qt.weight)),
                ));
            }
        }
        let text_query: Box<dyn Query> = Box::new(BooleanQuery::new(should));
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, text_query)];
        if let Some(kind) = kind {
            let term = Term::from_field_text(self.fields.kind, kind.as_str());
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
            ));
        }
        if let Some(category) = category {
            let term = Term::from_field_text(self.fields.category, category);
            clauses.push((
                Occur::Must,
                Box::new(TermQuery::new(term, IndexRecordOption::Basic)),
            ));
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let hits = searcher.search(&query, &TopDocs::with_limit(self.len()).order_by_score())?;
        for (score, address) in hits {
            let column = searcher
                .segment_reader(address.segment_ord)
                .fast_fields()
                .u64("ord")?;
            if let Some(ord) = column.first(address.doc_id)
                && let Some(slot) = scores.get_mut(ord as usize)
            {
                *slot = score;
            }
        }
        Ok(scores)
    }

    /// The query terms found in document `ord`, for the UI: words and bigrams, and single
    /// characters only when no matched bigram already contains them.
    pub fn matched(&self, ord: usize, terms: &[QueryTerm], limit: usize) -> Vec<String> {
        let Some(doc) = self.doc_terms.get(ord) else {
            return Vec::new();
        };
        let hits: Vec<&QueryTerm> = terms
            .iter()
            .filter(|t| doc.contains(&t.term))
            .filter(|t| t.kind == TokenKind::Word || !is_hiragana_only(&t.display))
            .collect();
        let bigrams: Vec<&str> = hits
            .iter()
            .filter(|t| t.kind == TokenKind::CjkBigram)
            .map(|t| t.display.as_str())
            .collect();
        let mut out: Vec<String> = Vec::new();
        for t in hits {
            let covered =
                t.kind == TokenKind::CjkChar && bigrams.iter().any(|b| b.contains(&t.display));
            if !covered && !out.contains(&t.display) {
                out.push(t.display.clone());
            }
            if out.len() >= limit {
                break;
            }
        }
        out
    }

    /// How strongly the query's words name inputs or outputs of document `ord`: the sum of the
    /// port-word IDFs of the query words equal to a port name (full weight) or to a part of
    /// one (half weight). Words every block has (`rows`) carry almost no IDF.
    pub fn vocabulary_score(&self, ord: usize, words: &[String]) -> f32 {
        let Some((whole, parts)) = self.doc_ports.get(ord) else {
            return 0.0;
        };
        let mut score = 0.0;
        for word in words {
            let idf = self.port_idf.get(word).copied().unwrap_or(0.0);
            if whole.contains(word) {
                score += idf;
            } else if parts.contains(word) {
                score += 0.5 * idf;
            }
        }
        score
    }
}

/// The distinct Latin words of `text` that may name a port: lowercase, at least three
/// characters, snake_case names kept whole and also split into their parts.
pub fn query_words(text: &str, max_words: usize) -> Vec<String> {
    let normalized = crate::tokenize::normalize(text);
    let mut words: Vec<String> = Vec::new();
    let push = |w: &str, words: &mut Vec<String>| {
        if w.chars().count() >= 3 && words.len() < max_words && !words.iter().any(|x| x == w) {
            words.push(w.to_string());
        }
    };
    for raw in normalized.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        let raw = raw.trim_matches('_');
        if raw.is_empty() {
            continue;
        }
        push(raw, &mut words);
        if raw.contains('_') {
            for part in raw.split('_') {
                push(part, &mut words);
            }
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    fn docs() -> Vec<Document> {
        let mut a = Document::new(DocKind::Block, "matching.duplicate_invoices", "matching");
        a.titles = "重複請求書を検出する".into();
        a.port_names = vec!["vendor_field".into(), "rows".into()];
        let mut b = Document::new(DocKind::Block, "csv.read", "input");
        b.titles = "CSVファイルを読み込む".into();
        b.port_names = vec!["path".into(), "rows".into()];
        vec![a, b]
    }

    fn check(query: &str, expect_best: &str) {
        let docs = docs();
        let index = Bm25Index::build(&docs, FieldBoosts::default()).unwrap();
        let terms = index.query_terms(query, &[], 0.3, 256);
        let scores = index.scores(&terms, None, None).unwrap();
        let best = (0..docs.len())
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .unwrap();
        assert_eq!(
            docs[best].id, expect_best,
            "query {query:?}: scores {scores:?}"
        );
        assert!(scores[best] > 0.0);
    }

    #[test]
    fn ranks_by_field_text() {
        check("請求書の重複", "matching.duplicate_invoices");
        check("CSVを読み込む", "csv.read");
        check("duplicate invoice", "matching.duplicate_invoices");
    }

    #[test]
    fn category_filter_excludes_other_categories() {
        let docs = docs();
        let index = Bm25Index::build(&docs, FieldBoosts::default()).unwrap();
        let terms = index.query_terms("請求書 CSV", &[], 0.3, 256);
        let scores = index
            .scores(&terms, Some(DocKind::Block), Some("input"))
            .unwrap();
        assert_eq!(scores[0], 0.0);
        assert!(scores[1] > 0.0);
    }

    #[test]
    fn vocabulary_score_rewards_port_names() {
        let docs = docs();
        let index = Bm25Index::build(&docs, FieldBoosts::default()).unwrap();
        let words = query_words("group by vendor_field and vendor", 64);
        assert_eq!(words, ["group", "vendor_field", "vendor", "field", "and"]);
        assert!(index.vocabulary_score(0, &words) > 0.0);
        assert_eq!(index.vocabulary_score(1, &words), 0.0);
    }
}
