//! The parts of an instruction the offline compose path recognises (an Excel file, a report,
//! a notification) and whether a composed plan serves each: compose adds a template that
//! serves a missing part, or says which part it could not serve, instead of dropping it.

use keiri_plan::{ComposeOptions, Lang, Plan, TemplateSpec, Templates, compose};
use unicode_normalization::UnicodeNormalization;

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

/// The parts `instruction` asks for.
pub fn asked(instruction: &str) -> Vec<&'static Part> {
    let text = normalized(instruction);
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

/// Templates, by id, that serve a missing part and compose after `chosen`: each added only
/// when the composition still succeeds. Returns the extended list.
pub fn complete<'t>(
    instruction: &str,
    chosen: Vec<&'t TemplateSpec>,
    templates: &'t Templates,
) -> Vec<&'t TemplateSpec> {
    let mut chosen = chosen;
    for part in missing(instruction, &chosen) {
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
            if compose(&with, &ComposeOptions::default()).is_ok() {
                chosen = with;
                break;
            }
        }
    }
    chosen
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
