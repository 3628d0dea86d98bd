// アシスタント: the chat with the studio's agent (keiri-agent). The conversation, each tool
// call as a collapsible step (tool, arguments, result or error code), and every proposed edit
// as before/after lines with 承認 / 却下; 元に戻す after an approval. Its state — the
// conversation, kept across restarts, and sending, approving and undoing — is `useChat`'s;
// this component draws it.

import { useMemo } from 'react';
import type { Lang } from '../../api/types';
import { t } from '../../shared/i18n';
import { sideBySide } from './sideBySide';
import { fileLabel, useChat } from './useChat';

interface Props {
  lang: Lang;
  planYaml: string;
  onPlanChange(yaml: string): void;
}

function pretty(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/**
 * A proposed change as before/after columns with each side's line numbers (changed lines
 * side by side, added and removed lines against an empty cell). The unified diff text itself
 * stays available in a closed disclosure for whoever needs to copy it.
 */
function DiffView({ lang, diff }: { lang: Lang; diff: string }) {
  const hunks = useMemo(() => sideBySide(diff), [diff]);
  if (hunks === null) {
    return (
      <pre className="chat-diff chat-diff-raw" data-testid="chat-diff" translate="no">
        {diff}
      </pre>
    );
  }
  return (
    <div className="chat-diff" data-testid="chat-diff">
      <table className="side-diff">
        <colgroup>
          <col className="side-diff-n" />
          <col />
          <col className="side-diff-n" />
          <col />
        </colgroup>
        <thead>
          <tr>
            <th colSpan={2}>{t(lang, 'chat.before')}</th>
            <th colSpan={2}>{t(lang, 'chat.after')}</th>
          </tr>
        </thead>
        {hunks.map((hunk, h) => (
          <tbody key={h} data-testid="chat-diff-hunk">
            <tr className="side-diff-gap">
              <td colSpan={4}>{t(lang, 'chat.hunkAt', { line: String(hunk.afterStart) })}</td>
            </tr>
            {hunk.rows.map((row, i) => (
              <tr key={i} data-kind={row.kind} data-testid="chat-diff-row">
                <td className="side-diff-n">{row.before?.n ?? ''}</td>
                <td className="side-diff-text" data-side="before" data-tone={row.before !== null && row.kind !== 'same' ? 'del' : undefined} translate="no">
                  {row.before?.text ?? ''}
                </td>
                <td className="side-diff-n">{row.after?.n ?? ''}</td>
                <td className="side-diff-text" data-side="after" data-tone={row.after !== null && row.kind !== 'same' ? 'add' : undefined} translate="no">
                  {row.after?.text ?? ''}
                </td>
              </tr>
            ))}
          </tbody>
        ))}
      </table>
      <details className="tech-details">
        <summary>{t(lang, 'chat.diffText')}</summary>
        <pre data-testid="chat-diff-text" translate="no">
          {diff}
        </pre>
      </details>
    </div>
  );
}

export function ChatPanel({ lang, planYaml, onPlanChange }: Props) {
  const chat = useChat({ lang, planYaml, onPlanChange });
  const { items, restored, input, setInput, skills, skill, setSkill, sessionId, pending, undoAvailable, busy } = chat;
  const { startOver, send, decide, undo, cancel } = chat;

  return (
    <section className="panel chat-panel" data-testid="chat-panel" aria-label={t(lang, 'chat.title')}>
      <header className="panel-header">
        <h2>{t(lang, 'chat.title')}</h2>
        {items.length > 0 || sessionId !== undefined ? (
          <button type="button" className="button button-small" data-testid="chat-new" onClick={startOver} disabled={busy}>
            {t(lang, 'chat.newConversation')}
          </button>
        ) : null}
        <label className="chat-skill">
          <span className="muted">{t(lang, 'chat.skill')}</span>{' '}
          <select data-testid="chat-skill" value={skill} onChange={(e) => setSkill(e.target.value)}>
            <option value="">{t(lang, 'chat.skillAuto')}</option>
            {skills.map((s) => (
              <option key={s.name} value={s.name} title={s.description}>
                {s.name}
              </option>
            ))}
          </select>
        </label>
      </header>
      <div className="panel-body chat-body">
        {items.length === 0 && <p className="muted">{t(lang, 'chat.intro')}</p>}
        {restored && items.length > 0 && (
          <p className="muted" data-testid="chat-restored">
            {t(lang, 'chat.restored')}
          </p>
        )}
        <ol className="chat-log" data-testid="chat-log">
          {items.map((item, i) => (
            <li key={i} className={`chat-item chat-${item.kind}`} data-testid={`chat-${item.kind}`}>
              {item.kind === 'user' && (
                <>
                  <strong>{t(lang, 'chat.you')}</strong> <span>{item.text}</span>
                </>
              )}
              {item.kind === 'notice' && (
                <span data-tone={item.tone} role={item.tone === 'error' ? 'alert' : 'status'}>
                  {item.text}
                </span>
              )}
              {item.kind === 'assistant' && (
                <>
                  <strong>{t(lang, 'chat.assistant')}</strong>
                  {item.skill !== undefined && (
                    <span className="muted" data-testid="chat-route">
                      {' '}
                      {t(lang, 'chat.route', { skill: item.skill })}
                    </span>
                  )}
                  {item.steps.map((step) => (
                    <details key={step.callId} className="chat-step" data-testid="chat-step" data-status={step.status}>
                      <summary>
                        <code>{step.tool}</code>{' '}
                        <span data-testid="chat-step-status">
                          {step.status === 'running'
                            ? t(lang, 'chat.stepRunning')
                            : step.status === 'ok'
                              ? t(lang, 'chat.stepOk')
                              : step.errorCode}
                        </span>
                      </summary>
                      <div className="muted">{t(lang, 'chat.arguments')}</div>
                      <pre>{pretty(step.arguments)}</pre>
                      {step.result !== undefined && (
                        <>
                          <div className="muted">{t(lang, 'chat.result')}</div>
                          <pre>{pretty(step.result)}</pre>
                        </>
                      )}
                    </details>
                  ))}
                  {item.text !== undefined && <p className="chat-reply" data-testid="chat-reply">{item.text}</p>}
                  {item.stopped !== undefined && (
                    <p className="muted" role="status">
                      {t(lang, 'chat.stopped', { code: item.stopped })}
                    </p>
                  )}
                </>
              )}
            </li>
          ))}
        </ol>
        {pending.map((change) => (
          <div key={change.change_id} className="chat-pending" data-testid="chat-pending">
            <p title={change.file}>{t(lang, 'chat.pending', { file: fileLabel(lang, change.file) })}</p>
            <DiffView lang={lang} diff={change.diff} />
            <button type="button" className="button button-primary" data-testid="chat-approve" onClick={() => void decide(change, true)}>
              {t(lang, 'chat.approve')}
            </button>{' '}
            <button type="button" className="button" data-testid="chat-reject" onClick={() => void decide(change, false)}>
              {t(lang, 'chat.reject')}
            </button>
          </div>
        ))}
        {undoAvailable && (
          <button type="button" className="button" data-testid="chat-undo" onClick={() => void undo()}>
            {t(lang, 'chat.undo')}
          </button>
        )}
        <form
          className="chat-form"
          onSubmit={(e) => {
            e.preventDefault();
            void send();
          }}
        >
          <textarea
            data-testid="chat-input"
            value={input}
            placeholder={t(lang, 'chat.placeholder')}
            aria-label={t(lang, 'chat.placeholder')}
            rows={2}
            onChange={(e) => setInput(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                void send();
              }
            }}
          />
          {busy ? (
            <button type="button" className="button" data-testid="chat-cancel" onClick={cancel}>
              {t(lang, 'chat.cancel')}
            </button>
          ) : (
            <button type="submit" className="button button-primary" data-testid="chat-send" disabled={input.trim() === ''}>
              {t(lang, 'chat.send')}
            </button>
          )}
        </form>
      </div>
    </section>
  );
}
