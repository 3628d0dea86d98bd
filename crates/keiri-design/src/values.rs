//! The user's numbers in an instruction (「前月比±15%」「5万円以上」「14日以内」): each one
//! sets the template setting it is for, or a note says it was not used. Never silently
//! dropped, never silently put in the wrong setting.
//!
//! A setting is one of the chosen templates' `instruction_values` (a var with a unit and the
//! words that name it). A number sets it when the units agree and one of its words is in the
//! same clause (the text between 、。, and ;): 「承認は5万円以上」 sets the approval threshold,
//! 「相見積もりは50万円以上」 the quotes threshold. A number whose clause names no setting, or
//! two, is left and said: 「10万円以下の請求書」 is a filter, not a tolerance.

use std::sync::LazyLock;

use keiri_plan::{Lang, Plan, TemplateSpec, ValueUnit};
use regex::Regex;
use serde_json::Value;
use unicode_normalization::UnicodeNormalization;

/// A number the instruction states, with its unit.
#[derive(Debug, Clone, PartialEq)]
pub struct Stated {
    /// As written (after NFKC): `5万円`, `±15%`, `14日`.
    pub text: String,
    pub unit: ValueUnit,
    /// In the setting's terms: yen, a fraction for percent, whole days.
    pub value: Value,
    /// The clause it stands in, lowercased.
    clause: String,
}

/// `None` only if the pattern did not compile, which the unit tests would show: then no
/// number is read (and each test of this module fails).
static NUMBER: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"[±+]?(\d[\d,]*(?:\.\d+)?)\s*(万円|千円|円|万|%|パーセント|日)").ok()
});

fn normalized(text: &str) -> String {
    text.nfkc().flat_map(char::to_lowercase).collect()
}

/// The numbers with a unit that `instruction` states, in order.
pub fn stated(instruction: &str) -> Vec<Stated> {
    let text = normalized(instruction);
    let clauses: Vec<(usize, &str)> = {
        let mut out = Vec::new();
        let mut start = 0;
        for (i, c) in text.char_indices() {
            if matches!(c, '、' | '。' | ',' | ';' | '\n' | '．' | '，') {
                out.push((start, &text[start..i]));
                start = i + c.len_utf8();
            }
        }
        out.push((start, &text[start..]));
        out
    };
    let clause_at = |at: usize| {
        clauses
            .iter()
            .rev()
            .find(|(start, _)| *start <= at)
            .map_or("", |(_, c)| *c)
            .to_string()
    };
    let Some(number) = NUMBER.as_ref() else {
        return Vec::new();
    };
    number
        .captures_iter(&text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            // A digit or a date's separator just before the match makes it part of a date
            // (`2025/3/5日`, `3月5日`), not a number of days.
            if text[..whole.start()]
                .ends_with(|ch: char| ch.is_ascii_digit() || matches!(ch, '/' | '月' | '-' | '.'))
            {
                return None;
            }
            let n: f64 = c[1].replace(',', "").parse().ok()?;
            let (unit, value) = match &c[2] {
                "万円" | "万" => (ValueUnit::Yen, n * 10_000.0),
                "千円" => (ValueUnit::Yen, n * 1_000.0),
                "円" => (ValueUnit::Yen, n),
                "%" | "パーセント" => (ValueUnit::Percent, n / 100.0),
                _ => (ValueUnit::Days, n),
            };
            let value = match unit {
                ValueUnit::Percent => serde_json::Number::from_f64(value).map(Value::Number)?,
                _ if value.fract() == 0.0 => Value::from(value as i64),
                _ => serde_json::Number::from_f64(value).map(Value::Number)?,
            };
            Some(Stated {
                text: whole.as_str().to_string(),
                unit,
                value,
                clause: clause_at(whole.start()),
            })
        })
        .collect()
}

/// Sets the settings of `templates` that the numbers of `instruction` are for in `plan.vars`,
/// and returns a note for each number: which setting it set (and the default it replaced), or
/// why it was not used.
pub fn apply(
    instruction: &str,
    templates: &[&TemplateSpec],
    plan: &mut Plan,
    lang: Lang,
) -> Vec<String> {
    let settings: Vec<(&String, &keiri_plan::InstructionValue)> = templates
        .iter()
        .flat_map(|t| t.instruction_values.iter())
        .collect();
    let fixed: Vec<&keiri_plan::FixedValues> = templates
        .iter()
        .flat_map(|t| t.instruction_fixed.iter())
        .collect();
    let mut notes = Vec::new();
    for s in stated(instruction) {
        if let Some(note) = fixed_note(&s, &fixed, lang) {
            notes.push(note);
            continue;
        }
        let named: Vec<&String> = settings
            .iter()
            .filter(|(_, v)| v.unit == s.unit)
            .filter(|(_, v)| v.words.iter().any(|w| s.clause.contains(&normalized(w))))
            .map(|(var, _)| *var)
            .collect();
        let text = &s.text;
        match named.as_slice() {
            [var] => {
                let before = plan.vars.insert((*var).clone(), s.value.clone());
                let before = before.map(|b| b.to_string()).unwrap_or_default();
                notes.push(match lang {
                    Lang::Ja => format!(
                        "指示の「{text}」を設定 {var} に使いました（既定 {before} → {}）",
                        s.value
                    ),
                    Lang::En => format!(
                        "the instruction's {text:?} sets {var} (default {before} → {})",
                        s.value
                    ),
                });
            }
            [] => notes.push(match lang {
                Lang::Ja => format!(
                    "指示の「{text}」は、このプランのどの設定のことか分からないため使っていません。必要ならプランの vars か手順で指定してください"
                ),
                Lang::En => format!(
                    "the instruction's {text:?} is not used: no setting of this plan is named beside it; set it in the plan's vars or add a step"
                ),
            }),
            several => {
                let list = several
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                notes.push(match lang {
                    Lang::Ja => format!(
                        "指示の「{text}」はどの設定のことか一つに決められないため使っていません（候補: {list}）。プランの vars で指定してください"
                    ),
                    Lang::En => format!(
                        "the instruction's {text:?} is not used: it could be any of {list}; set it in the plan's vars"
                    ),
                });
            }
        }
    }
    notes.extend(choose(instruction, templates, plan, lang));
    notes
}

/// The note for a number stated beside the words of numbers a template's steps use as they
/// are: confirmed when it is one of them, said to differ when not. `None` when no such group
/// of the same unit is named in its clause.
fn fixed_note(s: &Stated, fixed: &[&keiri_plan::FixedValues], lang: Lang) -> Option<String> {
    let group = fixed
        .iter()
        .find(|f| f.unit == s.unit && f.words.iter().any(|w| s.clause.contains(&normalized(w))))?;
    let value = s.value.as_f64()?;
    let unit = match (s.unit, lang) {
        (ValueUnit::Days, Lang::Ja) => "日",
        (ValueUnit::Days, Lang::En) => " days",
        (ValueUnit::Yen, Lang::Ja) => "円",
        (ValueUnit::Yen, Lang::En) => " yen",
        (ValueUnit::Percent, _) => "",
    };
    let list = group
        .values
        .iter()
        .map(|v| format!("{v}{unit}"))
        .collect::<Vec<_>>()
        .join(match lang {
            Lang::Ja => "・",
            Lang::En => ", ",
        });
    let text = &s.text;
    let same = group.values.iter().any(|v| (v - value).abs() < 1e-9);
    Some(match (same, lang) {
        (true, Lang::Ja) => format!("指示の「{text}」はこのプランの区切り（{list}）のとおりです"),
        (true, Lang::En) => {
            format!("the instruction's {text:?} is one of this plan's own ({list})")
        }
        (false, Lang::Ja) => format!(
            "指示の「{text}」の区切りはこのプランにはありません（{list} で分けます）。変えるにはプランの手順を直してください"
        ),
        (false, Lang::En) => format!(
            "the instruction's {text:?} is not one of this plan's own ({list}); change the plan's steps for it"
        ),
    })
}

/// Sets the settings of `templates` that a word of `instruction` chooses (their
/// `instruction_choices`) in `plan.vars`, with a note for each: the value chosen and the words
/// that chose it, or why none was when the words of two values are there.
fn choose(
    instruction: &str,
    templates: &[&TemplateSpec],
    plan: &mut Plan,
    lang: Lang,
) -> Vec<String> {
    let text = normalized(instruction);
    let mut notes = Vec::new();
    for (var, values) in templates.iter().flat_map(|t| t.instruction_choices.iter()) {
        let chosen: Vec<(&String, &String)> = values
            .iter()
            .filter_map(|(value, words)| {
                let word = words
                    .iter()
                    .find(|w| !w.trim().is_empty() && text.contains(&normalized(w)))?;
                Some((value, word))
            })
            .collect();
        match chosen.as_slice() {
            [] => {}
            [(value, word)] => {
                let before = plan.vars.insert(var.clone(), Value::from(value.as_str()));
                let before = match before {
                    Some(Value::String(b)) => b,
                    Some(b) => b.to_string(),
                    None => String::new(),
                };
                notes.push(match lang {
                    Lang::Ja if before == **value => {
                        format!("指示の「{word}」から設定 {var} は既定の {value} のままです")
                    }
                    Lang::Ja => format!(
                        "指示の「{word}」から設定 {var} を {value} にしました（既定 {before}）"
                    ),
                    Lang::En if before == **value => {
                        format!("the instruction's {word:?} keeps {var} at its default {value}")
                    }
                    Lang::En => format!(
                        "the instruction's {word:?} sets {var} to {value} (default {before})"
                    ),
                });
            }
            several => {
                let list = several
                    .iter()
                    .map(|(value, word)| format!("{word} → {value}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                notes.push(match lang {
                    Lang::Ja => format!(
                        "指示の言葉から設定 {var} を一つに決められないため既定のままです（{list}）。プランの vars で指定してください"
                    ),
                    Lang::En => format!(
                        "the instruction's words do not settle {var}, left at its default ({list}); set it in the plan's vars"
                    ),
                });
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(instruction: &str) -> Vec<(String, ValueUnit, Value)> {
        stated(instruction)
            .into_iter()
            .map(|s| (s.text, s.unit, s.value))
            .collect()
    }

    #[test]
    fn numbers_with_units_are_read_as_the_settings_take_them() {
        assert_eq!(
            values("前月比±15%以上、または5万円以上変わった社員"),
            [
                ("±15%".into(), ValueUnit::Percent, serde_json::json!(0.15)),
                ("5万円".into(), ValueUnit::Yen, Value::from(50_000)),
            ]
        );
        // Full-width digits and thousands separators; 千円 and 日.
        assert_eq!(
            values("１，５００円の差と３千円、１４日以内"),
            [
                ("1,500円".into(), ValueUnit::Yen, Value::from(1_500)),
                ("3千円".into(), ValueUnit::Yen, Value::from(3_000)),
                ("14日".into(), ValueUnit::Days, Value::from(14)),
            ]
        );
        // A date is not a number of days, and a number without a unit is not a setting.
        assert!(values("2025/03/05 の3点照合").is_empty());
        assert!(values("3月5日以前の請求書").is_empty());
    }
}
