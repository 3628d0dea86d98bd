// The chat panel against a mocked `keiri serve`: the streamed turn (skill, tool steps with
// their result or error code, the reply), a proposed edit shown as a diff that reaches the
// editor only after 承認, 却下, 元に戻す, and the `/skill` command.

import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ChatEvent, ChatSendResponse } from '../../api/types';
import { ChatPanel } from './ChatPanel';
import { CHAT_STORAGE_KEY, applyEvent, approvalNotice, fileLabel, readStoredChat, skillCommand } from './useChat';

const PLAN = 'id: p\ngraph: []\n';
const NEW_PLAN = 'id: p\ngraph:\n  - id: approve\n';
const DIFF = '--- a/plan.yaml\n+++ b/plan.yaml\n@@ -1,2 +1,3 @@\n id: p\n-graph: []\n+graph:\n+  - id: approve\n';

const EVENTS: ChatEvent[] = [
  { type: 'route', skill: 'plan-editing', reason: 'score', score: 7, allowed_tools: ['read_file', 'apply_patch'] },
  { type: 'tool_call_start', call_id: 'c1', tool: 'read_file', arguments: { path: 'plan.yaml' } },
  { type: 'tool_call_end', call_id: 'c1', tool: 'read_file', ok: true, result: { content: PLAN } },
  { type: 'tool_call_start', call_id: 'c2', tool: 'exstruct_patch', arguments: {} },
  {
    type: 'tool_call_end',
    call_id: 'c2',
    tool: 'exstruct_patch',
    ok: false,
    error_code: 'TOOL_NOT_ALLOWED',
    result: { error_code: 'TOOL_NOT_ALLOWED', allowed_tools: ['read_file', 'apply_patch'] },
  },
  { type: 'tool_call_start', call_id: 'c3', tool: 'apply_patch', arguments: { filePath: 'plan.yaml', patch: '@@' } },
  { type: 'tool_call_end', call_id: 'c3', tool: 'apply_patch', ok: true, result: { status: 'pending_approval' } },
  { type: 'approval_required', change_id: 'chg-1', file: '.keiri/chat/s1/plan.yaml', tool: 'apply_patch', diff: DIFF },
  { type: 'reply', text: '承認ステップを追加する変更を提案しました。' },
];

const RESPONSE: ChatSendResponse = {
  session_id: 's1',
  skill: 'plan-editing',
  reply: '承認ステップを追加する変更を提案しました。',
  events: EVENTS,
  pending: [{ change_id: 'chg-1', file: '.keiri/chat/s1/plan.yaml', diff: DIFF, tool: 'apply_patch' }],
  undo_available: false,
};

interface Call {
  url: string;
  body: Record<string, unknown>;
}

/** A mocked server: JSON answers per function, NDJSON for `chat_send/stream`. */
function server(answers: Record<string, unknown>) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      calls.push({ url, body: JSON.parse(String(init.body)) as Record<string, unknown> });
      if (url === '/api/chat_send/stream') {
        const lines = [...EVENTS.map((event) => JSON.stringify({ event })), JSON.stringify({ result: RESPONSE })].join('\n') + '\n';
        return new Response(lines, { status: 200, headers: { 'content-type': 'application/x-ndjson' } });
      }
      const name = url.replace('/api/', '');
      const answer = answers[name];
      if (answer instanceof Error) {
        return new Response(JSON.stringify({ code: answer.message, message: answer.message }), { status: 409 });
      }
      return new Response(JSON.stringify(answer ?? {}), { status: 200 });
    }),
  );
  return calls;
}

const SKILLS = {
  skills: [
    { name: 'plan-editing', description: 'プランを編集します', triggers: [], file_patterns: [], allowed_tools: [], priority: 10, version: '1' },
    { name: 'general', description: '一般', triggers: [], file_patterns: [], allowed_tools: [], priority: 0, version: '1' },
  ],
  issues: [],
};

async function sendTurn(onPlanChange = vi.fn()) {
  render(<ChatPanel lang="ja" planYaml={PLAN} onPlanChange={onPlanChange} />);
  await screen.findByRole('option', { name: 'plan-editing' });
  fireEvent.change(screen.getByTestId('chat-input'), { target: { value: '承認ステップを追加して' } });
  fireEvent.click(screen.getByTestId('chat-send'));
  await screen.findByTestId('chat-reply');
  return onPlanChange;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  // The panel keeps its conversation in localStorage; each test starts without one.
  window.localStorage.clear();
});

describe('ChatPanel', () => {
  it('shows the turn: skill, tool steps with results or error codes, the reply and the diff', async () => {
    const calls = server({ skills_list: SKILLS });
    const onPlanChange = await sendTurn();
    const send = calls.find((c) => c.url === '/api/chat_send/stream');
    expect(send?.body).toEqual({ message: '承認ステップを追加して', plan_yaml: PLAN, lang: 'ja' });
    expect(screen.getByTestId('chat-route').textContent).toContain('plan-editing');
    const steps = screen.getAllByTestId('chat-step');
    expect(steps.map((s) => s.querySelector('code')?.textContent)).toEqual(['read_file', 'exstruct_patch', 'apply_patch']);
    expect(steps.map((s) => within(s).getByTestId('chat-step-status').textContent)).toEqual(['成功', 'TOOL_NOT_ALLOWED', '成功']);
    expect(steps[1]?.textContent).toContain('allowed_tools');
    expect(screen.getByTestId('chat-reply').textContent).toBe('承認ステップを追加する変更を提案しました。');
    // Before/after columns, not unified-diff text: graph: [] became graph:, one line added.
    const rows = screen.getAllByTestId('chat-diff-row').map((row) =>
      [...row.querySelectorAll('td')].map((cell) => cell.textContent),
    );
    expect(rows).toEqual([
      ['1', 'id: p', '1', 'id: p'],
      ['2', 'graph: []', '2', 'graph:'],
      ['', '', '3', '  - id: approve'],
    ]);
    const diff = screen.getByTestId('chat-diff');
    expect([...diff.querySelectorAll('[data-tone="del"]')].map((cell) => cell.textContent)).toEqual(['graph: []']);
    expect(diff.querySelector('thead')?.textContent).toBe('変更前変更後');
    expect(screen.getByTestId('chat-diff-text').textContent).toBe(DIFF);
    // Proposed only: the editor is untouched until approval.
    expect(onPlanChange).not.toHaveBeenCalled();
    expect(screen.queryByTestId('chat-undo')).toBeNull();
  });

  it('approve writes the change into the editor and undo restores it', async () => {
    const calls = server({
      skills_list: SKILLS,
      chat_approve: { applied: true, file: '.keiri/chat/s1/plan.yaml', plan_yaml: NEW_PLAN, undo_available: true, pending: [] },
      chat_undo: { change_id: 'chg-1', file: '.keiri/chat/s1/plan.yaml', plan_yaml: PLAN, undo_available: false },
    });
    const onPlanChange = await sendTurn();
    fireEvent.click(screen.getByTestId('chat-approve'));
    await waitFor(() => expect(onPlanChange).toHaveBeenCalledWith(NEW_PLAN));
    expect(calls.find((c) => c.url === '/api/chat_approve')?.body).toEqual({ session_id: 's1', change_id: 'chg-1', approve: true });
    // What changed where: the editor's plan, two lines in and one out, and no file yet.
    expect(
      screen.getByText('承認しました。エディタのプランを変更しました（2 行追加・1 行削除）。ファイルにはまだ保存していません。保存は「登録」で行います'),
    ).toBeTruthy();
    expect(screen.queryByTestId('chat-diff')).toBeNull();
    fireEvent.click(await screen.findByTestId('chat-undo'));
    await waitFor(() => expect(onPlanChange).toHaveBeenLastCalledWith(PLAN));
    expect(calls.find((c) => c.url === '/api/chat_undo')?.body).toEqual({ session_id: 's1' });
    await waitFor(() => expect(screen.queryByTestId('chat-undo')).toBeNull());
  });

  it('reject drops the change without touching the editor', async () => {
    const calls = server({
      skills_list: SKILLS,
      chat_approve: { applied: false, file: '.keiri/chat/s1/plan.yaml', undo_available: false, pending: [] },
    });
    const onPlanChange = await sendTurn();
    fireEvent.click(screen.getByTestId('chat-reject'));
    await waitFor(() => expect(screen.queryByTestId('chat-diff')).toBeNull());
    expect(calls.find((c) => c.url === '/api/chat_approve')?.body).toMatchObject({ approve: false });
    expect(onPlanChange).not.toHaveBeenCalled();
    expect(screen.getByText('変更を却下しました。エディタのプラン は変わっていません')).toBeTruthy();
  });

  it('a conflicting approval shows the error and keeps the change', async () => {
    server({ skills_list: SKILLS, chat_approve: new Error('CHANGE_CONFLICT') });
    const onPlanChange = await sendTurn();
    fireEvent.click(screen.getByTestId('chat-approve'));
    expect((await screen.findByRole('alert')).textContent).toContain('提案の後にファイルが変更されたため');
    expect(screen.getByTestId('chat-diff')).toBeTruthy();
    expect(onPlanChange).not.toHaveBeenCalled();
  });

  it('/skill selects a skill for the next messages without sending', async () => {
    const calls = server({ skills_list: SKILLS });
    render(<ChatPanel lang="en" planYaml={PLAN} onPlanChange={() => {}} />);
    await screen.findByRole('option', { name: 'general' });
    fireEvent.change(screen.getByTestId('chat-input'), { target: { value: '/skill general' } });
    fireEvent.click(screen.getByTestId('chat-send'));
    expect(await screen.findByText('Skill “general” selected')).toBeTruthy();
    expect((screen.getByTestId('chat-skill') as HTMLSelectElement).value).toBe('general');
    fireEvent.change(screen.getByTestId('chat-input'), { target: { value: '/skill nope' } });
    fireEvent.click(screen.getByTestId('chat-send'));
    expect(await screen.findByText('There is no skill named “nope”')).toBeTruthy();
    fireEvent.change(screen.getByTestId('chat-input'), { target: { value: 'hello' } });
    fireEvent.click(screen.getByTestId('chat-send'));
    await screen.findByTestId('chat-reply');
    expect(calls.find((c) => c.url === '/api/chat_send/stream')?.body).toMatchObject({ skill: 'general', message: 'hello', lang: 'en' });
  });
});

describe('ChatPanel across a restart', () => {
  it('shows the conversation and the pending change again, and approves it in the same session', async () => {
    const calls = server({
      skills_list: SKILLS,
      chat_approve: { applied: true, file: '.keiri/chat/s1/plan.yaml', plan_yaml: NEW_PLAN, undo_available: true, pending: [] },
    });
    await sendTurn();
    // The app closes: the panel goes away with everything it held in memory.
    cleanup();
    const onPlanChange = vi.fn();
    render(<ChatPanel lang="ja" planYaml="" onPlanChange={onPlanChange} />);
    expect(screen.getByTestId('chat-restored')).toBeTruthy();
    expect(screen.getByTestId('chat-user').textContent).toContain('承認ステップを追加して');
    expect(screen.getByTestId('chat-reply').textContent).toBe('承認ステップを追加する変更を提案しました。');
    expect(screen.getByTestId('chat-diff-text').textContent).toBe(DIFF);
    fireEvent.click(screen.getByTestId('chat-approve'));
    await waitFor(() => expect(onPlanChange).toHaveBeenCalledWith(NEW_PLAN));
    expect(calls.find((c) => c.url === '/api/chat_approve')?.body).toEqual({ session_id: 's1', change_id: 'chg-1', approve: true });
    expect(await screen.findByTestId('chat-undo')).toBeTruthy();
  });

  it('says so and starts over when the server no longer has the session', async () => {
    window.localStorage.setItem(
      CHAT_STORAGE_KEY,
      JSON.stringify({ sessionId: 'gone', items: [{ kind: 'user', text: 'x' }], pending: [{ change_id: 'c', file: 'f', diff: '', tool: 't' }], undoAvailable: true, skill: '' }),
    );
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string) =>
        url === '/api/chat_approve'
          ? new Response(JSON.stringify({ code: 'NOT_FOUND', message: 'no session', details: { code: 'SESSION_NOT_FOUND' } }), { status: 404 })
          : new Response(JSON.stringify(SKILLS), { status: 200 }),
      ),
    );
    render(<ChatPanel lang="ja" planYaml="" onPlanChange={() => {}} />);
    fireEvent.click(screen.getByTestId('chat-approve'));
    expect((await screen.findByRole('alert')).textContent).toBe('前回の会話はサーバーに残っていなかったため、新しい会話を始めます');
    expect(screen.queryByTestId('chat-pending')).toBeNull();
    expect(screen.queryByTestId('chat-undo')).toBeNull();
  });

  it('新しい会話 forgets the stored conversation', async () => {
    server({ skills_list: SKILLS });
    await sendTurn();
    fireEvent.click(screen.getByTestId('chat-new'));
    await waitFor(() => expect(window.localStorage.getItem(CHAT_STORAGE_KEY)).toBeNull());
    expect(screen.queryByTestId('chat-pending')).toBeNull();
  });
});

describe('readStoredChat', () => {
  it.each([null, '', 'not json', '[]', '{"items": 3, "pending": []}'])('ignores %j', (raw) => {
    expect(readStoredChat(raw)).toBeNull();
  });

  it('marks a turn cut off by the restart as stopped and keeps only well-formed entries', () => {
    const raw = JSON.stringify({
      sessionId: 's9',
      items: [{ kind: 'user', text: 'q' }, { kind: 'assistant', steps: [] }, { kind: 'bogus' }, 7],
      pending: [{ change_id: 'c1', file: 'f', diff: 'd', tool: 't' }, { change_id: 2 }],
      undoAvailable: true,
      skill: 'general',
    });
    expect(readStoredChat(raw)).toEqual({
      sessionId: 's9',
      items: [{ kind: 'user', text: 'q' }, { kind: 'assistant', steps: [], stopped: 'INTERRUPTED' }],
      pending: [{ change_id: 'c1', file: 'f', diff: 'd', tool: 't' }],
      undoAvailable: true,
      skill: 'general',
    });
  });

  it('drops pending changes and undo without a session to apply them in', () => {
    const raw = JSON.stringify({ items: [], pending: [{ change_id: 'c1', file: 'f', diff: 'd', tool: 't' }], undoAvailable: true });
    expect(readStoredChat(raw)).toEqual({ sessionId: undefined, items: [], pending: [], undoAvailable: false, skill: '' });
  });
});

describe('approvalNotice', () => {
  it.each([
    [true, true, '.keiri/chat/s1/plan.yaml', 'Approved. The plan in the editor changed (2 lines added, 1 removed); nothing is saved to a file yet — Register saves it'],
    [true, false, 'designs/p_202611221700.yaml', 'Approved and written to designs/p_202611221700.yaml (2 lines added, 1 removed)'],
    [false, false, 'designs/p_202611221700.yaml', 'Change rejected; designs/p_202611221700.yaml is unchanged'],
  ])('applied %s, editor plan %s, %s', (applied, editorPlan, file, expected) => {
    expect(approvalNotice('en', applied, editorPlan, file, DIFF)).toBe(expected);
  });
});

describe('applyEvent', () => {
  it('builds the steps in event order', () => {
    let item: Parameters<typeof applyEvent>[0] = { kind: 'assistant', steps: [] };
    for (const event of EVENTS) item = applyEvent(item, event);
    expect(item.skill).toBe('plan-editing');
    expect(item.steps.map((s) => [s.tool, s.status, s.errorCode])).toEqual([
      ['read_file', 'ok', undefined],
      ['exstruct_patch', 'error', 'TOOL_NOT_ALLOWED'],
      ['apply_patch', 'ok', undefined],
    ]);
    item = applyEvent(item, { type: 'error', code: 'TOOL_FAILURE_LIMIT', message: 'x' });
    expect(item.stopped).toBe('TOOL_FAILURE_LIMIT');
  });
});

describe('skillCommand', () => {
  it.each([
    ['/skill plan-editing', 'plan-editing'],
    ['/skill auto', ''],
    ['/skill', ''],
    ['/plan-editing 追加して', null],
    ['hello', null],
  ])('%s → %s', (text, expected) => {
    expect(skillCommand(text)).toBe(expected);
  });
});

describe('fileLabel', () => {
  it.each([
    ['.keiri/chat/s1/plan.yaml', 'エディタのプラン'],
    ['.keiri\\chat\\s1\\plan.yaml', 'エディタのプラン'],
    ['designs/p_202611221700.yaml', 'designs/p_202611221700.yaml'],
    ['.keiri/chat/s1/other.yaml', '.keiri/chat/s1/other.yaml'],
  ])('%s → %s', (file, expected) => {
    expect(fileLabel('ja', file)).toBe(expected);
  });
});
