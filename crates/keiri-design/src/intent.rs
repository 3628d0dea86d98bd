//! The parts of an instruction the offline compose path recognises (an Excel file, a report,
//! a notification) and whether a composed plan serves each: compose adds a template that
//! serves a missing part, or says which part it could not serve, instead of dropping it.

use keiri_plan::{
    ComposeOptions, Composition, Lang, Node, Plan, TemplateSpec, Templates, ValueType, compose,
};
use unicode_normalization::UnicodeNormalization;

mod existing;
pub use existing::{Existing, existing_workbook};

/// One part of an instruction: the words that ask for it and the blocks that deliver it.
pub struct Part {
    pub id: &'static str,
    pub label_ja: &'static str,
    pub label_en: &'static str,
    words: &'static [&'static str],
    blocks: &'static [&'static str],
}

/// The parts compose recognises. Words are matched after NFKC and lowercasing, so `ＥＸＣＥＬ`
/// and `Excel` are the same word.
pub const PARTS: &[Part] = &[
    Part {
        id: "excel",
        label_ja: "Excel ファイルへの出力",
        label_en: "an Excel file",
        words: &["excel", "エクセル", "xlsx", "ワークブック", "workbook"],
        blocks: &["excel.write_table", "excel.patch_workbook"],
    },
    // An export the instruction asks for as CSV: the words say output, since CSV alone is
    // mostly the file the job reads (請求書CSVから…).
    Part {
        id: "csv",
        label_ja: "CSV ファイルへの出力",
        label_en: "a CSV file",
        words: &[
            "csvで出力",
            "csvに出力",
            "csvファイルに出力",
            "csvで書き出",
            "csvに書き出",
            "csvファイルに書き出",
            "csvで保存",
            "csvに保存",
            "csvで出し",
            "csvにして",
            "csvでエクスポート",
            "csvにエクスポート",
            "export to csv",
            "export as csv",
            "as a csv",
            "to a csv",
            "csv export",
            "csv output",
        ],
        blocks: &["csv.write", "journal.export"],
    },
    // A person's approval before the result is used: the words ask for one to be given, not
    // for rows already approved (承認済みの買掛金 is the payables template's input).
    Part {
        id: "approval",
        label_ja: "承認",
        label_en: "an approval",
        words: &[
            "承認を得",
            "承認を受け",
            "承認をもら",
            "承認を取",
            "承認を求め",
            "承認を依頼",
            "承認してから",
            "承認後",
            "承認のうえ",
            "承認の上",
            "承認を経",
            "上長の承認",
            "上司の承認",
            "承認ステップ",
            "承認フロー",
            "決裁を",
            "決裁後",
            "稟議",
            "get approval",
            "after approval",
            "approval before",
            "approve before",
            "approved by a manager",
            "approval step",
            "sign-off",
            "sign off",
        ],
        blocks: &["control.approval", "ui.confirmation", "ui.table_review"],
    },
    Part {
        id: "report",
        label_ja: "レポート（報告書）",
        label_en: "a report",
        words: &["レポート", "報告書", "報告", "report"],
        blocks: &[
            "excel.write_table",
            "excel.patch_workbook",
            "report.markdown",
            "report.summary",
            "csv.write",
        ],
    },
    Part {
        id: "notify",
        label_ja: "担当者への通知",
        label_en: "a notification",
        words: &[
            "通知",
            "知らせ",
            "連絡",
            "メール",
            "slack",
            "notify",
            "notification",
        ],
        blocks: &["notify.send"],
    },
];

fn normalized(text: &str) -> String {
    text.nfkc().flat_map(char::to_lowercase).collect()
}

/// Whether `templates` compose, in this order, into one plan (the plan id is only a stand-in:
/// `compose` refuses an empty one).
pub fn composes(templates: &[&TemplateSpec]) -> bool {
    let options = ComposeOptions {
        plan_id: "composes".into(),
        ..ComposeOptions::default()
    };
    compose(templates, &options).is_ok()
}

/// Whether `instruction` names `template`'s job: it contains one of the template's job words
/// (`a+b`: all of `a` and `b`), or, for a template that declares none, one of its tags. A
/// template that only shares a word such as 請求書 or CSV with the instruction is not its job.
pub fn names_job(instruction: &str, template: &TemplateSpec) -> bool {
    !job_matches(&normalized(instruction), template).is_empty()
}

/// One job word found in an instruction: for each of its parts (`a+b` has two), every place
/// the part stands (byte ranges of the normalised instruction); `chars` counts the parts'
/// characters, the measure of how specific the word is.
struct JobMatch {
    parts: Vec<Vec<std::ops::Range<usize>>>,
    chars: usize,
}

/// The job words of `template` that `text` (normalised) contains, all parts present.
fn job_matches(text: &str, template: &TemplateSpec) -> Vec<JobMatch> {
    let words = if template.job_words.is_empty() {
        &template.tags
    } else {
        &template.job_words
    };
    words
        .iter()
        .filter_map(|w| {
            let word = normalized(w);
            let parts: Vec<&str> = word
                .split('+')
                .map(str::trim)
                .filter(|part| !part.is_empty())
                .collect();
            let places: Vec<Vec<std::ops::Range<usize>>> = parts
                .iter()
                .map(|part| {
                    text.match_indices(part)
                        .map(|(at, found)| at..at + found.len())
                        .collect()
                })
                .collect();
            (!parts.is_empty() && places.iter().all(|p: &Vec<_>| !p.is_empty())).then(|| JobMatch {
                parts: places,
                chars: parts.iter().map(|p| p.chars().count()).sum(),
            })
        })
        .collect()
}

/// Whether `template`'s job is named in `instruction` only inside a more specific job word
/// of one of `others`: each of its words found stands, everywhere it stands, within a longer
/// word of another template (「重複」 inside 「重複登録」, "duplicate" inside "duplicate
/// vendors"). The more specific job is then the one the instruction names.
pub fn named_only_inside(
    instruction: &str,
    template: &TemplateSpec,
    others: &[&TemplateSpec],
) -> bool {
    let text = normalized(instruction);
    let own = job_matches(&text, template);
    let theirs: Vec<JobMatch> = others
        .iter()
        .filter(|o| o.id != template.id)
        .flat_map(|o| job_matches(&text, o))
        .collect();
    // A place is inside a longer part of the other word, or is the one place of a part the
    // other word shares with it (重複 of 取引先マスタ+重複): a part standing twice may stand
    // once for each job.
    let within = |places: &[std::ops::Range<usize>], outer: &JobMatch| {
        places.iter().all(|p| {
            outer.parts.iter().any(|part| {
                part.iter().any(|o| {
                    o.start <= p.start && p.end <= o.end && (o.len() > p.len() || part.len() == 1)
                })
            })
        })
    };
    !own.is_empty()
        && own.iter().all(|m| {
            theirs
                .iter()
                .any(|t| t.chars > m.chars && m.parts.iter().all(|places| within(places, t)))
        })
}

/// File names the instruction writes: their stems are names, not words (「月次報告.xlsx」 asks
/// for no report), while their extensions still say what kind of file is meant. `None` only if
/// the pattern did not compile, which the tests of `asked` would show.
static FILE_NAME: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r#"[^\s「」『』（）()\[\]、。,，:：;；/\\"'“”‘’]+(\.(?:xlsx|xlsm|xls|csv|tsv|txt|pdf|zip|docx))"#,
    )
    .ok()
});

/// Names of documents a job reads that hold a part's word: an "expense report" is the claim
/// an employee files (経費精算書), not a report the instruction asks for.
const DOCUMENT_NAMES: &[&str] = &["expense report", "経費レポート"];

/// The parts `instruction` asks for.
pub fn asked(instruction: &str) -> Vec<&'static Part> {
    let text = normalized(instruction);
    let mut text = match FILE_NAME.as_ref() {
        Some(names) => names.replace_all(&text, "$1").into_owned(),
        None => text,
    };
    for name in DOCUMENT_NAMES {
        text = text.replace(name, " ");
    }
    PARTS
        .iter()
        .filter(|p| p.words.iter().any(|w| text.contains(w)))
        .collect()
}

fn serves(part: &Part, blocks: &[&str]) -> bool {
    part.blocks.iter().any(|b| blocks.contains(b))
}

fn plan_blocks(plan: &Plan) -> Vec<&str> {
    plan.graph
        .iter()
        .filter_map(|n| n.block.as_deref())
        .collect()
}

fn template_blocks(t: &TemplateSpec) -> Vec<&str> {
    t.graph_snippet
        .iter()
        .filter_map(|n| n.block.as_deref())
        .collect()
}

/// The parts of `instruction` a plan of `chosen` does not serve.
pub fn missing(instruction: &str, chosen: &[&TemplateSpec]) -> Vec<&'static Part> {
    let blocks: Vec<&str> = chosen.iter().flat_map(|t| template_blocks(t)).collect();
    asked(instruction)
        .into_iter()
        .filter(|p| !serves(p, &blocks))
        .collect()
}

/// Templates, by id, that serve a missing part other than an Excel file and compose after
/// `chosen`: each added only when the composition still succeeds. Returns the extended list.
/// An Excel file alone is no reason for a report template's notification: the composed plan
/// gets a plain workbook step instead ([`output_steps`]); so does a CSV file.
pub fn complete<'t>(
    instruction: &str,
    chosen: Vec<&'t TemplateSpec>,
    templates: &'t Templates,
) -> Vec<&'t TemplateSpec> {
    let mut chosen = chosen;
    for part in missing(instruction, &chosen) {
        // Steps of their own, not templates ([`output_steps`], [`approval_step`]).
        if matches!(part.id, "excel" | "csv" | "approval") {
            continue;
        }
        let blocks: Vec<&str> = chosen.iter().flat_map(|t| template_blocks(t)).collect();
        if serves(part, &blocks) {
            continue; // a template added for an earlier part serves this one too
        }
        let mut offers: Vec<&TemplateSpec> = templates
            .iter()
            .filter(|t| !chosen.iter().any(|c| c.id == t.id))
            .filter(|t| serves(part, &template_blocks(t)))
            .collect();
        // Reporting templates first: they are made to follow another flow.
        offers.sort_by_key(|t| (t.category != "reporting", t.id.clone()));
        for offer in offers {
            let mut with = chosen.clone();
            with.push(offer);
            if composes(&with) {
                chosen = with;
                break;
            }
        }
    }
    chosen
}

/// The id of the step [`approval_step`] adds.
pub const APPROVAL_STEP: &str = "approval";

/// The composition's result: the last template (of `templates`) with a table export, and that
/// export (its first).
fn result_export<'c, 't>(
    composition: &'c Composition,
    templates: &[&'t TemplateSpec],
) -> Option<(&'t TemplateSpec, &'c keiri_plan::PublishedExport)> {
    templates.iter().rev().find_map(|t| {
        composition
            .exports
            .iter()
            .find(|e| e.template == t.id && e.ty.types() == [ValueType::Array])
            .map(|e| (*t, e))
    })
}

/// A person's approval of the composition's result rows, for an instruction that asks for one
/// (上長の承認を得てから…, get approval before…) when no chosen template asks it: a
/// `ui.confirmation` step showing the rows, whose answer (who, when) the run records. The steps
/// [`output_steps`] adds run only once it is given (`when: approval.approved`), so a refusal
/// writes nothing. `None` when not asked, already served, or no template exports a table.
pub fn approval_step(
    instruction: &str,
    composition: &Composition,
    templates: &[&TemplateSpec],
) -> Option<Node> {
    let (template, export) = result_export(composition, templates)?;
    let blocks = plan_blocks(&composition.plan);
    asked(instruction)
        .into_iter()
        .find(|p| p.id == "approval" && !serves(p, &blocks))?;
    serde_json::from_value(serde_json::json!({
        "id": APPROVAL_STEP,
        "description": format!("{}の結果（{}）を確認して承認する", template.title, export.name),
        "block": "ui.confirmation",
        "in": {
            "message": format!("「{}」の結果（{}）を確認してください。承認すると次の手順に進み、却下すると何も出力しません", template.title, export.name),
            "details": export.reference,
            "confirm_label": "承認する",
            "cancel_label": "却下する",
        },
        "out": {"approved": "approved", "comment": "comment"},
    }))
    .ok()
}

/// The note for the step [`approval_step`] added.
pub fn approval_step_note(lang: Lang, gates: &[String]) -> String {
    let id = APPROVAL_STEP;
    let gated = gates.join(", ");
    match (lang, gates.is_empty()) {
        (Lang::Ja, true) => format!(
            "指示にある「承認」のため、結果を見せて承認を求める手順 {id} を加えました（誰がいつ承認したかを実行の記録に残します）"
        ),
        (Lang::Ja, false) => format!(
            "指示にある「承認」のため、結果を見せて承認を求める手順 {id} を加え、{gated} は承認されたときだけ実行するようにしました（誰がいつ承認したかを実行の記録に残します）"
        ),
        (Lang::En, true) => format!(
            "the instruction asks for an approval: step {id} shows the result and asks for it (who approved and when is kept in the run's record)"
        ),
        (Lang::En, false) => format!(
            "the instruction asks for an approval: step {id} shows the result and asks for it, and {gated} runs only once it is given (who approved and when is kept in the run's record)"
        ),
    }
}

/// The id of the step [`output_steps`] adds for an Excel file.
pub const EXCEL_STEP: &str = "excel_output";
/// The id of the step [`output_steps`] adds for a CSV file.
pub const CSV_STEP: &str = "csv_output";

/// Steps that write the composition's result rows to a new file, for an instruction that asks
/// for an Excel or a CSV file when no chosen template writes one: the rows are the last
/// template's first table export (the flow's result), the file `outputs/<plan id>.xlsx` (the
/// sheet named after that template) or `outputs/<plan id>.csv` (UTF-8 with a BOM, which
/// Excel opens; Shift_JIS when the instruction says so). Empty when neither is asked for, the
/// plan already writes it, or no template exports a table. When the instruction asks for the
/// rows to go into a workbook it names ([`existing_workbook`], looked up among `files`, the
/// attached files), the Excel step adds its sheet (the one the instruction names, else the
/// template's title) to a copy of that workbook, saved under the workbook's own name; the
/// original is never changed.
pub fn output_steps(
    instruction: &str,
    composition: &Composition,
    templates: &[&TemplateSpec],
    plan_id: &str,
    files: &[&str],
) -> Vec<Node> {
    let Some((template, export)) = result_export(composition, templates) else {
        return Vec::new();
    };
    let text = normalized(instruction);
    let blocks = plan_blocks(&composition.plan);
    asked(instruction)
        .into_iter()
        .filter(|p| matches!(p.id, "excel" | "csv") && !serves(p, &blocks))
        .filter_map(|part| {
            let step = if part.id == "excel" {
                let mut step = serde_json::json!({
                    "id": EXCEL_STEP,
                    "description": format!("{}の結果（{}）をExcelに書き出す", template.title, export.name),
                    "block": "excel.write_table",
                    "in": {
                        "rows": export.reference,
                        "out_dir": "outputs",
                        "out_name": format!("{plan_id}.xlsx"),
                        "sheet_name": template.title,
                        "title": template.title,
                    },
                    "out": {"out_path": "out_path"},
                });
                if let Some(book) = existing_workbook(instruction, files) {
                    let sheet = book.sheet.unwrap_or_else(|| template.title.clone());
                    step["description"] = format!(
                        "{}の結果（{}）を {} のコピーに「{sheet}」シートとして書き込む",
                        template.title, export.name, book.name
                    )
                    .into();
                    step["in"]["base_workbook"] = book.path.into();
                    step["in"]["out_name"] = book.name.into();
                    step["in"]["sheet_name"] = sheet.into();
                }
                step
            } else {
                let sjis = ["shift_jis", "shift-jis", "sjis", "cp932", "シフトjis"]
                    .iter()
                    .any(|w| text.contains(w));
                serde_json::json!({
                    "id": CSV_STEP,
                    "description": format!("{}の結果（{}）をCSVに書き出す", template.title, export.name),
                    "block": "csv.write",
                    "in": {
                        "rows": export.reference,
                        "out_dir": "outputs",
                        "out_name": format!("{plan_id}.csv"),
                        "encoding": if sjis { "cp932" } else { "utf-8-sig" },
                    },
                    "out": {"out_path": "out_path"},
                })
            };
            serde_json::from_value(step).ok()
        })
        .collect()
}

/// The note for a step [`output_steps`] added.
pub fn output_step_note(node: &Node, lang: Lang) -> String {
    let name = node
        .inputs
        .get("out_name")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let (part_ja, part_en) = if node.id == CSV_STEP {
        ("CSV ファイルへの出力", "a CSV file")
    } else {
        ("Excel ファイルへの出力", "an Excel file")
    };
    let id = &node.id;
    let text = |key: &str| node.inputs.get(key).and_then(|v| v.as_str());
    if let (Some(base), Some(sheet)) = (text("base_workbook"), text("sheet_name")) {
        return match lang {
            Lang::Ja => format!(
                "指示にある既存のブック {base} への書き込みのため、結果の行をそのコピーの「{sheet}」シートに書き、outputs/{name} として保存する手順 {id} を加えました（元のブックは変えません）"
            ),
            Lang::En => format!(
                "the instruction asks for the rows in the workbook {base}: step {id} writes them to a sheet \"{sheet}\" of a copy saved as outputs/{name} (the original is left as it is)"
            ),
        };
    }
    match lang {
        Lang::Ja => format!(
            "指示にある「{part_ja}」のため、結果の行を outputs/{name} に書き出す手順 {id} を加えました"
        ),
        Lang::En => format!(
            "the instruction asks for {part_en}: step {id} writes the result rows to outputs/{name}"
        ),
    }
}

/// A note for each part of `instruction` that `plan` does not serve.
pub fn unserved_notes(instruction: &str, plan: &Plan, lang: Lang) -> Vec<String> {
    let blocks = plan_blocks(plan);
    asked(instruction)
        .into_iter()
        .filter(|p| !serves(p, &blocks))
        .map(|p| match lang {
            Lang::Ja => format!(
                "指示にある「{}」に対応するテンプレートが見つからず、このプランには含まれていません。ブロックを追加するか、チャットで追加を依頼してください",
                p.label_ja
            ),
            Lang::En => format!(
                "the instruction asks for {}, which no template could add: this plan does not include it; add a block or ask the chat to add it",
                p.label_en
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_name_asks_for_its_kind_of_file_not_for_its_words() {
        let ids = |text: &str| -> Vec<&str> { asked(text).iter().map(|p| p.id).collect() };
        assert_eq!(ids("重複を月次報告.xlsxにシートとして追加"), ["excel"]);
        assert_eq!(ids("通知一覧.csvを読んで重複を探す"), Vec::<&str>::new());
        // The words themselves still ask.
        assert_eq!(
            ids("重複を探して月次報告を作り、Excelにする"),
            ["excel", "report"]
        );
    }

    #[test]
    fn an_expense_report_is_what_the_job_reads_not_a_report_it_asks_for() {
        let ids = |text: &str| -> Vec<&str> { asked(text).iter().map(|p| p.id).collect() };
        assert_eq!(
            ids("Check employee expense reports against the policy limits"),
            Vec::<&str>::new()
        );
        assert_eq!(
            ids("経費レポートを規程と照らし合わせる"),
            Vec::<&str>::new()
        );
        assert_eq!(
            ids("Check expense reports and send a report of the breaches"),
            ["report"]
        );
    }

    #[test]
    fn an_approval_is_asked_for_when_one_is_to_be_given_not_for_rows_already_approved() {
        let approval = |text: &str| asked(text).iter().any(|p| p.id == "approval");
        assert!(approval("上長の承認を得てからExcelに出力する"));
        assert!(approval("部長の決裁を経て振込データを作る"));
        assert!(approval("Get approval before exporting the list"));
        assert!(!approval("承認済みの買掛金から全銀の振込ファイルを作る"));
        assert!(!approval("承認者の列が空の発注をチェックする"));
    }
}
