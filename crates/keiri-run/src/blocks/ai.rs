//! `ai/*`: the blocks that ask a model — field extraction ([`extract`]), general structured
//! processing ([`process`]), account suggestions ([`classify`]), variance comments
//! ([`variances`]) and document summaries ([`summarize`]).
//!
//! Every call goes through keiri-llm ([`keiri_llm::Llm::structured`]): the answer's shape is a
//! JSON Schema sent as strict structured output (function calling, then free-form JSON as
//! fallbacks for servers without it), checked by keiri-llm against the schema, and checked
//! again here before anything is passed on ([`Model::ask_all`]), so a block never hands a
//! malformed or invented key to the next node. A user's `output_schema` (JSON-Schema-like,
//! shorthand allowed) is turned into a strict one by [`OutputShape::from_user`].
//!
//! What they must not do:
//! * run without a model: with no provider configured ([`BlockContext::llm`] is `None`) they
//!   fail with `LLM_NOT_CONFIGURED` before reading their inputs' files, and the rest of the plan
//!   goes on under `on_error: continue`;
//! * write a prompt, an answer or a key to the run's events: each call is reported on
//!   [`BlockContext::calls`] as model, tokens, duration and strategy only;
//! * guess: the prompts ask for `null` where a document does not say, and the blocks report
//!   what came back empty (`failures`, `low_confidence`) instead of filling it in.
//!
//! Dependencies and why: keiri-llm (the planner's client: retries, `Retry-After`, redaction,
//! cancellation) driven on a current-thread tokio runtime the block builds for its calls
//! (blocks are synchronous functions on their own threads); `futures-util` to keep a few calls
//! in flight at once with the answers in input order.

mod classify_account;
mod explain_variances;
mod extract_fields;
mod process_llm;
mod summarize_documents;

use std::time::Instant;

use futures_util::StreamExt;
use keiri_llm::{CallOptions, Llm, Message, OutputSchema, StructuredRequest};
use serde_json::{Value as Json, json};

use crate::block::{BlockContext, BlockError, ErrorCode, Inputs, LlmCall};

/// Calls in flight at once for per-document and per-item work.
const CONCURRENCY: usize = 4;

/// Characters of one document's text sent in one call; the rest is cut (and said so).
pub(crate) const MAX_DOCUMENT_CHARS: usize = 40_000;

/// One question to the model.
pub(crate) struct Ask {
    /// What the call is for, in the run's events (`document a.pdf`, `rows 1-25`).
    pub purpose: String,
    pub system: String,
    pub user: String,
}

/// Why one answer could not be used, when the call itself worked (the model's output did not
/// match the schema, it refused, or the provider rejected this one request — e.g. a document
/// too long for the model). Other failures end the block.
#[derive(Debug, Clone)]
pub(crate) struct AskFailure {
    pub code: &'static str,
    pub message: String,
}

/// Token and call counts over a block's calls (for its `summary` output).
#[derive(Debug, Clone, Default)]
pub(crate) struct Tally {
    pub calls: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    /// The output modes that answered (`json_schema`, …), each once.
    pub strategies: std::collections::BTreeSet<String>,
}

impl Tally {
    fn add(&mut self, call: &LlmCall) {
        self.calls += 1;
        self.prompt_tokens += call.prompt_tokens;
        self.completion_tokens += call.completion_tokens;
        self.total_tokens += call.total_tokens;
        if let Some(s) = &call.strategy {
            self.strategies.insert(s.clone());
        }
    }

    /// The tally as summary fields (`calls`, `prompt_tokens`, …, `model`).
    pub fn to_json(&self, model: &str) -> serde_json::Map<String, Json> {
        let mut m = serde_json::Map::new();
        m.insert("model".into(), json!(model));
        m.insert("calls".into(), json!(self.calls));
        m.insert("prompt_tokens".into(), json!(self.prompt_tokens));
        m.insert("completion_tokens".into(), json!(self.completion_tokens));
        m.insert("total_tokens".into(), json!(self.total_tokens));
        m.insert("strategies".into(), json!(self.strategies));
        m
    }
}

/// The model a block calls, with the block's `model` (and `temperature`) inputs applied.
pub(crate) struct Model<'c, 'a> {
    ctx: &'c BlockContext<'a>,
    llm: Llm,
    runtime: tokio::runtime::Runtime,
    pub tally: Tally,
}

impl<'c, 'a> Model<'c, 'a> {
    /// The run's model, or `LLM_NOT_CONFIGURED`.
    pub fn new(ctx: &'c BlockContext<'a>, inputs: &Inputs) -> Result<Model<'c, 'a>, BlockError> {
        let Some(llm) = ctx.llm else {
            return Err(BlockError::new(
                ErrorCode::Llm("LLM_NOT_CONFIGURED"),
                "AIモデルが設定されていないため、このブロックは実行できません",
                "no AI model is configured, so this block cannot run",
            )
            .with_hint(
                "設定で OpenAI・Azure OpenAI・互換サーバーのいずれかを設定してください（OPENAI_API_KEY、AZURE_OPENAI_*、KEIRI_LLM_BASE_URL）",
                "configure OpenAI, Azure OpenAI or a compatible server in the settings (OPENAI_API_KEY, AZURE_OPENAI_*, KEIRI_LLM_BASE_URL)",
            ));
        };
        let mut llm = llm.clone();
        if let Some(model) = inputs.str("model")? {
            let model = model.trim();
            if model.is_empty() || model.len() > 200 || model.chars().any(char::is_control) {
                return Err(BlockError::input_invalid(
                    "model",
                    "モデル名が必要です",
                    "expected a model name",
                ));
            }
            llm = llm.with_model(model);
        }
        if let Some(t) = inputs.f64("temperature")? {
            if !(0.0..=2.0).contains(&t) {
                return Err(BlockError::input_invalid(
                    "temperature",
                    "0〜2 の数値です",
                    "expected a number from 0 to 2",
                ));
            }
            llm = llm.with_temperature(t as f32);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| {
                BlockError::failed(
                    format!("非同期ランタイムを開始できません: {e}"),
                    format!("cannot start the async runtime: {e}"),
                )
            })?;
        Ok(Model {
            ctx,
            llm,
            runtime,
            tally: Tally::default(),
        })
    }

    pub fn name(&self) -> &str {
        self.llm.model()
    }

    pub fn temperature(&self) -> f32 {
        self.llm.temperature()
    }

    /// Asks every question (a few at a time), each answer shaped by `shape`, in `asks`' order.
    ///
    /// An answer is checked against the schema once more here (keiri-llm checked it too, but a
    /// lenient schema or a fallback strategy must not let a malformed value through) and then
    /// unwrapped when the shape wrapped a non-object root. An answer that cannot be used is an
    /// [`AskFailure`] in its place; a failure that would hit every call (no credentials, rate
    /// limits, timeouts, the server down, cancellation) ends the block with its code.
    pub fn ask_all(
        &mut self,
        asks: Vec<Ask>,
        shape: &OutputShape,
    ) -> Result<Vec<Result<Json, AskFailure>>, BlockError> {
        let Model {
            ctx,
            llm,
            runtime,
            tally,
        } = self;
        let options = CallOptions::new()
            .with_cancel(ctx.cancel.clone())
            .with_stage(format!("run:{}", ctx.node_id));
        let schema = shape.output_schema();
        let provider = llm.provider_kind().as_str().to_string();
        runtime.block_on(async {
            let llm = &*llm;
            let mut stream = futures_util::stream::iter(asks.into_iter().map(|ask| {
                let request = StructuredRequest::new(
                    vec![Message::system(ask.system), Message::user(ask.user)],
                    schema.clone(),
                );
                let options = &options;
                async move {
                    let started = Instant::now();
                    let result = llm.structured::<Json>(&request, options).await;
                    (ask.purpose, started.elapsed(), result)
                }
            }))
            .buffered(CONCURRENCY);
            let mut answers = Vec::new();
            while let Some((purpose, took, result)) = stream.next().await {
                let mut call = LlmCall {
                    purpose,
                    provider: provider.clone(),
                    model: llm.model().to_string(),
                    strategy: None,
                    prompt_tokens: 0,
                    completion_tokens: 0,
                    total_tokens: 0,
                    requests: 0,
                    duration_ms: u64::try_from(took.as_millis()).unwrap_or(u64::MAX),
                    error: None,
                };
                let answer = match result {
                    Ok(answer) => {
                        call.strategy = Some(answer.strategy.as_str().to_string());
                        call.prompt_tokens = answer.usage.prompt_tokens;
                        call.completion_tokens = answer.usage.completion_tokens;
                        call.total_tokens = answer.usage.total_tokens;
                        call.requests = answer.requests;
                        call.duration_ms = answer.duration_ms;
                        Ok(shape.check(answer.json))
                    }
                    Err(e) => {
                        call.error = Some(e.code().to_string());
                        // A failure of one answer takes its place; any other ends the block.
                        per_answer(&e).map(Err).ok_or_else(|| llm_error(&e))
                    }
                };
                tally.add(&call);
                ctx.calls.record(call);
                // On `Err` the stream is dropped, and the calls still in flight with it.
                answers.push(answer?);
            }
            Ok(answers)
        })
    }

    /// One call per document that has text, each with `system`: the answers in the documents'
    /// order, `None` for a document without text (a scanned PDF without a text layer), for
    /// which nothing is sent.
    #[allow(clippy::type_complexity)]
    pub fn ask_documents(
        &mut self,
        docs: &[Document],
        system: &str,
        shape: &OutputShape,
    ) -> Result<Vec<Option<Result<Json, AskFailure>>>, BlockError> {
        let asks = docs
            .iter()
            .filter(|d| !d.text.trim().is_empty())
            .map(|doc| Ask {
                purpose: format!("document {}", doc.name),
                system: system.to_string(),
                user: document_message(doc),
            })
            .collect();
        let mut answers = self.ask_all(asks, shape)?.into_iter();
        Ok(docs
            .iter()
            .map(|d| {
                (!d.text.trim().is_empty())
                    .then(|| answers.next())
                    .flatten()
            })
            .collect())
    }

    /// [`Model::ask_all`] for a block that needs every answer: the first unusable one fails
    /// the block with its code.
    pub fn ask_each(
        &mut self,
        asks: Vec<Ask>,
        shape: &OutputShape,
    ) -> Result<Vec<Json>, BlockError> {
        let purposes: Vec<String> = asks.iter().map(|a| a.purpose.clone()).collect();
        self.ask_all(asks, shape)?
            .into_iter()
            .zip(&purposes)
            .map(|(answer, purpose)| answer.map_err(|f| failure_error(purpose, &f)))
            .collect()
    }

    /// One question the block cannot do without ([`Model::ask_each`]).
    pub fn ask_one(&mut self, ask: Ask, shape: &OutputShape) -> Result<Json, BlockError> {
        self.ask_each(vec![ask], shape)?.pop().ok_or_else(|| {
            BlockError::failed("AIモデルの回答がありません", "the model gave no answer")
        })
    }
}

/// The block error for an answer that could not be used.
pub(crate) fn failure_error(purpose: &str, f: &AskFailure) -> BlockError {
    BlockError::new(
        ErrorCode::Llm(f.code),
        format!("AIモデルの回答を使えません（{purpose}）: {}", f.message),
        format!(
            "the model's answer cannot be used ({purpose}): {}",
            f.message
        ),
    )
    .with_hint(
        "指示や output_schema を見直すか、別のモデルを model で指定してください",
        "revise the instruction or output_schema, or pick another model with `model`",
    )
}

/// `Some` when `e` concerns one answer only (the next call may well work).
fn per_answer(e: &keiri_llm::Error) -> Option<AskFailure> {
    use keiri_llm::Error as E;
    let message = match e {
        E::StructuredOutput { failures } => failures
            .iter()
            .map(|f| format!("{}: {}", f.strategy.as_str(), f.message))
            .collect::<Vec<_>>()
            .join("; "),
        E::Refused { message } => format!("the model refused: {message}"),
        E::Rejected { .. } => e.to_string(),
        _ => return None,
    };
    Some(AskFailure {
        code: e.code(),
        message,
    })
}

/// The block error for a failed call.
fn llm_error(e: &keiri_llm::Error) -> BlockError {
    if matches!(e, keiri_llm::Error::Cancelled) {
        return BlockError::new(
            ErrorCode::Cancelled,
            "実行が取り消されました",
            "the run was cancelled",
        );
    }
    let hint = match e {
        keiri_llm::Error::Unauthorized { .. } => Some((
            "APIキーと権限を確認してください",
            "check the API key and its permissions",
        )),
        keiri_llm::Error::RateLimited { .. } => Some((
            "しばらく待ってから再実行するか、policy.retries を設定してください",
            "wait and run again, or set policy.retries",
        )),
        keiri_llm::Error::Timeout { .. } | keiri_llm::Error::Connection { .. } => Some((
            "ネットワークとLLMの接続先を確認して再実行してください",
            "check the network and the LLM endpoint, then run again",
        )),
        _ => None,
    };
    let error = BlockError::new(
        ErrorCode::Llm(e.code()),
        format!("AIモデルの呼び出しに失敗しました: {e}"),
        format!("the model call failed: {e}"),
    );
    match hint {
        Some((ja, en)) => error.with_hint(ja, en),
        None => error,
    }
}

/// The shape an answer must have: a JSON Schema whose root is an object (a user's non-object
/// root is wrapped as `{"value": …}` and unwrapped again), strict when OpenAI's strict mode
/// accepts it.
#[derive(Debug, Clone)]
pub(crate) struct OutputShape {
    name: String,
    schema: Json,
    strict: bool,
    wrapped: bool,
}

impl OutputShape {
    /// A shape the block wrote itself (already strict).
    pub fn fixed(name: &str, schema: Json) -> OutputShape {
        let strict = keiri_llm::schema::strict_problems(&schema).is_empty();
        OutputShape {
            name: name.to_string(),
            schema,
            strict,
            wrapped: false,
        }
    }

    /// The shape from a user's `output_schema` (input `key`): a JSON Schema, or the shorthand
    /// `{field: type}` / `{field: {type: …}}`. Every object gets `additionalProperties: false`
    /// and lists every property as required (strict mode's rules); a property the user did
    /// not mark required (`required: [...]`) may be `null` when `optional_by_default`, so the
    /// model can say "not in the document" instead of guessing.
    pub fn from_user(
        name: &str,
        key: &str,
        user: &Json,
        optional_by_default: bool,
    ) -> Result<OutputShape, BlockError> {
        let bad = |ja: &str, en: &str| {
            BlockError::input_invalid(key, ja, en).with_hint(
                "例: {type: object, properties: {請求書番号: {type: string}, 合計金額: {type: number}}}",
                "e.g. {type: object, properties: {invoice_no: {type: string}, total: {type: number}}}",
            )
        };
        let normal = normalize(user).ok_or_else(|| {
            bad(
                "JSON Schema 風の定義（オブジェクト）が必要です",
                "expected a JSON-Schema-like definition (an object)",
            )
        })?;
        let empty_object = is_object(&normal)
            && normal
                .get("properties")
                .and_then(Json::as_object)
                .is_none_or(serde_json::Map::is_empty);
        if empty_object {
            return Err(bad(
                "項目（properties）が1つ以上必要です",
                "at least one property is required",
            ));
        }
        let (root, wrapped) = if is_object(&normal) {
            (normal, false)
        } else {
            (
                json!({"type": "object", "properties": {"value": normal}, "required": ["value"]}),
                true,
            )
        };
        let schema = strictify(&root, false, optional_by_default, 0)
            .ok_or_else(|| bad("入れ子が深すぎます", "nested too deeply"))?;
        let strict = keiri_llm::schema::strict_problems(&schema).is_empty();
        Ok(OutputShape {
            name: name.to_string(),
            schema,
            strict,
            wrapped,
        })
    }

    /// The top-level property names (the fields of an extraction).
    pub fn fields(&self) -> Vec<String> {
        let root = if self.wrapped {
            self.schema.pointer("/properties/value")
        } else {
            Some(&self.schema)
        };
        root.and_then(|r| r.get("properties"))
            .and_then(Json::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Whether the provider is asked to enforce the schema (strict mode accepts it).
    pub fn is_strict(&self) -> bool {
        self.strict
    }

    fn output_schema(&self) -> OutputSchema {
        let schema = OutputSchema::new(self.name.clone(), self.schema.clone());
        if self.strict {
            schema
        } else {
            schema.lenient()
        }
    }

    /// `json` checked against the schema (and unwrapped).
    fn check(&self, json: Json) -> Result<Json, AskFailure> {
        let violations = keiri_llm::schema::validate(&self.schema, &json);
        if let Some(first) = violations.first() {
            return Err(AskFailure {
                code: "LLM_OUTPUT_INVALID",
                message: format!(
                    "the answer does not match the schema ({} violations; first at {}: {})",
                    violations.len(),
                    if first.path.is_empty() {
                        "/"
                    } else {
                        &first.path
                    },
                    first.message
                ),
            });
        }
        if self.wrapped {
            let Json::Object(mut m) = json else {
                return Err(AskFailure {
                    code: "LLM_OUTPUT_INVALID",
                    message: "the answer is not an object".into(),
                });
            };
            Ok(m.remove("value").unwrap_or(Json::Null))
        } else {
            Ok(json)
        }
    }
}

const SCALAR_TYPES: [&str; 5] = ["string", "number", "integer", "boolean", "null"];

/// A schema from the shorthand forms: `"string"` → `{type: string}`, `[T]` → an array of T,
/// a map of fields without schema keywords → an object with those properties.
fn normalize(v: &Json) -> Option<Json> {
    const KEYWORDS: [&str; 9] = [
        "type",
        "properties",
        "items",
        "enum",
        "anyOf",
        "oneOf",
        "const",
        "$ref",
        "allOf",
    ];
    match v {
        Json::String(t) if SCALAR_TYPES.contains(&t.as_str()) || t == "object" || t == "array" => {
            Some(json!({"type": t}))
        }
        Json::Array(items) if items.len() == 1 => {
            Some(json!({"type": "array", "items": normalize(&items[0])?}))
        }
        Json::Object(m) if m.keys().any(|k| KEYWORDS.contains(&k.as_str())) => {
            let mut out = m.clone();
            if let Some(Json::Object(props)) = m.get("properties") {
                let mut p = serde_json::Map::new();
                for (k, v) in props {
                    p.insert(k.clone(), normalize(v)?);
                }
                out.insert("properties".into(), Json::Object(p));
                out.entry("type").or_insert_with(|| json!("object"));
            }
            if let Some(items) = m.get("items") {
                out.insert("items".into(), normalize(items)?);
            }
            Some(Json::Object(out))
        }
        Json::Object(m) if !m.is_empty() => {
            let mut p = serde_json::Map::new();
            for (k, v) in m {
                p.insert(k.clone(), normalize(v)?);
            }
            Some(json!({"type": "object", "properties": p}))
        }
        _ => None,
    }
}

fn is_object(s: &Json) -> bool {
    match s.get("type") {
        Some(Json::String(t)) => t == "object",
        _ => s.get("properties").is_some(),
    }
}

/// Strict mode's form of `s` (see [`OutputShape::from_user`]); `None` past 10 levels.
fn strictify(s: &Json, nullable: bool, optional_by_default: bool, depth: usize) -> Option<Json> {
    if depth > 10 {
        return None;
    }
    let Json::Object(m) = s else {
        return Some(s.clone());
    };
    let mut out = m.clone();
    if is_object(s) {
        let required: Option<Vec<&str>> = m
            .get("required")
            .and_then(Json::as_array)
            .map(|r| r.iter().filter_map(Json::as_str).collect());
        let mut props = serde_json::Map::new();
        if let Some(Json::Object(p)) = m.get("properties") {
            for (k, v) in p {
                let optional = match &required {
                    Some(r) => !r.contains(&k.as_str()),
                    None => optional_by_default,
                };
                props.insert(
                    k.clone(),
                    strictify(v, optional, optional_by_default, depth + 1)?,
                );
            }
        }
        out.insert(
            "required".into(),
            Json::Array(props.keys().map(|k| json!(k)).collect()),
        );
        out.insert("properties".into(), Json::Object(props));
        out.insert("additionalProperties".into(), json!(false));
        out.insert("type".into(), json!("object"));
    } else if m.get("type").and_then(Json::as_str) == Some("array") {
        let items = m.get("items").cloned().unwrap_or(json!({"type": "string"}));
        out.insert(
            "items".into(),
            strictify(&items, false, optional_by_default, depth + 1)?,
        );
    }
    if !nullable {
        return Some(Json::Object(out));
    }
    match out.get("type").cloned() {
        Some(Json::String(t)) if t != "null" => {
            out.insert("type".into(), json!([t, "null"]));
            if let Some(Json::Array(values)) = out.get_mut("enum")
                && !values.contains(&Json::Null)
            {
                values.push(Json::Null);
            }
            Some(Json::Object(out))
        }
        Some(_) => Some(Json::Object(out)),
        None => Some(json!({"anyOf": [Json::Object(out), {"type": "null"}]})),
    }
}

/// One document to read: a name for messages and rows, and its text.
#[derive(Debug, Clone)]
pub(crate) struct Document {
    pub name: String,
    pub text: String,
}

/// The documents of input `key`: a text, a list of texts, or a list of objects with `text`
/// (or `content`, `text_excerpt`) and `name` (or `file_name`, `path`, `source`). An object with
/// only a `path` is read like `pdf.extract_text` / `docx.extract_text` would.
pub(crate) fn documents(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
    key: &str,
) -> Result<Vec<Document>, BlockError> {
    let value = inputs
        .json(key)
        .ok_or_else(|| BlockError::input_invalid(key, "必須です", "it is required"))?;
    let items = match value {
        Json::String(s) => vec![Json::String(s)],
        Json::Array(items) => items,
        Json::Object(m) => vec![Json::Object(m)],
        _ => {
            return Err(BlockError::input_invalid(
                key,
                "文書（name と text）の配列が必要です",
                "expected a list of documents (name and text)",
            ));
        }
    };
    let mut docs = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        super::cancelled(ctx)?;
        let fallback = format!("document {}", i + 1);
        let doc = match item {
            Json::String(text) => Document {
                name: fallback,
                text,
            },
            Json::Object(m) => {
                let field = |names: &[&str]| {
                    names
                        .iter()
                        .find_map(|n| m.get(*n).and_then(Json::as_str))
                        .map(str::to_string)
                };
                let path = field(&["path"]);
                let name = field(&["name", "file_name", "path", "source"]).unwrap_or(fallback);
                let text = match (field(&["text", "content", "text_excerpt"]), path) {
                    (Some(text), _) => text,
                    (None, Some(path)) => {
                        let (full, bytes) = crate::blocks::kit::files::read_bytes(ctx, &path)?;
                        crate::blocks::kit::text::excerpt(&full, &bytes, MAX_DOCUMENT_CHARS + 1)
                            .map_err(|code| {
                                BlockError::failed(
                                    format!("{path} のテキストを読めません（{code}）"),
                                    format!("cannot read the text of {path} ({code})"),
                                )
                            })?
                            .unwrap_or_default()
                    }
                    (None, None) => {
                        return Err(BlockError::input_invalid(
                            key,
                            &format!("{} 番目の文書に text も path もありません", i + 1),
                            &format!("document {} has neither text nor path", i + 1),
                        ));
                    }
                };
                Document { name, text }
            }
            _ => {
                return Err(BlockError::input_invalid(
                    key,
                    &format!("{} 番目の文書がオブジェクトでも文字列でもありません", i + 1),
                    &format!("document {} is neither an object nor a text", i + 1),
                ));
            }
        };
        docs.push(doc);
    }
    Ok(docs)
}

/// What a document without text gets instead of an answer.
/// What a document without text gets instead of an answer, in the run's language.
pub(crate) fn no_text(ctx: &BlockContext<'_>) -> &'static str {
    ctx.say(
        "文書にテキストがありません（画像だけのPDFなど）",
        "the document has no text (an image-only PDF?)",
    )
}

/// `text` cut to `max` characters, and whether it was cut.
pub(crate) fn cut(text: &str, max: usize) -> (String, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (text[..at].to_string(), true),
        None => (text.to_string(), false),
    }
}

/// The document as the user message of a call.
pub(crate) fn document_message(doc: &Document) -> String {
    let (text, was_cut) = cut(&doc.text, MAX_DOCUMENT_CHARS);
    let note = if was_cut {
        format!("\n(The text was cut after {MAX_DOCUMENT_CHARS} characters.)")
    } else {
        String::new()
    };
    format!(
        "Document name: {}\n<document>\n{}\n</document>{note}",
        doc.name, text
    )
}

/// The instruction for the answer's language.
pub(crate) fn language_instruction(inputs: &Inputs) -> Result<&'static str, BlockError> {
    match inputs.str("language")?.unwrap_or("ja") {
        "ja" => Ok("Write every text value in Japanese."),
        "en" => Ok("Write every text value in English."),
        _ => Err(BlockError::input_invalid(
            "language",
            "ja か en です",
            "expected ja or en",
        )),
    }
}
