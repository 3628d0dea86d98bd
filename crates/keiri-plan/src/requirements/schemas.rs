//! The named output schemas offered for `ai.process_llm` when a plan has none.

use serde::Serialize;
use serde_json::{Value, json};

/// A named output schema for `ai.process_llm`, offered when a plan has none.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SchemaTemplate {
    pub id: &'static str,
    pub label: &'static str,
    pub label_en: &'static str,
    pub schema: Value,
}

/// The output schemas offered for `ai.process_llm`, in the order they are offered.
pub fn schema_templates() -> Vec<SchemaTemplate> {
    vec![
        SchemaTemplate {
            id: "classification",
            label: "分類・判定（区分、確信度、理由）",
            label_en: "Classification (label, confidence, reason)",
            schema: json!({
                "type": "object",
                "properties": {
                    "label": {"type": "string", "description": "判定した区分"},
                    "confidence": {"type": "number", "description": "確信度（0〜1）"},
                    "reason": {"type": "string", "description": "判定の理由"}
                },
                "required": ["label", "reason"]
            }),
        },
        SchemaTemplate {
            id: "field_extraction",
            label: "項目抽出（請求書番号、日付、取引先、金額など）",
            label_en: "Field extraction (invoice number, dates, vendor, amounts)",
            schema: json!({
                "type": "object",
                "properties": {
                    "invoice_number": {"type": "string", "description": "請求書番号"},
                    "issue_date": {"type": "string", "description": "発行日（YYYY-MM-DD）"},
                    "vendor_name": {"type": "string", "description": "取引先名"},
                    "registration_number": {"type": "string", "description": "登録番号（T+13桁）"},
                    "total_amount": {"type": "number", "description": "税込合計金額"},
                    "tax_amount": {"type": "number", "description": "消費税額"},
                    "due_date": {"type": "string", "description": "支払期日（YYYY-MM-DD）"}
                },
                "required": ["vendor_name", "total_amount"]
            }),
        },
        SchemaTemplate {
            id: "summary",
            label: "要約（要約文と要点）",
            label_en: "Summary (text and key points)",
            schema: json!({
                "type": "object",
                "properties": {
                    "summary": {"type": "string", "description": "要約"},
                    "key_points": {"type": "array", "items": {"type": "string"}, "description": "要点"}
                },
                "required": ["summary"]
            }),
        },
        SchemaTemplate {
            id: "reconciliation",
            label: "照合（一致・不一致・要確認、差額、理由）",
            label_en: "Reconciliation (matched / mismatched / needs review, difference, reason)",
            schema: json!({
                "type": "object",
                "properties": {
                    "status": {"type": "string", "enum": ["matched", "mismatched", "needs_review"], "description": "照合結果"},
                    "difference": {"type": "number", "description": "差額（円）"},
                    "reason": {"type": "string", "description": "差異の理由"}
                },
                "required": ["status", "reason"]
            }),
        },
        SchemaTemplate {
            id: "anomaly",
            label: "異常検知（異常か、重要度、理由）",
            label_en: "Anomaly flag (is anomaly, severity, reason)",
            schema: json!({
                "type": "object",
                "properties": {
                    "is_anomaly": {"type": "boolean", "description": "異常の疑いがあるか"},
                    "severity": {"type": "string", "enum": ["info", "warning", "error"], "description": "重要度"},
                    "reason": {"type": "string", "description": "理由"}
                },
                "required": ["is_anomaly", "reason"]
            }),
        },
    ]
}

/// One schema template by id.
pub fn schema_template(id: &str) -> Option<SchemaTemplate> {
    schema_templates().into_iter().find(|t| t.id == id)
}
