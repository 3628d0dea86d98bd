//! `ai.classify_account`: an account from the chart for each transaction row.
//!
//! The model may only answer with the chart's codes (an `enum` in the strict schema, and
//! checked again here), so no account is ever invented; a row the model skipped or answered
//! with an unknown code gets no suggestion and goes to `low_confidence`.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value as Json, json};

use super::{Ask, Model, OutputShape};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::value::Row;

/// Rows per call: enough context per request, answers short enough not to be cut.
const BATCH: usize = 25;
/// Past journal lines sent as examples (the first ones given).
const MAX_EXAMPLES: usize = 50;
/// Above this many accounts the codes are checked here only (strict mode allows 1000 enum
/// values in all).
const MAX_ENUM: usize = 500;

const SYSTEM: &str = "You are an experienced Japanese bookkeeper. For each transaction, choose \
the single most appropriate account from the chart of accounts, answering with its code exactly \
as listed. Give a confidence from 0 to 1 (how sure a careful accountant would be from the \
information given) and a short reason in Japanese. Follow the company's own usage shown in the \
examples when there are any. When the information is not enough to decide, still choose the \
likeliest account but give a low confidence. Answer every row number once.";

/// Common accounts of a Japanese small or medium company (code = name), used when the plan
/// gives no chart: the names accounting software (弥生会計, freee, マネーフォワード) also use.
const DEFAULT_CHART: &[(&str, &str)] = &[
    ("現金", "手元の現金"),
    ("普通預金", "普通預金口座の入出金"),
    ("当座預金", "当座預金口座の入出金"),
    ("売掛金", "掛けで販売した代金の未回収分"),
    ("未収入金", "本業以外の取引の未回収分"),
    ("前払費用", "翌期以降の役務に対して前払いした費用"),
    ("仮払金", "内容・金額が確定していない支出"),
    ("立替金", "他人のために一時的に立て替えた支出"),
    ("建物", "事務所・店舗などの建物"),
    ("工具器具備品", "取得価額10万円以上の備品・パソコン・什器"),
    ("車両運搬具", "自動車・トラックなど"),
    ("ソフトウェア", "取得価額10万円以上のソフトウェア"),
    ("敷金", "事務所などの賃貸借契約の敷金・保証金"),
    ("買掛金", "掛けで仕入れた代金の未払分"),
    ("未払金", "本業以外の取引の未払分"),
    ("未払費用", "継続的な役務の未払分"),
    ("預り金", "源泉所得税・社会保険料などの預り"),
    ("前受金", "商品・サービスの提供前に受け取った代金"),
    ("仮受金", "内容が確定していない入金"),
    ("短期借入金", "1年以内に返済する借入金"),
    ("長期借入金", "返済期間が1年を超える借入金"),
    ("売上高", "本業の商品・サービスの売上"),
    ("受取利息", "預金・貸付金の利息"),
    ("雑収入", "本業以外の少額の収入"),
    ("仕入高", "販売用の商品・原材料の仕入"),
    ("外注費", "業務の外部委託費"),
    ("役員報酬", "役員への報酬"),
    ("給料手当", "従業員への給与・手当"),
    ("法定福利費", "社会保険料・労働保険料の会社負担分"),
    ("福利厚生費", "従業員の慶弔・健康診断・社内行事など"),
    ("旅費交通費", "電車・バス・タクシー・出張の交通費と宿泊費"),
    (
        "通信費",
        "電話・インターネット・郵便切手・宅配の送料以外の通信",
    ),
    ("会議費", "打合せの飲食（1人あたり少額）・会議室代"),
    ("接待交際費", "取引先の接待・贈答・慶弔"),
    ("広告宣伝費", "広告・販促物・ウェブ広告"),
    ("消耗品費", "10万円未満の備品・消耗品"),
    ("事務用品費", "文房具・コピー用紙などの事務用品"),
    ("修繕費", "建物・設備・備品の修理"),
    ("水道光熱費", "電気・ガス・水道"),
    ("地代家賃", "事務所・店舗・駐車場の賃料"),
    ("賃借料", "機械・設備などのレンタル料"),
    ("リース料", "リース契約の支払"),
    ("保険料", "損害保険・生命保険の保険料"),
    (
        "租税公課",
        "印紙税・固定資産税・自動車税などの税金と公的な手数料",
    ),
    ("支払手数料", "振込手数料・仲介手数料・各種サービスの手数料"),
    ("支払報酬", "税理士・弁護士・社会保険労務士などへの報酬"),
    ("荷造運賃", "商品の発送の運賃・梱包材"),
    ("車両費", "ガソリン代・車検・自動車の修理"),
    ("新聞図書費", "新聞・書籍・雑誌・有料の情報サービス"),
    ("諸会費", "業界団体・商工会議所などの会費"),
    ("研修費", "従業員の研修・セミナー参加費"),
    ("減価償却費", "固定資産の減価償却"),
    ("寄付金", "寄付・協賛"),
    ("支払利息", "借入金の利息"),
    ("雑費", "他のどの科目にも当たらない少額の費用"),
];

struct Account {
    code: String,
    name: String,
    description: String,
}

pub(super) fn classify_account(
    ctx: &BlockContext<'_>,
    inputs: &Inputs,
) -> Result<Outputs, BlockError> {
    let mut model = Model::new(ctx, inputs)?;
    let rows = inputs.rows("rows")?;
    let chart = chart(inputs)?;
    let fields = text_fields(inputs, &rows)?;
    let min_confidence = inputs.f64("min_confidence")?.unwrap_or(0.7);
    if !(0.0..=1.0).contains(&min_confidence) {
        return Err(BlockError::input_invalid(
            "min_confidence",
            "0〜1 の数値です",
            "expected a number from 0 to 1",
        ));
    }
    let examples: Vec<Json> = match inputs.json("examples") {
        None => Vec::new(),
        Some(Json::Array(items)) => items.into_iter().take(MAX_EXAMPLES).collect(),
        Some(_) => {
            return Err(BlockError::input_invalid(
                "examples",
                "過去の仕訳の配列が必要です",
                "expected a list of past journal lines",
            ));
        }
    };
    let codes: Vec<&str> = chart.iter().map(|a| a.code.as_str()).collect();
    let mut code_schema = json!({"type": "string"});
    if codes.len() <= MAX_ENUM {
        code_schema["enum"] = json!(codes);
    }
    let shape = OutputShape::fixed(
        "account_suggestions",
        json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "row": {"type": "integer"},
                    "account_code": code_schema,
                    "confidence": {"type": "number"},
                    "reason": {"type": "string"},
                },
                "required": ["row", "account_code", "confidence", "reason"],
                "additionalProperties": false,
            }}},
            "required": ["items"],
            "additionalProperties": false,
        }),
    );
    let mut chart_text = String::from("Chart of accounts (code | name | usage):\n");
    for a in &chart {
        chart_text.push_str(&format!("{} | {} | {}\n", a.code, a.name, a.description));
    }
    if !examples.is_empty() {
        chart_text.push_str("\nPast journal lines of this company (examples):\n");
        for e in &examples {
            chart_text.push_str(&e.to_string());
            chart_text.push('\n');
        }
    }
    let asks: Vec<Ask> = rows
        .chunks(BATCH)
        .enumerate()
        .map(|(b, chunk)| {
            let first = b * BATCH + 1;
            let mut user = format!("{chart_text}\nTransactions (row number, then the fields):\n");
            for (i, row) in chunk.iter().enumerate() {
                let mut shown = serde_json::Map::new();
                shown.insert("row".into(), json!(first + i));
                for f in &fields {
                    shown.insert(f.clone(), row.get(f).cloned().unwrap_or(Json::Null));
                }
                user.push_str(&Json::Object(shown).to_string());
                user.push('\n');
            }
            Ask {
                purpose: format!("rows {first}-{}", first + chunk.len() - 1),
                system: SYSTEM.to_string(),
                user,
            }
        })
        .collect();
    let mut suggestions: HashMap<usize, Json> = HashMap::new();
    for answer in model.ask_each(asks, &shape)? {
        for item in answer["items"].as_array().into_iter().flatten() {
            if let Some(row) = item["row"].as_u64().and_then(|r| usize::try_from(r).ok()) {
                suggestions.entry(row).or_insert_with(|| item.clone());
            }
        }
    }
    let by_code: HashMap<&str, &Account> = chart.iter().map(|a| (a.code.as_str(), a)).collect();
    let mut out = Vec::with_capacity(rows.len());
    let mut low = Vec::new();
    let mut per_account: BTreeMap<String, usize> = BTreeMap::new();
    let (mut high_n, mut medium_n) = (0, 0);
    for (i, row) in rows.into_iter().enumerate() {
        let suggestion = suggestions.get(&(i + 1));
        let account = suggestion
            .and_then(|s| s["account_code"].as_str())
            .and_then(|c| by_code.get(c));
        let mut r: Row = row;
        let confidence = match (suggestion, account) {
            (Some(s), Some(account)) => {
                let c = s["confidence"].as_f64().unwrap_or(0.0).clamp(0.0, 1.0);
                let c = (c * 100.0).round() / 100.0;
                r.insert("suggested_account_code".into(), json!(account.code));
                r.insert("suggested_account".into(), json!(account.name));
                r.insert("confidence".into(), json!(c));
                r.insert("reason".into(), s["reason"].clone());
                *per_account.entry(account.name.clone()).or_default() += 1;
                c
            }
            (suggestion, _) => {
                let reason = if suggestion.is_some() {
                    ctx.say(
                        "AIの回答が勘定科目表にない科目でした",
                        "the answer is not in the chart",
                    )
                } else {
                    ctx.say(
                        "AIがこの行に回答しませんでした",
                        "the model did not answer this row",
                    )
                };
                r.insert("suggested_account_code".into(), Json::Null);
                r.insert("suggested_account".into(), Json::Null);
                r.insert("confidence".into(), json!(0.0));
                r.insert("reason".into(), json!(reason));
                0.0
            }
        };
        if confidence < min_confidence {
            low.push(r.clone());
        } else if confidence >= 0.9 {
            high_n += 1;
        } else {
            medium_n += 1;
        }
        out.push(r);
    }
    let mut summary = model.tally.to_json(model.name());
    summary.insert("rows".into(), json!(out.len()));
    summary.insert("low_confidence".into(), json!(low.len()));
    summary.insert("per_account".into(), json!(per_account));
    summary.insert(
        "confidence".into(),
        json!({"high": high_n, "medium": medium_n, "low": low.len(), "min_confidence": min_confidence}),
    );
    summary.insert("text_fields".into(), json!(fields));
    Ok(Outputs::new()
        .with("rows", out)
        .with("low_confidence", low)
        .with("summary", Json::Object(summary)))
}

builtin!("ai.classify_account", classify_account);

/// The chart from the input, or the common accounts.
fn chart(inputs: &Inputs) -> Result<Vec<Account>, BlockError> {
    let Some(value) = inputs.json("chart_of_accounts") else {
        return Ok(DEFAULT_CHART
            .iter()
            .map(|(name, description)| Account {
                code: (*name).to_string(),
                name: (*name).to_string(),
                description: (*description).to_string(),
            })
            .collect());
    };
    let bad = |ja: &str, en: &str| BlockError::input_invalid("chart_of_accounts", ja, en);
    let Json::Array(items) = value else {
        return Err(bad(
            "科目（code と name）の配列が必要です",
            "expected a list of accounts (code and name)",
        ));
    };
    let text = |v: Option<&Json>| match v {
        Some(Json::String(s)) => Some(s.trim().to_string()),
        Some(Json::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut chart: Vec<Account> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let code = text(item.get("code")).filter(|c| !c.is_empty());
        let name = text(item.get("name")).filter(|n| !n.is_empty());
        let (code, name) = match (code, name) {
            (Some(c), Some(n)) => (c, n),
            (Some(c), None) => (c.clone(), c),
            (None, Some(n)) => (n.clone(), n),
            (None, None) => {
                return Err(bad(
                    &format!("{} 番目の科目に code も name もありません", i + 1),
                    &format!("account {} has neither code nor name", i + 1),
                ));
            }
        };
        if chart.iter().any(|a| a.code == code) {
            return Err(bad(
                &format!("科目コード {code} が重複しています"),
                &format!("account code {code} appears twice"),
            ));
        }
        chart.push(Account {
            code,
            name,
            description: text(item.get("description")).unwrap_or_default(),
        });
    }
    if chart.is_empty() {
        return Err(bad(
            "科目が1つ以上必要です",
            "at least one account is needed",
        ));
    }
    Ok(chart)
}

/// The columns sent for each row: `text_fields` when given (each must exist); by default
/// `description, vendor, amount`, else their Japanese names (摘要, 取引先, 金額, …), else every
/// column.
fn text_fields(inputs: &Inputs, rows: &[Row]) -> Result<Vec<String>, BlockError> {
    let mut columns: Vec<String> = Vec::new();
    for row in rows {
        for k in row.keys() {
            if !columns.contains(k) {
                columns.push(k.clone());
            }
        }
    }
    // The engine fills in the spec's default, so the default list means "not chosen".
    let chosen = inputs.strings("text_fields")?.filter(|f| {
        f.iter()
            .map(String::as_str)
            .ne(["description", "vendor", "amount"])
    });
    if let Some(fields) = chosen {
        if let Some(missing) = fields.iter().find(|f| !columns.contains(f))
            && !rows.is_empty()
        {
            return Err(BlockError::missing_column(missing, &columns));
        }
        return Ok(fields);
    }
    let pick = |names: &[&str]| -> Vec<String> {
        names
            .iter()
            .filter(|n| columns.iter().any(|c| c == *n))
            .map(|n| (*n).to_string())
            .collect()
    };
    for candidates in [
        &["description", "vendor", "amount"][..],
        &[
            "摘要",
            "内容",
            "取引内容",
            "取引先",
            "支払先",
            "金額",
            "取引金額",
            "備考",
        ][..],
    ] {
        let found = pick(candidates);
        if !found.is_empty() {
            return Ok(found);
        }
    }
    Ok(columns)
}
