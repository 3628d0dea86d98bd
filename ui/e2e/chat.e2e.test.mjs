// End-to-end: the Design chat (ChatPanel → keiri-api chat_send / chat_approve / chat_undo) in
// headless Chromium against `keiri serve`, with a fake OpenAI-compatible LLM server
// (support.mjs, on 127.0.0.1:0) that answers tool calls from a script written here and records
// every request, so the test asserts on the tools offered and the tool results sent back.
//
// Journey: 「承認ステップを追加して」 → the plan-editing skill reads the session's working copy
// of the plan, proposes an `apply_patch` and validates it → the steps (collapsible) and the
// diff are shown → 承認 puts the edited plan in the editor and the validation status follows →
// 元に戻す restores the original. Then the same edit 却下 (rejected) leaves the plan as it was,
// and a tool outside the skill's scope is answered with TOOL_NOT_ALLOWED while the turn goes on.
//
// Needs what studio.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH). Screenshots go to ui/test-results/screenshots/ (gitignored).

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  checkScreen,
  completion,
  launchChromium,
  openPage,
  REPO,
  requirePrerequisites,
  scanStep,
  screenshot,
  startFakeLlm,
  startServe,
} from './support.mjs';

/** The tools the plan-editing skill allows, read from its SKILL.md (the bundled skillpack). */
function allowedTools(skill) {
  const text = readFileSync(path.join(REPO, 'skillpacks', skill, 'SKILL.md'), 'utf8');
  const block = /^allowed_tools:\n((?:\s+- .+\n)+)/m.exec(text);
  assert.ok(block, `allowed_tools in ${skill}/SKILL.md`);
  return block[1]
    .split('\n')
    .map((line) => line.replace(/^\s+- /, '').trim())
    .filter((line) => line !== '');
}

// The plan the chat edits, pasted into the editor (the studio opens without a plan).
const PLAN = readFileSync(new URL('../tests/fixtures/sample-plan.yaml', import.meta.url), 'utf8');

// ---- The edit the fake model proposes: an approval step before the CSV export. ----

const APPROVAL_NODE = [
  '  - id: approve_export',
  '    block: ui.confirmation',
  '    in:',
  '      message: 高額請求書をCSVに出力します。よろしいですか？',
  '    out:',
  '      approved: approved',
  // Never used later: the validator warns, so the status visibly follows the approved plan.
  '      comment: comment',
];

/** `plan` with the approval node before `save_large`, which then runs only when approved. */
function withApprovalStep(plan) {
  const lines = plan.split('\n');
  const at = lines.indexOf('  - id: save_large');
  assert.notEqual(at, -1, `the plan has a save_large node:\n${plan}`);
  lines.splice(at, 0, ...APPROVAL_NODE);
  lines.splice(at + APPROVAL_NODE.length + 2, 0, '    when: "${approve_export.approved}"');
  return lines.join('\n');
}

/** A one-hunk unified diff from `before` to `after` with three lines of context. */
function unifiedDiff(file, before, after) {
  const a = before.split('\n');
  const b = after.split('\n');
  // Both end with "\n", so both split into a last empty string; the diff covers real lines.
  a.pop();
  b.pop();
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix += 1;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix += 1;
  const start = Math.max(0, prefix - 3);
  const endA = Math.min(a.length, a.length - suffix + 3);
  const endB = Math.min(b.length, b.length - suffix + 3);
  const body = [];
  for (let i = start; i < prefix; i += 1) body.push(` ${a[i]}`);
  for (let i = prefix; i < a.length - suffix; i += 1) body.push(`-${a[i]}`);
  for (let i = prefix; i < b.length - suffix; i += 1) body.push(`+${b[i]}`);
  for (let i = a.length - suffix; i < endA; i += 1) body.push(` ${a[i]}`);
  const header = `@@ -${start + 1},${endA - start} +${start + 1},${endB - start} @@`;
  return `--- a/${file}\n+++ b/${file}\n${header}\n${body.join('\n')}\n`;
}

// ---- The fake LLM ----

const toolCall = (id, name, args) =>
  completion({ content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, 'tool_calls');
const text = (content) => completion({ content }, 'stop');

/** The working copy the agent was told about in its system prompt. */
function planPath(body) {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const match = /The current plan is the file `([^`]+)`/.exec(system);
  assert.ok(match, `the system prompt names the current plan:\n${system}`);
  return match[1];
}

/** The parsed result of the tool call `callId`, as sent back to the model. */
function toolResult(body, callId) {
  const message = body.messages.find((m) => m.role === 'tool' && m.tool_call_id === callId);
  assert.ok(message, `the result of ${callId} was sent back`);
  return JSON.parse(message.content);
}

/**
 * The plan edit as a model would do it: read the plan, patch it (the diff computed from what
 * read_file returned), validate, answer. Each step is a function of the request it answers.
 */
function editScript(turn) {
  return [
    (body) => toolCall(`${turn}-read`, 'read_file', { path: planPath(body) }),
    (body) => {
      const read = toolResult(body, `${turn}-read`);
      return toolCall(`${turn}-patch`, 'apply_patch', {
        filePath: read.path,
        patch: unifiedDiff(read.path, read.content, withApprovalStep(read.content)),
      });
    },
    () => toolCall(`${turn}-validate`, 'validate_plan', {}),
    () => text('保存の前に確認ステップ approve_export を追加しました。承認すると保存されます。'),
  ];
}

// ---- keiri serve and the browser ----

/** `keiri serve` on `workspace` talking to the fake LLM only, without retries. */
const startStudio = (workspace, llmBaseUrl) =>
  startServe(workspace, { llmBaseUrl, env: { KEIRI_LLM_MODEL: 'fake-model', KEIRI_LLM_MAX_RETRIES: '0' } });

/** The editor's text, line by line from CodeMirror's DOM (the plan is short: all lines render). */
function editorText(page) {
  return page.locator('.cm-content .cm-line').evaluateAll((lines) => lines.map((line) => line.textContent).join('\n'));
}

async function waitForEditorText(page, expected) {
  await page.waitForFunction(
    (want) => [...document.querySelectorAll('.cm-content .cm-line')].map((line) => line.textContent).join('\n') === want,
    expected,
  );
}

describe('the Design chat edits the plan only after approval', () => {
  const SKILL_TOOLS = allowedTools('plan-editing');
  let workspace;
  let llm;
  let serve;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => scanStep(page, 'chat', t));
  let original;
  const pageErrors = [];

  /** Sends `message` in the chat and waits for the turn's reply (the `n`th reply). */
  async function send(message, n) {
    await page.getByTestId('chat-input').fill(message);
    await page.getByTestId('chat-send').click();
    await page.getByTestId('chat-reply').nth(n - 1).waitFor();
    await page.getByTestId('chat-send').waitFor();
  }

  before(async () => {
    requirePrerequisites();
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-studio-e2e-chat-'));
    llm = await startFakeLlm([
      // 1: approved, then undone.
      ...editScript('t1'),
      // 2: the same edit, rejected.
      ...editScript('t2'),
      // 3: a tool the skill does not allow, then the answer.
      () => toolCall('t3-workbook', 'exstruct_patch', { xlsx_path: 'inputs/report.xlsx', ops: [] }),
      () => text('ブックの編集はこのスキルではできません。プランの編集なら承認ステップの追加などができます。'),
    ]);
    serve = await startStudio(workspace, llm.url);
    browser = await launchChromium();
    page = await openPage(browser, serve.url, pageErrors);
    await page.getByTestId('editor-content').click();
    await page.keyboard.press('Control+A');
    await page.keyboard.insertText(PLAN);
    await page.locator('.cm-content', { hasText: 'save_large' }).waitFor();
    await page.locator('[data-testid="validation-status"][data-tone="ok"]').waitFor();
    original = await editorText(page);
    await page.getByTestId('right-tab-questions').click();
    await page.getByTestId('chat-panel').waitFor();
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    llm?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('proposes an approval step as a diff after read → patch → validate', async () => {
    await send('承認ステップを追加して', 1);

    // What the agent sent: the skill's tools only, and each tool's result on the next request.
    const [first, second, third, fourth] = llm.requests.map((r) => r.body);
    assert.equal(llm.requests.length, 4);
    assert.equal(first.model, 'fake-model');
    assert.deepEqual(first.tools.map((tool) => tool.function.name).sort(), [...SKILL_TOOLS].sort());
    assert.equal(first.messages.at(-1).content, '承認ステップを追加して');
    const copy = planPath(first);
    assert.match(copy, /^\.keiri\/chat\/[A-Za-z0-9_-]+\/plan\.yaml$/);
    const read = toolResult(second, 't1-read');
    assert.equal(read.path, copy);
    assert.equal(read.content, `${original}`);
    const patched = toolResult(third, 't1-patch');
    assert.equal(patched.status, 'pending_approval');
    assert.equal(patched.path, copy);
    const validated = toolResult(fourth, 't1-validate');
    assert.equal(validated.valid, true);
    assert.deepEqual(
      validated.findings.map((f) => f.code),
      ['output.unused'],
      'validate_plan saw the pending text',
    );
    // Nothing is written before approval.
    assert.equal(readFileSync(path.join(workspace, copy), 'utf8'), original);

    // The steps, collapsed, one per tool call.
    const assistant = page.getByTestId('chat-assistant').nth(0);
    assert.match((await assistant.getByTestId('chat-route').textContent()) ?? '', /plan-editing/);
    const steps = assistant.getByTestId('chat-step');
    assert.deepEqual(await steps.locator('summary code').allTextContents(), ['read_file', 'apply_patch', 'validate_plan']);
    assert.deepEqual(await steps.evaluateAll((all) => all.map((s) => s.dataset.status)), ['ok', 'ok', 'ok']);
    assert.deepEqual(await steps.evaluateAll((all) => all.map((s) => s.open)), [false, false, false]);
    const patchStep = steps.nth(1);
    assert.equal(await patchStep.locator('pre').first().isVisible(), false);
    await patchStep.locator('summary').click();
    await patchStep.locator('pre', { hasText: 'approve_export' }).first().waitFor();
    assert.equal(await patchStep.evaluate((s) => s.open), true);
    await patchStep.locator('summary').click();
    assert.match((await assistant.getByTestId('chat-reply').textContent()) ?? '', /approve_export/);

    // The diff awaiting approval.
    const pending = page.getByTestId('chat-pending');
    assert.equal(await pending.count(), 1);
    assert.match((await pending.textContent()) ?? '', new RegExp(copy.replaceAll('.', '\\.')));
    // Shown as before/after columns: the new lines on the right against empty cells.
    assert.deepEqual(await pending.locator('thead th').allTextContents(), ['変更前', '変更後']);
    const added = await pending.locator('[data-side="after"][data-tone="add"]').allTextContents();
    assert.ok(added.some((line) => line === '  - id: approve_export'), added.join('\n'));
    assert.ok(added.some((line) => line === '    when: "${approve_export.approved}"'), added.join('\n'));
    assert.equal(await pending.locator('[data-tone="del"]').count(), 0);
    assert.equal(await pending.locator('[data-kind="added"]').count(), added.length);
    // The editor still shows the original plan.
    assert.equal(await editorText(page), original);
    await pending.scrollIntoViewIfNeeded();
    await screenshot(page, 'screenshots/08-chat-diff.png');
    await checkScreen(page, 'chat-08-diff');
  });

  it('keeps the conversation and the pending approval across a tab switch', async () => {
    const before = await page.getByTestId('chat-reply').allTextContents();
    await page.getByTestId('right-tab-findings').click();
    await page.getByTestId('right-tab-dryrun').click();
    await page.getByTestId('right-tab-questions').click();
    assert.deepEqual(await page.getByTestId('chat-reply').allTextContents(), before);
    assert.equal(await page.getByTestId('chat-pending').count(), 1);
    assert.equal(await page.getByTestId('chat-approve').isVisible(), true);
  });

  it('approves: the editor shows the edited plan and the validation follows', async () => {
    await page.getByTestId('chat-approve').click();
    const edited = withApprovalStep(original);
    await waitForEditorText(page, edited);
    await page.getByTestId('chat-undo').waitFor();
    assert.equal(await page.getByTestId('chat-pending').count(), 0);
    // The unused `comment` output: a warning that the original plan did not have.
    await page.locator('[data-testid="validation-status"][data-tone="warning"]').waitFor();
    assert.match((await page.getByTestId('validation-status').textContent()) ?? '', /1/);
    assert.equal(readFileSync(path.join(workspace, planPath(llm.requests[0].body)), 'utf8'), edited);
  });

  it('undoes: the editor shows the original plan again', async () => {
    await page.getByTestId('chat-undo').click();
    await waitForEditorText(page, original);
    await page.locator('[data-testid="validation-status"][data-tone="ok"]').waitFor();
    await page.getByTestId('chat-undo').waitFor({ state: 'detached' });
    assert.equal(readFileSync(path.join(workspace, planPath(llm.requests[0].body)), 'utf8'), original);
  });

  it('rejects the same edit: the plan stays as it was', async () => {
    await send('もう一度、承認ステップを追加して', 2);
    assert.equal(llm.requests.length, 8);
    // The same session and working copy; the plan sent is the restored one.
    assert.equal(planPath(llm.requests[4].body), planPath(llm.requests[0].body));
    assert.equal(toolResult(llm.requests[5].body, 't2-read').content, original);
    const pending = page.getByTestId('chat-pending');
    await pending.waitFor();
    await page.getByTestId('chat-reject').click();
    await pending.waitFor({ state: 'detached' });
    await page.locator('[data-testid="chat-notice"]', { hasText: '却下' }).waitFor();
    assert.equal(await editorText(page), original);
    assert.equal(await page.getByTestId('chat-undo').count(), 0);
    assert.equal(readFileSync(path.join(workspace, planPath(llm.requests[0].body)), 'utf8'), original);
  });

  it('answers a tool outside the skill with TOOL_NOT_ALLOWED and goes on to the reply', async () => {
    await send('保存ステップを変更して', 3);
    assert.equal(llm.requests.length, 10);
    assert.deepEqual(llm.requests[8].body.tools.map((tool) => tool.function.name).sort(), [...SKILL_TOOLS].sort());
    const refused = toolResult(llm.requests[9].body, 't3-workbook');
    assert.equal(refused.error_code, 'TOOL_NOT_ALLOWED');
    assert.equal(refused.tool, 'exstruct_patch');
    assert.deepEqual([...refused.allowed_tools].sort(), [...SKILL_TOOLS].sort());

    const assistant = page.getByTestId('chat-assistant').nth(2);
    assert.match((await assistant.getByTestId('chat-route').textContent()) ?? '', /plan-editing/);
    const step = assistant.getByTestId('chat-step');
    assert.equal(await step.count(), 1);
    assert.equal(await step.getAttribute('data-status'), 'error');
    assert.equal((await step.locator('summary code').textContent())?.trim(), 'exstruct_patch');
    assert.equal((await step.getByTestId('chat-step-status').textContent())?.trim(), 'TOOL_NOT_ALLOWED');
    assert.match((await assistant.getByTestId('chat-reply').textContent()) ?? '', /このスキルではできません/);
    assert.equal(await page.getByTestId('chat-pending').count(), 0);
    assert.equal(await editorText(page), original);
  });

  it('raised no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
