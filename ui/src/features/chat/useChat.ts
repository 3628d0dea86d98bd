// The chat's state: the conversation with the studio's agent (keiri-agent) as `ChatPanel` shows
// it, and what it does — sending a message (or a `/skill` command) with the editor's plan,
// approving, rejecting and undoing a proposed change. The agent edits a working copy of the
// editor's plan, so nothing changes in the editor until a change is approved, and then the
// editor gets the approved text through `onPlanChange`.
//
// `/skill NAME` (or the selector) picks the skill for the next messages; `/skill auto` lets
// the router choose again. Any other `/skill-name …` message goes to the agent, whose router
// reads it as a one-off skill command.
//
// The conversation outlives the panel and the app: the server keeps the session (its messages,
// pending changes and undo stack) in `<workspace>/.keiri/chat/<session>.json`, and the panel
// keeps what it shows — the session id, the conversation, the pending changes, undo — in the
// window's localStorage. Both survive a restart: the browser keeps localStorage per origin
// (one `keiri serve` address per workspace), and the desktop window's webview keeps it in the
// app's data folder. After a restart the stored session id continues the same server session,
// so an approval or undo left pending still applies; when the server no longer has that
// session, the panel says so and starts a new one.

import { useEffect, useRef, useState } from 'react';
import { diffLineCounts } from './diffCounts';
import { ApiError, asApiError, chatApprove, chatSend, chatUndo, skillsList } from '../../api';
import type { ChatEvent, Lang, PendingChangeSummary, SkillSummary } from '../../api/types';
import { errorText, t } from '../../shared/i18n';

export interface ChatOptions {
  lang: Lang;
  /** The editor's plan, sent with each message for the agent's working copy. */
  planYaml: string;
  /** An approved change or an undo gave the editor's plan this text. */
  onPlanChange(yaml: string): void;
}

/** One tool call of a turn. */
export interface ChatStep {
  callId: string;
  tool: string;
  arguments: unknown;
  status: 'running' | 'ok' | 'error';
  errorCode?: string;
  result?: unknown;
}

/** One entry of the conversation. */
export type ChatItem =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; skill?: string; steps: ChatStep[]; text?: string; stopped?: string }
  | { kind: 'notice'; text: string; tone: 'info' | 'error' };

/** The assistant entry after `event` (pure, so the event order is tested without a DOM). */
export function applyEvent(item: Extract<ChatItem, { kind: 'assistant' }>, event: ChatEvent): Extract<ChatItem, { kind: 'assistant' }> {
  switch (event.type) {
    case 'route':
      return { ...item, skill: event.skill };
    case 'tool_call_start':
      return {
        ...item,
        steps: [...item.steps, { callId: event.call_id, tool: event.tool, arguments: event.arguments, status: 'running' }],
      };
    case 'tool_call_end':
      return {
        ...item,
        steps: item.steps.map((s) =>
          s.callId === event.call_id && s.status === 'running'
            ? { ...s, status: event.ok ? 'ok' : 'error', errorCode: event.error_code ?? undefined, result: event.result }
            : s,
        ),
      };
    case 'reply':
      return { ...item, text: event.text };
    case 'error':
      return { ...item, stopped: event.code };
    case 'approval_required':
      return item;
  }
}

/** Where the panel keeps its conversation between app starts (see the file comment). */
export const CHAT_STORAGE_KEY = 'keiri.chat.v1';

/** What the panel keeps: enough to show the conversation and continue its session. */
export interface StoredChat {
  sessionId?: string;
  items: ChatItem[];
  pending: PendingChangeSummary[];
  undoAvailable: boolean;
  skill: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The stored chat in `raw` (localStorage text), or null when there is none or it is not ours:
 * storage is shared with other versions of the app and with the person's own tinkering, so
 * anything of another shape is ignored rather than trusted. A turn that was still running when
 * the app closed is marked as stopped: its reply will never arrive.
 */
export function readStoredChat(raw: string | null): StoredChat | null {
  if (raw === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isRecord(value) || !Array.isArray(value.items) || !Array.isArray(value.pending)) return null;
  const sessionId = typeof value.sessionId === 'string' && value.sessionId !== '' ? value.sessionId : undefined;
  const items = (value.items as unknown[]).filter(
    (item): item is ChatItem => isRecord(item) && (item.kind === 'user' || item.kind === 'assistant' || item.kind === 'notice'),
  );
  const settled = items.map((item) =>
    item.kind === 'assistant' && item.text === undefined && item.stopped === undefined && Array.isArray(item.steps)
      ? { ...item, stopped: 'INTERRUPTED' }
      : item,
  );
  const pending = (value.pending as unknown[]).filter(
    (change): change is PendingChangeSummary =>
      isRecord(change) && typeof change.change_id === 'string' && typeof change.file === 'string' && typeof change.diff === 'string',
  );
  return {
    sessionId,
    items: settled,
    pending: sessionId === undefined ? [] : pending,
    undoAvailable: sessionId !== undefined && value.undoAvailable === true,
    skill: typeof value.skill === 'string' ? value.skill : '',
  };
}

function loadStoredChat(): StoredChat | null {
  try {
    return readStoredChat(window.localStorage.getItem(CHAT_STORAGE_KEY));
  } catch {
    // Storage can be disabled (private mode, sandboxed webview): the chat then lasts a session.
    return null;
  }
}

function saveStoredChat(chat: StoredChat | null) {
  try {
    if (chat === null) window.localStorage.removeItem(CHAT_STORAGE_KEY);
    else window.localStorage.setItem(CHAT_STORAGE_KEY, JSON.stringify(chat));
  } catch {
    // Full or disabled storage: the conversation still works, it is just not kept.
  }
}

/** The lower crate's code an API error carries in `details.code` (e.g. `SESSION_NOT_FOUND`). */
function detailCode(error: ApiError): string | null {
  if (!isRecord(error.details)) return null;
  return typeof error.details.code === 'string' ? error.details.code : null;
}

/** `/skill NAME` → the skill name (`''` for auto), else null. */
export function skillCommand(text: string): string | null {
  const match = /^\/skill(?:\s+(\S+))?\s*$/.exec(text.trim());
  if (match === null) return null;
  const name = match[1] ?? '';
  return name === 'auto' ? '' : name;
}

/**
 * How a changed file is named to the user: the session's working copy of the editor's plan
 * (`.keiri/chat/<session>/plan.yaml`) is "the plan in the editor", not an internal path.
 */
export function fileLabel(lang: Lang, file: string): string {
  return /^\.keiri\/chat\/[^/]+\/plan\.yaml$/.test(file.replace(/\\/g, '/')) ? t(lang, 'chat.editorPlan') : file;
}

/**
 * What an approval changed, where: the plan in the editor (not saved to any file yet) or the
 * file written, with the lines the change added and removed; a rejection changed nothing.
 */
export function approvalNotice(lang: Lang, applied: boolean, editorPlan: boolean, file: string, diff: string): string {
  if (!applied) return t(lang, 'chat.rejectedNothing', { file: fileLabel(lang, file) });
  const counts = diffLineCounts(diff);
  const lines = t(lang, 'chat.lines', { added: counts.added, removed: counts.removed });
  return editorPlan ? t(lang, 'chat.approvedEditor', { lines }) : t(lang, 'chat.approvedFile', { file: fileLabel(lang, file), lines });
}

export function useChat({ lang, planYaml, onPlanChange }: ChatOptions) {
  // Read once: the panel mounts once per window, and later changes are written back below.
  const [stored] = useState(loadStoredChat);
  const [items, setItems] = useState<ChatItem[]>(stored?.items ?? []);
  const restored = stored !== null && stored.items.length > 0;
  const [input, setInput] = useState('');
  const [skills, setSkills] = useState<SkillSummary[]>([]);
  const [skill, setSkill] = useState(stored?.skill ?? '');
  const [sessionId, setSessionId] = useState<string | undefined>(stored?.sessionId);
  const [pending, setPending] = useState<PendingChangeSummary[]>(stored?.pending ?? []);
  const [undoAvailable, setUndoAvailable] = useState(stored?.undoAvailable ?? false);
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    const empty = sessionId === undefined && items.length === 0 && skill === '';
    saveStoredChat(empty ? null : { sessionId, items, pending, undoAvailable, skill });
  }, [sessionId, items, pending, undoAvailable, skill]);

  /** Forgets the conversation here (the server keeps its session file). */
  const startOver = () => {
    abort.current?.abort();
    setItems([]);
    setSessionId(undefined);
    setPending([]);
    setUndoAvailable(false);
  };

  useEffect(() => {
    let live = true;
    skillsList()
      .then((res) => live && setSkills(res.skills))
      .catch(() => undefined);
    return () => {
      live = false;
      abort.current?.abort();
    };
  }, []);

  const notice = (text: string, tone: 'info' | 'error' = 'info') => setItems((prev) => [...prev, { kind: 'notice', text, tone }]);
  const failure = (err: unknown) => {
    const error = asApiError(err);
    if (detailCode(error) === 'SESSION_NOT_FOUND') {
      // The stored session is gone from the server (another workspace, a cleaned folder):
      // its pending changes and undo cannot be applied any more.
      setSessionId(undefined);
      setPending([]);
      setUndoAvailable(false);
      notice(t(lang, 'chat.sessionGone'), 'error');
      return;
    }
    notice(t(lang, 'chat.failed', { message: errorText(lang, error.code) }), 'error');
  };

  const send = async () => {
    const text = input.trim();
    if (text === '' || busy) return;
    const picked = skillCommand(text);
    if (picked !== null) {
      setInput('');
      if (picked !== '' && !skills.some((s) => s.name === picked)) {
        notice(t(lang, 'chat.unknownSkill', { name: picked }), 'error');
      } else {
        setSkill(picked);
        notice(picked === '' ? t(lang, 'chat.skillAutoSelected') : t(lang, 'chat.skillSelected', { skill: picked }));
      }
      return;
    }
    setInput('');
    setBusy(true);
    const controller = new AbortController();
    abort.current = controller;
    setItems((prev) => [...prev, { kind: 'user', text }, { kind: 'assistant', steps: [] }]);
    const update = (event: ChatEvent) =>
      setItems((prev) => {
        const last = prev[prev.length - 1];
        if (last === undefined || last.kind !== 'assistant') return prev;
        return [...prev.slice(0, -1), applyEvent(last, event)];
      });
    try {
      const res = await chatSend(
        { session_id: sessionId, message: text, skill: skill === '' ? undefined : skill, plan_yaml: planYaml, lang },
        { onEvent: update, signal: controller.signal },
      );
      setSessionId(res.session_id);
      setPending(res.pending);
      setUndoAvailable(res.undo_available);
      // The reply event may not have streamed (e.g. a transport without events).
      update({ type: 'reply', text: res.reply });
    } catch (err) {
      failure(err);
    } finally {
      setBusy(false);
      abort.current = null;
    }
  };

  const decide = async (change: PendingChangeSummary, approve: boolean) => {
    if (sessionId === undefined) return;
    try {
      const res = await chatApprove({ session_id: sessionId, change_id: change.change_id, approve });
      setPending(res.pending);
      setUndoAvailable(res.undo_available);
      if (res.plan_yaml != null) onPlanChange(res.plan_yaml);
      notice(approvalNotice(lang, res.applied, res.plan_yaml != null, res.file, change.diff));
    } catch (err) {
      const error = asApiError(err);
      // Approved or rejected elsewhere (another window) since this list was shown: drop it.
      if (detailCode(error) === 'CHANGE_NOT_FOUND') setPending((list) => list.filter((c) => c.change_id !== change.change_id));
      failure(err);
    }
  };

  const undo = async () => {
    if (sessionId === undefined) return;
    try {
      const res = await chatUndo({ session_id: sessionId });
      setUndoAvailable(res.undo_available);
      if (res.plan_yaml != null) onPlanChange(res.plan_yaml);
      notice(
        res.plan_yaml != null
          ? t(lang, 'chat.undoneEditor')
          : t(lang, 'chat.undoneFile', { file: fileLabel(lang, res.file) }),
      );
    } catch (err) {
      failure(err);
    }
  };

  /** Stops the turn that is running (its reply never arrives). */
  const cancel = () => abort.current?.abort();

  const state = { items, restored, input, setInput, skills, skill, setSkill, sessionId, pending, undoAvailable, busy };
  return { ...state, startOver, send, decide, undo, cancel };
}
