use super::*;
use crate::block::{CallSink, WHOLE_ROWS};
use crate::value::table_to_rows;
use tokio_util::sync::CancellationToken;

type Read = (Vec<crate::value::Row>, Vec<String>, &'static str);

/// `bytes` read as `csv.read` reads a file, decoded in blocks and parsed in pieces of the
/// given sizes.
fn read(
    bytes: &[u8],
    encoding: &str,
    shape: CsvShape,
    sizes: PieceSizes,
) -> Result<Read, BlockError> {
    read_reporting(bytes, encoding, shape, sizes, &CallSink::none())
}

/// [`read`], its progress reported to `calls`.
fn read_reporting(
    bytes: &[u8],
    encoding: &str,
    shape: CsvShape,
    sizes: PieceSizes,
    calls: &CallSink,
) -> Result<Read, BlockError> {
    with_file(bytes, calls, |ctx| {
        let read = read_csv_table(ctx, "t.csv", encoding, shape, sizes, None, None)?;
        Ok((
            table_to_rows(&read.table)?,
            column_names(&read.table),
            read.encoding,
        ))
    })
}

/// `f` on a block context whose workspace holds `bytes` as `t.csv`.
fn with_file<T>(bytes: &[u8], calls: &CallSink, f: impl FnOnce(&BlockContext<'_>) -> T) -> T {
    let dir = tempfile::tempdir().unwrap();
    // Test setup only; product writes go through keiri-fs.
    #[allow(clippy::disallowed_methods)]
    std::fs::write(dir.path().join("t.csv"), bytes).unwrap();
    let cancel = CancellationToken::new();
    let ctx = BlockContext {
        node_id: "read",
        base_dir: dir.path(),
        paths: &keiri_fs::PathPolicy::trusted(dir.path()),
        out_dir: dir.path(),
        cancel: &cancel,
        write: false,
        answer: None,
        allow_hosts: &[],
        limits: &Default::default(),
        now: chrono::Utc::now(),
        llm: None,
        calls,
        lang: keiri_plan::Lang::Ja,
        columns_used: None,
        outputs_taken: None,
        pieces: None,
    };
    f(&ctx)
}

/// `bytes` read by [`read_without_blank_rows`] with `wanted` columns.
fn read_with(
    bytes: &[u8],
    shape: CsvShape,
    sizes: PieceSizes,
    wanted: Option<&[String]>,
) -> Result<(CsvRead, usize), BlockError> {
    let wanted = wanted.map(|names| Wanted {
        names,
        all_there: true,
    });
    with_file(bytes, &CallSink::none(), |ctx| {
        read_without_blank_rows(wanted, None, |w, p| {
            read_csv_table(ctx, "t.csv", "auto", shape, sizes, w, p)
        })
    })
}

/// The whole test file in one block and one piece.
const WHOLE: PieceSizes = PieceSizes {
    block: 4 << 20,
    piece: usize::MAX,
};

fn shape(header: bool, skip_rows: usize) -> CsvShape {
    CsvShape {
        delimiter: keiri_docs::csv::Delimiter::Byte(b','),
        header,
        skip_rows,
    }
}

fn sjis(text: &str) -> Vec<u8> {
    encoding_rs::SHIFT_JIS.encode(text).0.into_owned()
}

/// Quoted line ends, commas and doubled quotes, CRLF, multi-byte text split across blocks,
/// no line end at the end of the file.
const JOURNAL: &str = "伝票日付,勘定科目,摘要\r\n令和6年4月1日,旅費交通費,\"新幹線\r\n東京－大阪\"\r\n2024/04/02,会議費,\"打合せ, \"\"A社\"\"\"\r\nR6.4.3,通信費,電話";

#[test]
fn a_csv_read_in_small_pieces_gives_the_rows_written_in_it() {
    let expected = serde_json::json!([
        {"伝票日付": "令和6年4月1日", "勘定科目": "旅費交通費", "摘要": "新幹線\r\n東京－大阪"},
        {"伝票日付": "2024/04/02", "勘定科目": "会議費", "摘要": "打合せ, \"A社\""},
        {"伝票日付": "R6.4.3", "勘定科目": "通信費", "摘要": "電話"}
    ]);
    for block in [1, 2, 3, 7, 64] {
        for piece in [1, 10, 40] {
            let sizes = PieceSizes { block, piece };
            let (rows, columns, used) =
                read(&sjis(JOURNAL), "auto", shape(true, 0), sizes).unwrap();
            let rows =
                serde_json::Value::Array(rows.into_iter().map(serde_json::Value::Object).collect());
            assert_eq!(rows, expected, "block {block}, piece {piece}");
            assert_eq!(columns, ["伝票日付", "勘定科目", "摘要"]);
            assert_eq!(used, "cp932");
        }
    }
}

/// Inch marks in unquoted fields (a parts list), as design time reads them (keiri-docs'
/// `records`: text, like Excel and pandas), at every cut: Polars alone fails the file.
#[test]
fn a_quote_inside_an_unquoted_field_is_read_as_design_time_reads_it() {
    let text = "品番,品名,金額\r\nP1,ボルト 1/2\" 特注,\"1,100\"\r\nP2,\"座金 \"\"丸\"\"\",\"2,200\"\r\nP3,板 5\" x 3\",330\r\nP4,\"ナット\r\nM8\"x,\"440\"\r\n";
    let expected: Vec<Vec<String>> = keiri_docs::csv::records(text, b',').skip(1).collect();
    assert_eq!(expected[0], ["P1", "ボルト 1/2\" 特注", "1,100"]);
    assert_eq!(expected[3], ["P4", "ナット\r\nM8x", "440"]);
    for (block, piece) in [(1, 1), (3, 10), (7, 40), (64, 64), (4096, usize::MAX)] {
        let (rows, _, _) = read(
            &sjis(text),
            "auto",
            shape(true, 0),
            PieceSizes { block, piece },
        )
        .unwrap_or_else(|e| panic!("block {block}, piece {piece}: {e:?}"));
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| {
                r.values()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .collect();
        assert_eq!(rows, expected, "block {block}, piece {piece}");
    }
}

#[test]
fn reading_reports_the_bytes_read_of_the_file() {
    let bytes = sjis(JOURNAL);
    let (calls, _notes) = CallSink::channel();
    let small = PieceSizes {
        block: 7,
        piece: 16,
    };
    read_reporting(&bytes, "shift_jis", shape(true, 0), small, &calls).unwrap();
    let size = bytes.len() as u64;
    assert_eq!(
        calls.latest_progress(),
        Some(crate::block::Progress {
            done: size,
            total: Some(size),
            unit: ProgressUnit::Bytes,
        })
    );
}

/// `columns` with a header reads only those columns (after the first piece), in the order
/// asked, with blank records dropped as a whole read drops them. Expected rows by hand.
#[test]
fn columns_are_a_projection_with_the_rows_a_whole_read_keeps() {
    let text = "伝票日付,伝票番号,勘定科目,摘要,金額,メモ\r\n\
                    2024/04/01,1,旅費交通費,\"新幹線, 東京\r\n往復\",\"12,800\",\r\n\
                    ,,,,,\r\n\
                    \r\n\
                    R6.4.2,2,会議費,打合せ,△3000,済\r\n\
                    2024/04/03,3,通信費,電話代,\"5,500\",\r\n\
                    \u{3000},,,,,\r\n\
                    2024/04/04,4,消耗品費,\"\"\"A4\"\" 用紙\",\"￥1,200\",\r\n\
                    \r\n\r\n";
    let bytes = sjis(text);
    let wanted = ["金額".to_string(), "勘定科目".to_string()];
    let expected = json!([
        {"金額": "12,800", "勘定科目": "旅費交通費"},
        {"金額": "△3000", "勘定科目": "会議費"},
        {"金額": "5,500", "勘定科目": "通信費"},
        {"金額": "￥1,200", "勘定科目": "消耗品費"},
    ]);
    for (block, piece) in [(4 << 20, usize::MAX), (7, 1), (16, 40), (64, 100)] {
        let sizes = PieceSizes { block, piece };
        let (read, blank) = read_with(&bytes, shape(true, 0), sizes, Some(&wanted)).unwrap();
        // Blank records: `,,,,,`, the full-width space one and the three empty lines.
        assert_eq!(blank, 5, "piece {piece}");
        assert_eq!(read.table.height(), read.records, "piece {piece}");
        let table = read.table.select(["金額", "勘定科目"]).unwrap();
        assert_eq!(json!(table_to_rows(&table).unwrap()), expected, "{piece}");
        assert_eq!(
            read.table.width(),
            2,
            "piece {piece}: only the wanted columns"
        );
        assert_eq!(
            read.unread.as_deref(),
            Some(&["伝票日付", "伝票番号", "摘要", "メモ"].map(String::from)[..]),
            "piece {piece}"
        );
    }
    // A row with a value only in a column left out (メモ) is not blank: it is kept with
    // its wanted columns empty, as a read of every column keeps it.
    let memo_only = sjis(&text.replacen(",,,,,\r\n", ",,,,,確認中\r\n", 1));
    for piece in [1, 40, usize::MAX] {
        let sizes = PieceSizes { block: 16, piece };
        let (read, _) = read_with(&memo_only, shape(true, 0), sizes, Some(&wanted)).unwrap();
        let table = read.table.select(["金額", "勘定科目"]).unwrap();
        let rows = json!(table_to_rows(&table).unwrap());
        assert_eq!(
            rows[1],
            json!({"金額": "", "勘定科目": ""}),
            "piece {piece}"
        );
        assert_eq!(rows.as_array().unwrap().len(), 5, "piece {piece}: {rows}");
    }
    // A name the header lacks reads every column (the block then reports it).
    let (read, _) = read_with(
        &bytes,
        shape(true, 0),
        PieceSizes {
            block: 16,
            piece: 40,
        },
        Some(&["残高".to_string()]),
    )
    .unwrap();
    assert!(read.unread.is_none());
    assert_eq!(read.table.width(), 6);
    // The engine's list may name columns a later block adds: those are passed over, and a
    // list naming none of the file's columns reads them all.
    let first = with_file(&bytes, &CallSink::none(), |ctx| {
        read_csv_table(ctx, "t.csv", "auto", shape(true, 0), WHOLE, None, None).unwrap()
    });
    let used = ["year_month".to_string(), "金額".to_string()];
    let lenient = |names| Wanted {
        names,
        all_there: false,
    };
    let p = Projection::of(&first.table, &lenient(&used)).unwrap();
    assert_eq!(*p.indices, [4]);
    assert!(Projection::of(&first.table, &lenient(&used[..1])).is_none());
    let strict = Wanted {
        names: &used,
        all_there: true,
    };
    assert!(Projection::of(&first.table, &strict).is_none());
}

#[test]
fn a_csv_read_in_pieces_is_the_table_read_in_one_piece() {
    let with_bom = |t: &str| [b"\xEF\xBB\xBF".as_slice(), t.as_bytes()].concat();
    let cases: Vec<(&str, Vec<u8>, CsvShape)> = vec![
        ("journal, Shift_JIS", sjis(JOURNAL), shape(true, 0)),
        ("journal, UTF-8 with BOM", with_bom(JOURNAL), shape(true, 0)),
        (
            "title lines skipped",
            sjis(
                "売上明細\r\n出力日 2024/05/01\r\n得意先,金額\r\nあさひ商事,1000\r\nみなと物産,2000\r\n",
            ),
            shape(true, 2),
        ),
        (
            "no header",
            "A001,山田,300000\nA002,佐藤,280000\nA003,鈴木,250000\n"
                .as_bytes()
                .to_vec(),
            shape(false, 0),
        ),
        (
            "ragged lines",
            "科目,金額,部門\n旅費,100\n会議費,200,営業,,\n通信費,300,総務\n"
                .as_bytes()
                .to_vec(),
            shape(true, 0),
        ),
        (
            "blank lines",
            "科目,金額\n旅費,100\n\n会議費,200\n\r\n通信費,300\n\n\n"
                .as_bytes()
                .to_vec(),
            shape(true, 0),
        ),
    ];
    for (name, bytes, shape) in cases {
        let whole = read(&bytes, "auto", shape, WHOLE).unwrap();
        assert!(!whole.0.is_empty(), "{name}: no rows");
        for block in [1, 2, 5, 16] {
            for piece in [1, 9, 30] {
                let pieces = read(&bytes, "auto", shape, PieceSizes { block, piece }).unwrap();
                assert_eq!(pieces, whole, "{name}: block {block}, piece {piece}");
            }
        }
    }
}

#[test]
fn a_file_utf8_in_its_first_mib_and_shift_jis_later_is_read_as_cp932() {
    let mut text = String::from("番号,科目\r\n");
    let mut i = 0;
    while text.len() < (1 << 20) + 1000 {
        text.push_str(&format!("{i},a\r\n"));
        i += 1;
    }
    text.push_str("最終,旅費交通費\r\n");
    let (rows, _, used) = read(&sjis(&text), "auto", shape(true, 0), WHOLE).unwrap();
    assert_eq!(used, "cp932");
    assert_eq!(rows.len(), i + 1);
    assert_eq!(rows[i]["科目"], serde_json::json!("旅費交通費"));
}

/// A row with more values than the header would put them under the wrong columns: an
/// error naming the row and its text, in whichever piece it falls; blank extra values
/// (a padded line) are read without them.
#[test]
fn a_row_with_more_values_than_the_header_is_refused() {
    let text = "伝票番号,科目,金額,部門\r\n1,旅費,100,営業\r\n2,会議費,200,総務,\r\n\r\n3,通信費,1,000,総務\r\n4,消耗品費,50,営業\r\n";
    for block in [1, 4, 64] {
        for piece in [1, 20, usize::MAX] {
            let sizes = PieceSizes { block, piece };
            let e = read(&sjis(text), "auto", shape(true, 0), sizes).unwrap_err();
            assert_eq!(
                e.code,
                ErrorCode::InputInvalid,
                "block {block}, piece {piece}"
            );
            assert!(
                e.message_ja
                    .contains("データ 3 行目に値が 5 個あり、見出しの 4 列より多い")
                    && e.message_ja.contains("3,通信費,1,000,総務"),
                "block {block}, piece {piece}: {}",
                e.message_ja
            );
        }
    }
    // Without a header the first row sets the width.
    let e = read(b"a,1\nb,2,3\n", "auto", shape(false, 0), WHOLE).unwrap_err();
    assert!(
        e.message_en.contains("data row 2 of the CSV has 3 values"),
        "{}",
        e.message_en
    );
    // Padding is not data: the row is read under its columns.
    let (rows, columns, _) = read(
        "科目,金額\n旅費,100,,\n".as_bytes(),
        "auto",
        shape(true, 0),
        WHOLE,
    )
    .unwrap();
    assert_eq!(columns, ["科目", "金額"]);
    assert_eq!(rows[0]["金額"], serde_json::json!("100"));
}

/// A record is dropped only when every field is blank (empty, whitespace, the
/// full-width space, missing): a row whose first fields are blank and a later one not
/// (a 摘要 continued on the next line) stays, in its place.
#[test]
fn a_record_is_dropped_only_when_every_field_is_blank() {
    let column = |name: &str, values: &[Option<&str>]| Column::new(name.into(), values);
    let mut df = DataFrame::new_infer_height(vec![
        column(
            "日付",
            &[
                Some("2024/04/01"),
                Some(" "),
                None,
                Some("\u{3000}"),
                Some(""),
            ],
        ),
        column("金額", &[Some("100"), None, Some(""), Some(" "), Some("")]),
        column(
            "摘要",
            &[Some("会議費"), Some("続き"), Some(" "), None, Some("")],
        ),
    ])
    .unwrap();
    assert_eq!(drop_blank_rows(&mut df).unwrap(), 3);
    let kept: Vec<Option<&str>> = df.column("摘要").unwrap().str().unwrap().iter().collect();
    assert_eq!(kept, [Some("会議費"), Some("続き")]);
    assert_eq!(df.height(), 2);
}

#[test]
fn a_file_of_blank_lines_is_an_empty_table() {
    let (rows, columns, _) = read(b"\r\n\r\n", "auto", shape(true, 0), WHOLE).unwrap();
    assert!(rows.is_empty());
    assert!(columns.is_empty());
}

/// Keeps what a read hands over, and stops after `stop_after` pieces when given.
#[derive(Debug, Default)]
struct Taken {
    pieces: std::sync::Mutex<Vec<DataFrame>>,
    restarts: std::sync::atomic::AtomicUsize,
    refused: std::sync::atomic::AtomicBool,
    stop_after: Option<usize>,
}

impl Pieces for Taken {
    fn restart(&self) {
        self.pieces.lock().unwrap().clear();
        self.restarts
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    fn take(&self, _: &BlockContext<'_>, rows: DataFrame) -> Result<bool, BlockError> {
        let mut pieces = self.pieces.lock().unwrap();
        pieces.push(rows);
        Ok(self.stop_after.is_none_or(|n| pieces.len() < n))
    }
    fn refuse(&self) {
        self.refused
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
    fn stands(&self) -> bool {
        true
    }
}

/// `bytes` read with `wanted` columns, handing its rows to `taken`.
fn read_handing(
    bytes: &[u8],
    sizes: PieceSizes,
    wanted: &[String],
    taken: &Taken,
) -> (CsvRead, usize) {
    let wanted = Some(Wanted {
        names: wanted,
        all_there: false,
    });
    with_file(bytes, &CallSink::none(), |ctx| {
        read_without_blank_rows(wanted, Some(taken), |w, p| {
            read_csv_table(ctx, "t.csv", "auto", shape(true, 0), sizes, w, p)
        })
    })
    .unwrap()
}

#[test]
fn the_pieces_a_read_hands_over_are_the_table_a_whole_read_builds() {
    // A padded header name, blank records (`,,,` and empty lines), quoted line breaks, CP932,
    // and a trailing blank line.
    let mut text = String::from("日付,科目,金額, メモ \r\n");
    for i in 0..400 {
        match i % 7 {
            3 => text.push_str(",,,\r\n"),
            5 => text.push_str("\r\n"),
            _ => text.push_str(&format!(
                "2024/04/{:02},科目{i},\"{},000\",\"行\r\n{i}\"\r\n",
                i % 28 + 1,
                i
            )),
        }
    }
    text.push_str("\r\n");
    let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(&text);
    let wanted = ["日付".to_string(), "金額".to_string()];
    let small = PieceSizes {
        block: 64,
        piece: 700,
    };
    let whole = read_with(&bytes, shape(true, 0), WHOLE, Some(&wanted)).unwrap();
    let taken = Taken::default();
    let (read, blank) = read_handing(&bytes, small, &wanted, &taken);
    let pieces = taken.pieces.lock().unwrap();
    assert!(pieces.len() > 5, "{} pieces", pieces.len());
    let mut handed = pieces[0].clone();
    for piece in &pieces[1..] {
        handed.vstack_mut(piece).unwrap();
    }
    let mut expected = whole.0.table.clone();
    trim_names(&mut expected).unwrap();
    assert_eq!(handed, expected);
    assert_eq!(blank, whole.1);
    assert_eq!(read.handed.as_ref().unwrap().rows, expected.height());
    assert_eq!(read.table, expected.head(Some(WHOLE_ROWS + 1)));
    assert!(!taken.refused.load(std::sync::atomic::Ordering::SeqCst));

    // A pass that stops: the read is made again whole (and the pass told it is void).
    let stopping = Taken {
        stop_after: Some(2),
        ..Taken::default()
    };
    let (read, blank) = read_handing(&bytes, small, &wanted, &stopping);
    assert!(read.handed.is_none());
    assert!(stopping.refused.load(std::sync::atomic::Ordering::SeqCst));
    let mut again = read.table.clone();
    trim_names(&mut again).unwrap();
    assert_eq!((again, blank), (expected, whole.1));
}
