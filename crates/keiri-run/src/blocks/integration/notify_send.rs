//! `notify.send`: a notification to a local file, or to Slack or Teams through an incoming
//! webhook.
//!
//! * Every notification is recorded as one JSON line in `notifications.jsonl` in the node's
//!   folder (time, channel, recipients, subject, body, attachments, where it went). For the
//!   `file` channel that record is the delivery, so it always works — in sample runs, in
//!   tests, and for plans that only need a trail. The line is appended by writing the whole
//!   new file atomically (keiri-fs), so a crash never loses earlier lines.
//! * `slack` and `teams` POST to `webhook_url`, whose host must be on the run's allowlist
//!   (`HOST_NOT_ALLOWED` otherwise), with the guarded client of [`super::http`]. Only the
//!   webhook's scheme and host appear in messages and the record: its path is the secret. Slack gets
//!   `{"text": …}`; Teams gets an Adaptive Card message, the format of the Teams Workflows
//!   webhooks that replace the retired Office 365 connectors.
//! * `email` needs an SMTP client and credentials this build does not have: it fails with
//!   `INPUT_INVALID` and a hint, rather than pretending to send.

use std::path::Path;
use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use serde_json::{Value as Json, json};

use super::http_request::{allowed_url, origin, send};
use crate::block::{BlockContext, BlockError, Inputs, Outputs};
use crate::blocks::kit::time::jst_text;

/// The record of notifications in the node's folder.
const RECORD_FILE: &str = "notifications.jsonl";
/// How long a webhook may take.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) fn notify_send(ctx: &BlockContext<'_>, inputs: &Inputs) -> Result<Outputs, BlockError> {
    let channel = inputs.require_str("channel")?;
    let to = inputs.strings("to")?.unwrap_or_default();
    let subject = inputs.str("subject")?.unwrap_or("");
    let body = inputs.require_str("body")?;
    let attachments = inputs.strings("attachments")?.unwrap_or_default();
    let webhook = match channel {
        "file" => None,
        "slack" | "teams" => {
            let text = inputs.str("webhook_url")?.ok_or_else(|| {
                BlockError::input_invalid(
                    "webhook_url",
                    &format!("{channel} には Incoming Webhook の URL が必要です"),
                    &format!("{channel} needs an incoming webhook URL"),
                )
                .with_hint(
                    "webhook_url に ${env.SLACK_WEBHOOK_URL} のように環境変数の参照を書いてください",
                    "refer to an environment variable in webhook_url, e.g. ${env.SLACK_WEBHOOK_URL}",
                )
            })?;
            Some(allowed_url(ctx, "webhook_url", text)?)
        }
        "email" => {
            return Err(BlockError::input_invalid(
                "channel",
                "メール送信（email）はまだ使えません",
                "sending email is not available yet",
            )
            .with_hint(
                "file（実行フォルダに記録）・slack・teams を使ってください",
                "use file (recorded in the run folder), slack or teams",
            ));
        }
        _ => {
            return Err(BlockError::input_invalid(
                "channel",
                "file・slack・teams・email のどれかです",
                "expected file, slack, teams or email",
            ));
        }
    };
    super::cancelled(ctx)?;

    if let Some(url) = &webhook {
        let payload = if channel == "slack" {
            slack_payload(subject, body)
        } else {
            teams_payload(subject, body)
        };
        let response = send(
            ctx,
            url,
            &origin(url),
            WEBHOOK_TIMEOUT,
            true,
            origin,
            |client| {
                client
                    .post(url.clone())
                    .header(CONTENT_TYPE, "application/json")
                    .body(payload.to_string())
            },
        )?;
        if !(200..=299).contains(&response.status) {
            let excerpt: String = String::from_utf8_lossy(&response.body)
                .chars()
                .take(200)
                .collect();
            let shown = origin(url);
            return Err(BlockError::failed(
                format!(
                    "{channel} への通知が失敗しました（{shown} がステータス {} を返しました）: {excerpt}",
                    response.status
                ),
                format!(
                    "the {channel} notification failed ({shown} answered {}): {excerpt}",
                    response.status
                ),
            ));
        }
    }

    let record = json!({
        "time": jst_text(ctx.now),
        "channel": channel,
        "to": to,
        "subject": subject,
        "body": body,
        "attachments": attachments,
        "webhook": webhook.as_ref().map(origin),
    });
    let line_no = append_line(&ctx.out_dir.join(RECORD_FILE), &record)?;
    let message_id = if webhook.is_some() {
        // Incoming webhooks do not return a message id.
        Json::Null
    } else {
        json!(format!("{RECORD_FILE}:{line_no}"))
    };
    Ok(Outputs::new()
        .with("sent", json!(true))
        .with("message_id", message_id))
}

builtin!("notify.send", notify_send);

fn slack_payload(subject: &str, body: &str) -> Json {
    let text = if subject.is_empty() {
        body.to_string()
    } else {
        format!("*{subject}*\n{body}")
    };
    json!({"text": text})
}

fn teams_payload(subject: &str, body: &str) -> Json {
    let mut blocks = Vec::new();
    if !subject.is_empty() {
        blocks.push(json!({"type": "TextBlock", "text": subject, "weight": "Bolder", "size": "Medium", "wrap": true}));
    }
    blocks.push(json!({"type": "TextBlock", "text": body, "wrap": true}));
    json!({
        "type": "message",
        "attachments": [{
            "contentType": "application/vnd.microsoft.card.adaptive",
            "content": {
                "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                "type": "AdaptiveCard",
                "version": "1.4",
                "body": blocks,
            },
        }],
    })
}

/// Appends `value` as one JSON line to `path` by replacing the whole file atomically under
/// its lock; returns the new line's number (1-based).
fn append_line(path: &Path, value: &Json) -> Result<usize, BlockError> {
    let shown = path.display();
    let io = |e: &dyn std::fmt::Display| {
        BlockError::failed(
            format!("{shown} に記録できません: {e}"),
            format!("cannot record to {shown}: {e}"),
        )
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(&e))?;
    }
    let lock = keiri_fs::lock(path).map_err(|e| io(&e))?;
    let (old, existed) = match std::fs::read(path) {
        Ok(bytes) => (bytes, true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), false),
        Err(e) => return Err(io(&e)),
    };
    let mut new = old.clone();
    if !new.is_empty() && !new.ends_with(b"\n") {
        new.push(b'\n');
    }
    let line_no = new.iter().filter(|b| **b == b'\n').count() + 1;
    new.extend_from_slice(value.to_string().as_bytes());
    new.push(b'\n');
    // A new file is created only if it still does not exist; an existing one is replaced
    // only if it still holds what was read.
    if existed {
        lock.write_if_unchanged(&old, &new)
    } else {
        lock.write_new(&new)
    }
    .map_err(|e| io(&e))?;
    Ok(line_no)
}
