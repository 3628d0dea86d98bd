//! `csv.read`'s file, read and decoded ahead of its parse: while Polars parses a piece, a
//! thread of its own reads and decodes the blocks after it.

use std::io::Read;

/// Why a block could not be given.
pub(super) enum DecodeError {
    /// The bytes are not in the encoding: `csv.read` tries the next one.
    Undecodable,
    /// The file could not be read.
    Read(std::io::Error),
}

/// Decoded blocks waiting for the parse at most: a few megabytes of text.
const DECODED_AHEAD: usize = 4;

/// Reads a file block by block and decodes each.
pub(super) struct Decoding<'f, R> {
    pub file: &'f mut R,
    pub decoder: keiri_docs::text::StreamDecoder,
    pub block: Vec<u8>,
}

/// One block of the file decoded: its text, how many of the file's bytes it came from, and
/// whether it was the last (the file's end, `bytes` 0).
pub(super) struct Decoded {
    pub text: String,
    pub bytes: usize,
    pub last: bool,
}

impl<R: Read> Decoding<'_, R> {
    fn next(&mut self) -> Result<Decoded, DecodeError> {
        let n =
            keiri_docs::text::read_full(self.file, &mut self.block).map_err(DecodeError::Read)?;
        let last = n == 0;
        let mut text = String::with_capacity(n + n / 2);
        self.decoder
            .decode(&self.block[..n], last, &mut text)
            .map_err(|_| DecodeError::Undecodable)?;
        Ok(Decoded {
            text,
            bytes: n,
            last,
        })
    }
}

/// The decoded blocks of a file, read and decoded ahead on their own thread (`keiri-decode`)
/// while the pieces before them are parsed: decoding CP932 and Polars' parse, each about half
/// of a read, then overlap instead of taking turns. The thread stops at the file's end, at an
/// error (sent as the next block), or when the parse stops taking blocks (a failed or
/// cancelled read drops them). When no thread can be started, the blocks are read here, as
/// they were before.
pub(super) enum DecodedBlocks<'f, R> {
    Ahead(std::sync::mpsc::Receiver<Result<Decoded, DecodeError>>),
    Here(Decoding<'f, R>),
}

impl<'f, R: Read + Send> DecodedBlocks<'f, R> {
    pub fn start<'s>(
        scope: &'s std::thread::Scope<'s, '_>,
        decoding: Decoding<'f, R>,
    ) -> DecodedBlocks<'f, R>
    where
        'f: 's,
    {
        use std::sync::mpsc::sync_channel;
        // The decoding is handed over once the thread runs, so that it stays here if none can.
        let (hand, handed) = sync_channel::<Decoding<'f, R>>(1);
        let (ahead, blocks) = sync_channel(DECODED_AHEAD);
        let spawned = std::thread::Builder::new()
            .name("keiri-decode".into())
            .spawn_scoped(scope, move || {
                let Ok(mut decoding) = handed.recv() else {
                    return;
                };
                loop {
                    let next = decoding.next();
                    let end = !matches!(next, Ok(Decoded { last: false, .. }));
                    if ahead.send(next).is_err() || end {
                        return;
                    }
                }
            });
        match spawned {
            Ok(_) => match hand.send(decoding) {
                Ok(()) => DecodedBlocks::Ahead(blocks),
                Err(back) => DecodedBlocks::Here(back.0),
            },
            Err(_) => DecodedBlocks::Here(decoding),
        }
    }
}

impl<R: Read> DecodedBlocks<'_, R> {
    pub fn next(&mut self) -> Result<Decoded, DecodeError> {
        match self {
            DecodedBlocks::Ahead(blocks) => blocks.recv().unwrap_or_else(|_| {
                Err(DecodeError::Read(std::io::Error::other(
                    "the thread reading the file stopped",
                )))
            }),
            DecodedBlocks::Here(decoding) => decoding.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of `a,b` for ever.
    struct Endless;

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len() / 5 * 5;
            for line in buf[..n].chunks_mut(5) {
                line.copy_from_slice(b"a,b\r\n");
            }
            Ok(n)
        }
    }

    /// Two lines, then a read error.
    struct Broken(bool);

    impl Read for Broken {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if std::mem::replace(&mut self.0, true) {
                return Err(std::io::Error::other("the disk went away"));
            }
            let lines = b"a,b\r\n1,2\r\n";
            buf[..lines.len()].copy_from_slice(lines);
            Ok(lines.len())
        }
    }

    fn decoding<R>(file: &mut R) -> Decoding<'_, R> {
        Decoding {
            file,
            decoder: keiri_docs::text::StreamDecoder::new(keiri_docs::TextEncoding::Utf8),
            block: vec![0; 64],
        }
    }

    /// The thread decoding ahead stops with the read: a read error is the next block (the
    /// block it broke off is not given in part), and a read that stops taking the blocks of
    /// an endless file returns instead of waiting for a thread that would never finish.
    /// Bounded by a minute, so a thread left running fails the test instead of hanging it.
    #[test]
    fn the_thread_decoding_ahead_stops_with_the_read() {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut broken_file = Broken(false);
            let broken = std::thread::scope(|scope| {
                let file = &mut broken_file;
                let mut blocks = DecodedBlocks::start(scope, decoding(file));
                let ahead = matches!(blocks, DecodedBlocks::Ahead(_));
                let error = match blocks.next() {
                    Err(DecodeError::Read(e)) => e.to_string(),
                    Err(DecodeError::Undecodable) => "undecodable".into(),
                    Ok(d) => format!("a block: {:?}", d.text),
                };
                (ahead, error)
            });
            let mut endless_file = Endless;
            let endless = std::thread::scope(|scope| {
                let file = &mut endless_file;
                let mut blocks = DecodedBlocks::start(scope, decoding(file));
                (0..3)
                    .filter_map(|_| blocks.next().ok())
                    .map(|d| (d.bytes, d.text.matches("a,b\r\n").count(), d.last))
                    .collect::<Vec<_>>()
            });
            let _ = done.send((broken, endless));
        });
        let (broken, endless) = finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("both reads returned");
        assert_eq!(broken, (true, "the disk went away".to_string()));
        // Blocks of 64 bytes hold twelve whole lines (60 bytes) of the endless file.
        assert_eq!(endless, vec![(60, 12, false); 3]);
    }

    /// Bytes that are not in the encoding end the blocks with `Undecodable`.
    #[test]
    fn bytes_not_in_the_encoding_are_undecodable() {
        let mut file: &[u8] = b"a,b\r\n\xff\xfe,1\r\n";
        let mut here = DecodedBlocks::Here(decoding(&mut file));
        assert!(matches!(here.next(), Err(DecodeError::Undecodable)));
    }
}
