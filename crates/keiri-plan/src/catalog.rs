//! The block catalog: `block_specs/<category>/<id>.yaml` files from one or more directories.
//!
//! Directories are given lowest precedence first (the bundled catalog, then the user's
//! workspace). When several files define one id, the highest semver wins; on equal versions
//! the later directory wins, so a workspace can override a bundled spec. A broken file is
//! reported as a [`CatalogIssue`] with its line and does not stop the others from loading.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::yaml;

/// A block's declaration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockSpec {
    pub id: String,
    #[serde(default, with = "version_string")]
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entrypoint: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_ja: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title_en: Option<String>,
    /// The description (Japanese in our catalog; v0 specs have only this one).
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_en: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    #[serde(default)]
    pub inputs: IndexMap<String, PortSpec>,
    #[serde(default)]
    pub outputs: IndexMap<String, PortSpec>,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub requirements: Value,
    /// The directory the spec was found in (`block_specs/<category>/…`).
    #[serde(skip)]
    pub category: String,
    /// The file it was loaded from.
    #[serde(skip)]
    pub source: PathBuf,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// One input or output of a block.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PortSpec {
    #[serde(rename = "type", default)]
    pub ty: TypeSpec,
    /// Text; v0 specs sometimes put a small structure here, which is kept as compact JSON.
    #[serde(default, deserialize_with = "text_or_structure")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description_en: Option<String>,
    #[serde(rename = "enum", default, skip_serializing_if = "Option::is_none")]
    pub enum_values: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Value>,
    #[serde(default)]
    pub required: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// A declared type: one name or a list of names (`[object, array]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TypeSpec {
    One(String),
    Many(Vec<String>),
}

impl Default for TypeSpec {
    fn default() -> Self {
        TypeSpec::One("any".into())
    }
}

/// The value types the validator reasons about.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ValueType {
    String,
    Number,
    Integer,
    Boolean,
    Object,
    Array,
    Null,
    Any,
}

impl ValueType {
    /// Parses a type name, accepting the Python-ish names v0 specs use.
    pub fn parse(name: &str) -> ValueType {
        match name.trim().to_ascii_lowercase().as_str() {
            "string" | "str" | "text" => ValueType::String,
            "number" | "float" | "double" | "decimal" => ValueType::Number,
            "integer" | "int" => ValueType::Integer,
            "boolean" | "bool" => ValueType::Boolean,
            "object" | "dict" | "map" | "mapping" => ValueType::Object,
            "array" | "list" | "sequence" => ValueType::Array,
            "null" | "none" => ValueType::Null,
            _ => ValueType::Any,
        }
    }

    /// The type of a literal JSON value.
    pub fn of(value: &Value) -> ValueType {
        match value {
            Value::Null => ValueType::Null,
            Value::Bool(_) => ValueType::Boolean,
            Value::Number(n) if n.is_i64() || n.is_u64() => ValueType::Integer,
            Value::Number(_) => ValueType::Number,
            Value::String(_) => ValueType::String,
            Value::Array(_) => ValueType::Array,
            Value::Object(_) => ValueType::Object,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ValueType::String => "string",
            ValueType::Number => "number",
            ValueType::Integer => "integer",
            ValueType::Boolean => "boolean",
            ValueType::Object => "object",
            ValueType::Array => "array",
            ValueType::Null => "null",
            ValueType::Any => "any",
        }
    }
}

impl TypeSpec {
    /// The accepted types; empty means anything.
    pub fn types(&self) -> Vec<ValueType> {
        let names: Vec<&str> = match self {
            TypeSpec::One(s) => s.split('|').collect(),
            TypeSpec::Many(v) => v.iter().map(String::as_str).collect(),
        };
        let types: Vec<ValueType> = names.into_iter().map(ValueType::parse).collect();
        if types.contains(&ValueType::Any) {
            Vec::new()
        } else {
            types
        }
    }

    /// The type as one display string (`object|array`).
    pub fn display(&self) -> String {
        match self {
            TypeSpec::One(s) => s.clone(),
            TypeSpec::Many(v) => v.join("|"),
        }
    }

    /// Whether a value of type `actual` may flow into a port of this type.
    pub fn accepts(&self, actual: ValueType) -> bool {
        let types = self.types();
        if types.is_empty() || actual == ValueType::Any {
            return true;
        }
        types.iter().any(|t| {
            *t == actual
                || (*t == ValueType::Number && actual == ValueType::Integer)
                // A null literal means "not set"; required-ness is checked separately.
                || actual == ValueType::Null
        })
    }

    /// Whether any value of type `actual` (a set) may flow here: the sets intersect.
    pub fn accepts_any_of(&self, actual: &TypeSpec) -> bool {
        let from = actual.types();
        from.is_empty() || from.iter().any(|t| self.accepts(*t))
    }
}

/// A spec file that failed to load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CatalogIssue {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

/// All loaded block specs, by id.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    blocks: BTreeMap<String, BlockSpec>,
}

impl Catalog {
    /// Loads every `<dir>/<category>/*.yaml` (and `.yml`) of `dirs`, lowest precedence first.
    /// Missing directories are skipped.
    pub fn load(dirs: &[PathBuf]) -> (Catalog, Vec<CatalogIssue>) {
        let (blocks, issues) = load_latest(dirs, load_spec);
        (Catalog { blocks }, issues)
    }

    /// A fingerprint of the spec files [`Catalog::load`] reads from `dirs`: equal as long as
    /// no file was added, removed or saved (by path, size and modification time).
    pub fn fingerprint(dirs: &[PathBuf]) -> u64 {
        fingerprint_of(dirs, 2)
    }

    /// Builds a catalog from specs already in memory (tests, benchmarks).
    pub fn from_specs(specs: impl IntoIterator<Item = BlockSpec>) -> Catalog {
        let mut blocks = BTreeMap::new();
        let mut issues = Vec::new();
        for spec in specs {
            insert_latest(&mut blocks, spec, &mut issues);
        }
        Catalog { blocks }
    }

    pub fn get(&self, id: &str) -> Option<&BlockSpec> {
        self.blocks.get(id)
    }

    /// All blocks, sorted by id.
    pub fn blocks(&self) -> impl Iterator<Item = &BlockSpec> {
        self.blocks.values()
    }

    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

/// A spec loaded from a catalog-style directory (`<dir>/<category>/<id>.yaml`): block specs
/// and templates share the loading and the "latest semver wins" rule.
pub(crate) trait Versioned {
    fn id(&self) -> &str;
    fn version(&self) -> &str;
    fn source(&self) -> &Path;
}

impl Versioned for BlockSpec {
    fn id(&self) -> &str {
        &self.id
    }
    fn version(&self) -> &str {
        &self.version
    }
    fn source(&self) -> &Path {
        &self.source
    }
}

/// Loads every file of `dirs` (lowest precedence first) with `load_one`; a broken file becomes
/// an issue and the others still load.
pub(crate) fn load_latest<T: Versioned>(
    dirs: &[PathBuf],
    load_one: fn(&Path) -> Result<T, CatalogIssue>,
) -> (BTreeMap<String, T>, Vec<CatalogIssue>) {
    load_latest_from(dirs, 2, load_one)
}

/// [`load_latest`] over the YAML files `min_depth..=2` levels below each directory: 2 for
/// `<dir>/<category>/<id>.yaml` only, 1 to also take files directly in the directory.
pub(crate) fn load_latest_from<T: Versioned>(
    dirs: &[PathBuf],
    min_depth: usize,
    load_one: fn(&Path) -> Result<T, CatalogIssue>,
) -> (BTreeMap<String, T>, Vec<CatalogIssue>) {
    let mut out = BTreeMap::new();
    let mut issues = Vec::new();
    for dir in dirs.iter().filter(|d| d.is_dir()) {
        // A file beside the category folders is not read: said, not silently left out (a
        // team's spec saved as block_specs/my_block.yaml would otherwise vanish).
        if min_depth > 1 {
            for file in yaml_files(dir, 1)
                .into_iter()
                .filter(|f| f.parent() == Some(dir))
            {
                issues.push(issue(
                    &file,
                    None,
                    "not loaded: a file here belongs in a category folder \
                     (<dir>/<category>/<id>.yaml; the folder name is its category)"
                        .into(),
                ));
            }
        }
        for file in yaml_files(dir, min_depth) {
            match load_one(&file) {
                Ok(spec) => insert_latest(&mut out, spec, &mut issues),
                Err(issue) => issues.push(issue),
            }
        }
    }
    (out, issues)
}

/// A fingerprint of the YAML files [`load_latest_from`] reads in `dirs` (`min_depth` as
/// there): their paths, sizes and modification times. It changes when a file is added,
/// removed or saved, so a cache keyed by it (the shared retriever) is rebuilt exactly then.
pub(crate) fn fingerprint_of(dirs: &[PathBuf], min_depth: usize) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for dir in dirs {
        dir.hash(&mut hasher);
        if !dir.is_dir() {
            continue;
        }
        for file in yaml_files(dir, min_depth) {
            file.hash(&mut hasher);
            if let Ok(meta) = std::fs::metadata(&file) {
                meta.len().hash(&mut hasher);
                meta.modified().ok().hash(&mut hasher);
            }
        }
    }
    hasher.finish()
}

/// Inserts `spec` unless a higher version of its id is already there (equal versions: the
/// later one wins, so a workspace overrides the bundled copy).
pub(crate) fn insert_latest<T: Versioned>(
    map: &mut BTreeMap<String, T>,
    spec: T,
    issues: &mut Vec<CatalogIssue>,
) {
    let new_version = match semver::Version::parse(spec.version()) {
        Ok(v) => v,
        Err(e) => {
            issues.push(CatalogIssue {
                file: spec.source().to_path_buf(),
                line: None,
                column: None,
                message: format!("version {:?} is not semver: {e}", spec.version()),
            });
            return;
        }
    };
    let replace = match map.get(spec.id()) {
        None => true,
        Some(old) => semver::Version::parse(old.version()).map_or(true, |v| new_version >= v),
    };
    if replace {
        map.insert(spec.id().to_string(), spec);
    }
}

pub(crate) fn issue(file: &Path, pos: Option<(usize, usize)>, message: String) -> CatalogIssue {
    CatalogIssue {
        file: file.to_path_buf(),
        line: pos.map(|p| p.0),
        column: pos.map(|p| p.1),
        message,
    }
}

/// Loads one spec file; the category is its directory's name.
pub fn load_spec(file: &Path) -> Result<BlockSpec, CatalogIssue> {
    let mut spec: BlockSpec = read_yaml_file(file, "a spec")?;
    if spec.id.trim().is_empty() {
        return Err(issue(file, Some((1, 1)), "the spec has no id".into()));
    }
    spec.category = file
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    spec.source = file.to_path_buf();
    Ok(spec)
}

/// The `<dir>/<category>/*.yaml` (and `.yml`) files of one directory, sorted, so loading is
/// deterministic. Shared by the block catalog and the template loader.
fn yaml_files(dir: &Path, min_depth: usize) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .min_depth(min_depth)
        .max_depth(2)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
        .collect();
    files.sort();
    files
}

/// Reads one YAML file into `T` with the document limits of [`yaml::parse`]; a failure is
/// an issue with the file and, when known, the line of the offending part. `what` names the
/// kind of file in the size message ("a spec", "a template").
pub(crate) fn read_yaml_file<T: serde::de::DeserializeOwned>(
    file: &Path,
    what: &str,
) -> Result<T, CatalogIssue> {
    let meta = std::fs::metadata(file).map_err(|e| issue(file, None, format!("reading: {e}")))?;
    if meta.len() > yaml::MAX_DOCUMENT_BYTES as u64 {
        return Err(issue(
            file,
            None,
            format!("file is {} bytes, too large for {what}", meta.len()),
        ));
    }
    let text =
        std::fs::read_to_string(file).map_err(|e| issue(file, None, format!("reading: {e}")))?;
    let doc = yaml::parse(&text).map_err(|e| issue(file, e.position(), e.to_string()))?;
    serde_path_to_error::deserialize(&doc.value).map_err(|e| {
        let pointer = crate::io::path_to_pointer(e.path());
        let pos = doc.source_map.locate(&pointer).map(|p| (p.line, p.column));
        issue(
            file,
            pos,
            format!("{}: {}", display_pointer(&pointer), e.inner()),
        )
    })
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "/" } else { pointer }
}

fn text_or_structure<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    })
}

pub(crate) mod version_string {
    use serde::{Deserialize, Deserializer, Serializer};
    use serde_json::Value;

    pub fn serialize<S: Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
        Ok(match Value::deserialize(d)? {
            Value::String(s) => s,
            Value::Null => "0.0.0".into(),
            other => other.to_string(),
        })
    }
}
