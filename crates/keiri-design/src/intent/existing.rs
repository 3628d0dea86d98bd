//! An existing workbook the instruction asks the result to go into (「月次報告.xlsxに『重複一覧』
//! シートを追加して書き込む」, "add a sheet to close.xlsx"): which workbook, and which sheet.
//!
//! The workbook is a file name ending in `.xlsx` or `.xlsm` that the instruction writes, with
//! words that say the result goes into it (シートを追加, に書き込む, add a sheet, into the
//! workbook…); without such words a named workbook is a file the job reads. Among several, the
//! one named last before those words is taken. An attached file of that name is used by its
//! path; otherwise the name is used as written (relative to the workspace).

use std::sync::LazyLock;

use regex::Regex;
use unicode_normalization::UnicodeNormalization;

/// The workbook (and sheet) the instruction asks the result rows to go into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Existing {
    /// The workbook's path: an attached file's, else the name as the instruction writes it.
    pub path: String,
    /// Its file name (what the copy with the new sheet is saved as).
    pub name: String,
    /// The sheet the instruction names (「重複一覧」シート), if any.
    pub sheet: Option<String>,
}

/// Words (after NFKC and lowercasing) that say the result goes into a workbook.
const INTO: &[&str] = &[
    "シートに",
    "シートを追加",
    "シートとして",
    "シートへ",
    "に追加",
    "へ追加",
    "に追記",
    "へ追記",
    "に書き込",
    "へ書き込",
    "に貼り付",
    "add a sheet",
    "add the sheet",
    "as a sheet",
    "as a new sheet",
    "into the workbook",
    "into workbook",
    "existing workbook",
    "to the workbook",
];

/// Particles that end the words before a workbook's name in running Japanese text.
const PARTICLES: &[char] = &['を', 'は', 'が', 'に', 'へ', 'で'];

/// `None` only if a pattern did not compile, which this module's tests would show.
static WORKBOOK: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?i)[^\s「」『』（）()\[\]、。,，:：;；/\\"'“”‘’]+\.xls[xm]"#).ok()
});

static SHEET: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r#"(?i)[「『"“]([^」』"”]{1,31})[」』"”]\s*(?:シート|sheet)|(?:シート|sheet)\s*[「『"“]([^」』"”]{1,31})[」』"”]"#,
    )
    .ok()
});

/// The workbook `instruction` asks the result to go into, looked up among `files` (the
/// attached files' paths) by name; `None` when it names none or does not say "into".
pub fn existing_workbook(instruction: &str, files: &[&str]) -> Option<Existing> {
    let text: String = instruction.nfkc().collect();
    let lower = text.to_lowercase();
    let cue = INTO.iter().filter_map(|w| lower.find(w)).min()?;
    let names: Vec<regex::Match<'_>> = WORKBOOK.as_ref()?.find_iter(&text).collect();
    // `lower` and `text` differ in length only where lowercasing changes a character's
    // UTF-8 length, which ASCII and Japanese never do; compare positions in `lower` units.
    let run = names
        .iter()
        .rev()
        .find(|m| m.start() < cue)
        .or_else(|| names.first())?
        .as_str();
    // Japanese runs words together: 「結果を報告用.xlsxに」 matches 結果を報告用.xlsx. An
    // attached file whose name ends the run is the workbook; else the name starts after the
    // run's last particle.
    let file_name = |path: &str| -> String {
        let file = path.rsplit(['/', '\\']).next().unwrap_or(path);
        file.nfkc().collect::<String>()
    };
    let attached = files
        .iter()
        .filter(|p| {
            let name = file_name(p).to_lowercase();
            !name.is_empty() && run.to_lowercase().ends_with(&name)
        })
        .max_by_key(|p| file_name(p).chars().count());
    let path = match attached {
        Some(p) => (*p).to_string(),
        None => run.rsplit(PARTICLES).next().unwrap_or(run).to_string(),
    };
    let sheet = SHEET
        .as_ref()
        .and_then(|sheet| sheet.captures(&text))
        .and_then(|c| c.get(1).or_else(|| c.get(2)))
        .map(|m| m.as_str().trim().to_string())
        .filter(|s| !s.is_empty());
    Some(Existing {
        name: path.rsplit(['/', '\\']).next().unwrap_or(&path).to_string(),
        path,
        sheet,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workbook_named_with_into_words_is_the_one_the_result_goes_into() {
        let files = ["inputs/請求書一覧.csv", "inputs/月次報告.xlsx"];
        assert_eq!(
            existing_workbook(
                "請求書CSVから重複を検出して、月次報告.xlsxに『重複一覧』シートを追加して書き込む",
                &files
            ),
            Some(Existing {
                path: "inputs/月次報告.xlsx".into(),
                name: "月次報告.xlsx".into(),
                sheet: Some("重複一覧".into()),
            })
        );
        // Full-width letters, no sheet named, a workbook nobody attached.
        assert_eq!(
            existing_workbook("結果を報告用.ＸＬＳＸに追加してください", &files),
            Some(Existing {
                path: "報告用.XLSX".into(),
                name: "報告用.XLSX".into(),
                sheet: None,
            })
        );
        assert_eq!(
            existing_workbook(
                "find duplicate invoices and add a sheet \"Duplicates\" to close.xlsx",
                &files
            ),
            Some(Existing {
                path: "close.xlsx".into(),
                name: "close.xlsx".into(),
                sheet: Some("Duplicates".into()),
            })
        );
    }

    #[test]
    fn a_workbook_the_job_reads_is_not_one_to_write_into() {
        let files = ["inputs/給与_3月.xlsx"];
        // No words that say "into": the named workbooks are what the job reads.
        assert_eq!(
            existing_workbook(
                "給与_3月.xlsxと給与_2月.xlsxを比較して異常を見つける",
                &files
            ),
            None
        );
        // Into words but no workbook named: a new workbook, as before.
        assert_eq!(
            existing_workbook("結果をExcelのシートに書き込む", &files),
            None
        );
        // Two named: the one named last before the words that say "into".
        assert_eq!(
            existing_workbook(
                "給与_3月.xlsxを前月と比べ、差異を確認表.xlsxにシートとして追加",
                &files
            )
            .map(|e| e.path),
            Some("確認表.xlsx".into())
        );
    }
}
