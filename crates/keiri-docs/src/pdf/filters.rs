//! Stream filters with an output budget (§7.4). A few kilobytes of Flate or LZW data can
//! expand to gigabytes, so every decoder writes through [`Budget`] and stops at its cap.

use std::io::Read;

use super::lexer::{Dict, Object};

/// Decompression allowance for one document.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    /// Bytes one stream may decode to.
    pub per_stream: usize,
    /// Bytes all streams together may decode to.
    pub remaining: usize,
    pub total: usize,
}

impl Budget {
    pub fn new(per_stream: usize, total: usize) -> Self {
        Budget {
            per_stream,
            remaining: total,
            total,
        }
    }

    fn cap(&self) -> usize {
        self.per_stream.min(self.remaining)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FilterError {
    /// The output would exceed the budget.
    TooLarge { limit: usize },
    /// An image codec or an unknown filter; the stream is not text and is skipped.
    Unsupported,
}

/// Decodes stream data through its `/Filter` chain.
pub(crate) fn decode(dict: &Dict, raw: &[u8], budget: &mut Budget) -> Result<Vec<u8>, FilterError> {
    let filters: Vec<&[u8]> = match dict.get(b"Filter").or_else(|| dict.get(b"F")) {
        Some(Object::Name(n)) => vec![n],
        Some(Object::Array(a)) => a.iter().filter_map(Object::as_name).collect(),
        _ => Vec::new(),
    };
    let params: Vec<Option<&Dict>> = match dict.get(b"DecodeParms").or_else(|| dict.get(b"DP")) {
        Some(Object::Dict(d)) => vec![Some(d)],
        Some(Object::Array(a)) => a.iter().map(Object::as_dict).collect(),
        _ => Vec::new(),
    };
    if filters.is_empty() {
        let cap = budget.cap();
        if raw.len() > cap {
            return Err(FilterError::TooLarge { limit: cap });
        }
        budget.remaining -= raw.len();
        return Ok(raw.to_vec());
    }
    let mut data: Option<Vec<u8>> = None;
    for (i, filter) in filters.iter().enumerate() {
        let input: &[u8] = data.as_deref().unwrap_or(raw);
        let cap = budget.cap();
        let parms = params.get(i).copied().flatten();
        let out = match *filter {
            b"FlateDecode" | b"Fl" => predict(flate(input, cap)?, parms, cap)?,
            b"LZWDecode" | b"LZW" => predict(lzw(input, parms, cap)?, parms, cap)?,
            b"ASCIIHexDecode" | b"AHx" => ascii_hex(input),
            b"ASCII85Decode" | b"A85" => ascii85(input),
            b"RunLengthDecode" | b"RL" => run_length(input, cap)?,
            _ => return Err(FilterError::Unsupported),
        };
        if out.len() > cap {
            return Err(FilterError::TooLarge { limit: cap });
        }
        budget.remaining -= out.len();
        data = Some(out);
    }
    Ok(data.unwrap_or_default())
}

fn read_capped(mut reader: impl Read, cap: usize) -> Result<Vec<u8>, FilterError> {
    let mut out = Vec::new();
    // A corrupt tail is common in real files; keep what decoded before the error.
    let _ = reader.by_ref().take(cap as u64 + 1).read_to_end(&mut out);
    if out.len() > cap {
        return Err(FilterError::TooLarge { limit: cap });
    }
    Ok(out)
}

fn flate(input: &[u8], cap: usize) -> Result<Vec<u8>, FilterError> {
    let out = read_capped(flate2::read::ZlibDecoder::new(input), cap)?;
    if out.is_empty() && !input.is_empty() {
        // Some writers omit the zlib header and emit raw deflate data.
        return read_capped(flate2::read::DeflateDecoder::new(input), cap);
    }
    Ok(out)
}

fn lzw(input: &[u8], parms: Option<&Dict>, cap: usize) -> Result<Vec<u8>, FilterError> {
    let early = parms
        .and_then(|p| p.get(b"EarlyChange"))
        .and_then(Object::as_int)
        .unwrap_or(1)
        != 0;
    let mut decoder = if early {
        weezl::decode::Decoder::with_tiff_size_switch(weezl::BitOrder::Msb, 8)
    } else {
        weezl::decode::Decoder::new(weezl::BitOrder::Msb, 8)
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut input = input;
    loop {
        let result = decoder.decode_bytes(input, &mut buf);
        out.extend_from_slice(buf.get(..result.consumed_out).unwrap_or(&[]));
        if out.len() > cap {
            return Err(FilterError::TooLarge { limit: cap });
        }
        input = input.get(result.consumed_in..).unwrap_or(&[]);
        match result.status {
            Ok(weezl::LzwStatus::Ok) if result.consumed_in > 0 || result.consumed_out > 0 => {}
            _ => break,
        }
    }
    Ok(out)
}

/// PNG (10–15) and TIFF (2) predictors, as used by xref and object streams.
fn predict(data: Vec<u8>, parms: Option<&Dict>, cap: usize) -> Result<Vec<u8>, FilterError> {
    let Some(p) = parms else { return Ok(data) };
    let predictor = p.get(b"Predictor").and_then(Object::as_int).unwrap_or(1);
    if predictor < 2 {
        return Ok(data);
    }
    let colors = p
        .get(b"Colors")
        .and_then(Object::as_int)
        .unwrap_or(1)
        .clamp(1, 32) as usize;
    let bpc = p
        .get(b"BitsPerComponent")
        .and_then(Object::as_int)
        .unwrap_or(8)
        .clamp(1, 16) as usize;
    let columns = p
        .get(b"Columns")
        .and_then(Object::as_int)
        .unwrap_or(1)
        .clamp(1, 1 << 20) as usize;
    let bpp = (colors * bpc).div_ceil(8).max(1);
    let row_len = (colors * bpc * columns).div_ceil(8);
    if predictor == 2 {
        if bpc != 8 {
            return Err(FilterError::Unsupported);
        }
        let mut data = data;
        for row in data.chunks_mut(row_len) {
            for i in bpp..row.len() {
                row[i] = row[i].wrapping_add(row[i - bpp]);
            }
        }
        return Ok(data);
    }
    let mut out = Vec::with_capacity(data.len().min(cap));
    let mut prev = vec![0u8; row_len];
    for chunk in data.chunks(row_len + 1) {
        let Some((&kind, row)) = chunk.split_first() else {
            break;
        };
        let mut cur = row.to_vec();
        cur.resize(row_len, 0);
        for i in 0..row_len {
            let left = if i >= bpp { cur[i - bpp] } else { 0 };
            let up = prev[i];
            let up_left = if i >= bpp { prev[i - bpp] } else { 0 };
            cur[i] = match kind {
                0 => cur[i],
                1 => cur[i].wrapping_add(left),
                2 => cur[i].wrapping_add(up),
                3 => cur[i].wrapping_add(((u16::from(left) + u16::from(up)) / 2) as u8),
                4 => cur[i].wrapping_add(paeth(left, up, up_left)),
                _ => cur[i],
            };
        }
        out.extend_from_slice(&cur);
        if out.len() > cap {
            return Err(FilterError::TooLarge { limit: cap });
        }
        prev = cur;
    }
    Ok(out)
}

fn paeth(a: u8, b: u8, c: u8) -> u8 {
    let p = i16::from(a) + i16::from(b) - i16::from(c);
    let (pa, pb, pc) = (
        (p - i16::from(a)).abs(),
        (p - i16::from(b)).abs(),
        (p - i16::from(c)).abs(),
    );
    if pa <= pb && pa <= pc {
        a
    } else if pb <= pc {
        b
    } else {
        c
    }
}

fn ascii_hex(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() / 2);
    let mut high: Option<u8> = None;
    for &b in input {
        let v = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            b'>' => break,
            _ => continue,
        };
        match high.take() {
            Some(h) => out.push(h << 4 | v),
            None => high = Some(v),
        }
    }
    if let Some(h) = high {
        out.push(h << 4);
    }
    out
}

fn ascii85(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() * 4 / 5 + 4);
    let mut group = [0u8; 5];
    let mut n = 0usize;
    let body = input.strip_prefix(b"<~").unwrap_or(input);
    for &b in body {
        match b {
            b'~' => break,
            b'z' if n == 0 => out.extend_from_slice(&[0, 0, 0, 0]),
            b'!'..=b'u' => {
                group[n] = b - b'!';
                n += 1;
                if n == 5 {
                    out.extend_from_slice(&group_value(&group).to_be_bytes());
                    n = 0;
                }
            }
            _ => {}
        }
    }
    if n > 1 {
        for slot in group.iter_mut().skip(n) {
            *slot = 84;
        }
        let bytes = group_value(&group).to_be_bytes();
        out.extend_from_slice(&bytes[..n - 1]);
    }
    out
}

fn group_value(g: &[u8; 5]) -> u32 {
    g.iter().fold(0u32, |acc, &d| {
        acc.wrapping_mul(85).wrapping_add(u32::from(d))
    })
}

fn run_length(input: &[u8], cap: usize) -> Result<Vec<u8>, FilterError> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&len) = input.get(i) {
        i += 1;
        match len {
            128 => break,
            0..=127 => {
                let n = usize::from(len) + 1;
                let end = (i + n).min(input.len());
                out.extend_from_slice(&input[i..end]);
                i = end;
            }
            _ => {
                let Some(&b) = input.get(i) else { break };
                i += 1;
                out.extend(std::iter::repeat_n(b, 257 - usize::from(len)));
            }
        }
        if out.len() > cap {
            return Err(FilterError::TooLarge { limit: cap });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dict(filter: &str) -> Dict {
        Dict(vec![(
            b"Filter".to_vec(),
            Object::Name(filter.as_bytes().to_vec()),
        )])
    }

    fn check(filter: &str, input: &[u8], expect: Result<&[u8], FilterError>) {
        let mut budget = Budget::new(64, 1000);
        let got = decode(&dict(filter), input, &mut budget);
        assert_eq!(got.as_deref().map_err(Clone::clone), expect, "{filter}");
    }

    fn zlib(data: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn filters() {
        check("ASCIIHexDecode", b"48 65 6c6c6f>", Ok(b"Hello"));
        check("ASCII85Decode", b"87cURD]i,\"Ebo7~>", Ok(b"Hello World"));
        check("ASCII85Decode", b"87cURD]i,\"Ebo80~>", Ok(b"Hello World!"));
        check("ASCII85Decode", b"<~z~>", Ok(&[0, 0, 0, 0]));
        check(
            "RunLengthDecode",
            &[2, b'a', b'b', b'c', 254, b'x', 128],
            Ok(b"abcxxx"),
        );
        check("FlateDecode", &zlib(b"BT (hi) Tj ET"), Ok(b"BT (hi) Tj ET"));
        check(
            "FlateDecode",
            &zlib(&[b'x'; 100]),
            Err(FilterError::TooLarge { limit: 64 }),
        );
        check("DCTDecode", b"\xFF\xD8", Err(FilterError::Unsupported));
    }

    #[test]
    fn total_budget_is_shared() {
        let mut budget = Budget::new(64, 100);
        let data = zlib(&[b'a'; 60]);
        assert!(decode(&dict("FlateDecode"), &data, &mut budget).is_ok());
        assert_eq!(
            decode(&dict("FlateDecode"), &data, &mut budget),
            Err(FilterError::TooLarge { limit: 40 })
        );
    }

    #[test]
    fn png_up_predictor() {
        let parms = Dict(vec![
            (b"Predictor".to_vec(), Object::Int(12)),
            (b"Columns".to_vec(), Object::Int(3)),
        ]);
        let data = vec![2, 1, 2, 3, 2, 1, 1, 1];
        assert_eq!(
            predict(data, Some(&parms), 100).unwrap(),
            vec![1, 2, 3, 2, 3, 4]
        );
    }
}
