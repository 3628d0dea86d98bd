// End-to-end: the Design tab as a new user meets it, and what it keeps (issue 19, items 2, 4
// and 7), in headless Chromium against `keiri serve` with a fake OpenAI-compatible LLM for the
// chat.
//
// Journey: the first screen shows the three steps (指示を書く → 資料を添付 → 自動生成), no plan and
// no 登録 → an example instruction fills the instruction → a plan pasted into the editor is drawn
// with each node's Japanese title and its block id under it → 登録 asks the plan's name,
// proposed from the instruction, and the file saved is the one shown even though the server's
// clock is elsewhere → a workbook patch previewed in the dry run is written to outputs/, not
// beside the input → the chat's conversation and pending approval survive a page reload, and
// approving after the reload says what changed where.
//
// Needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist) and Chromium (CHROMIUM_PATH); the
// workbook is the repository's own sample (samples/trial_balance.xlsx). Screenshots go to
// ui/test-results/screenshots/ (gitignored).

import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import {
  collectPageErrors,
  completion,
  launchChromium,
  pasteIntoEditor,
  REPO,
  requireFile,
  requirePrerequisites,
  scanStep,
  screenshot,
  startFakeLlm,
  startServe,
  TIMEOUT_MS,
} from './support.mjs';

const SAMPLE_BOOK = path.join(REPO, 'samples', 'trial_balance.xlsx');

// The plan pasted after the first screen: the planner's default id, as a generated plan has.
const PLAN = `apiVersion: v1
id: generated_plan
version: 0.1.0
graph:
  - id: read_invoices
    block: csv.read
    in:
      path: inputs/invoices.csv
    out:
      rows: invoices
  - id: large_invoices
    block: transforms.filter_rows
    in:
      rows: "\${read_invoices.invoices}"
      condition: 金額 >= 100000
    out:
      rows: large
  - id: save_large
    block: csv.write
    in:
      rows: "\${large_invoices.large}"
      out_name: large_invoices.csv
`;

// A workbook patch with no out_dir: its result must not land in inputs/ beside the source.
const PATCH_PLAN = `apiVersion: v1
id: book_check
version: 0.1.0
graph:
  - id: mark_checked
    block: excel.patch_workbook
    in:
      xlsx_path: inputs/book.xlsx
      operations:
        - {op: set_value, sheet: 試算表, cell: D2, value: 確認済}
`;

// The page's clock: the minute the register step will show. The server's clock is today, so a
// file named by the server's time could never carry this stamp.
const FROZEN = new Date(2026, 3, 1, 9, 30, 12);
const FROZEN_STAMP = '202604010930';

const EXAMPLE = '請求書CSVから重複している請求書を見つけて、Excelのレポートにまとめる';
const CONDITION = '      condition: 金額 >= 100000';
const EDITED = '      condition: 金額 >= 50000';

// ---- The fake LLM: one chat turn that proposes changing the filter's threshold. ----

const toolCall = (id, name, args) =>
  completion({ content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] }, 'tool_calls');

/** The working copy the agent was told about in its system prompt. */
function planPath(body) {
  const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
  const match = /The current plan is the file `([^`]+)`/.exec(system);
  assert.ok(match, `the system prompt names the current plan:\n${system}`);
  return match[1];
}

/** A one-line change of `plan` as a unified diff with three lines of context around it. */
function thresholdDiff(file, plan) {
  const lines = plan.split('\n');
  lines.pop();
  const at = lines.indexOf(CONDITION);
  assert.notEqual(at, -1, `the plan has the condition line:\n${plan}`);
  const start = Math.max(0, at - 3);
  const end = Math.min(lines.length, at + 4);
  const body = [];
  for (let i = start; i < end; i += 1) {
    if (i === at) body.push(`-${CONDITION}`, `+${EDITED}`);
    else body.push(` ${lines[i]}`);
  }
  return `--- a/${file}\n+++ b/${file}\n@@ -${start + 1},${end - start} +${start + 1},${end - start} @@\n${body.join('\n')}\n`;
}

/** The editor's text, line by line from CodeMirror's DOM (the plans here are short). */
function editorText(page) {
  return page.locator('.cm-content .cm-line').evaluateAll((lines) => lines.map((line) => line.textContent).join('\n'));
}

describe('first screen, names and places, a chat that is kept', () => {
  let workspace;
  let llm;
  let serve;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => scanStep(page, 'firstrun', t));
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    requireFile(SAMPLE_BOOK, 'the sample workbook');
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-e2e-firstrun-'));
    mkdirSync(path.join(workspace, 'inputs'));
    copyFileSync(SAMPLE_BOOK, path.join(workspace, 'inputs', 'book.xlsx'));
    llm = await startFakeLlm([
      (body) => toolCall('t1-read', 'read_file', { path: planPath(body) }),
      (body) => {
        const read = JSON.parse(body.messages.find((m) => m.role === 'tool' && m.tool_call_id === 't1-read').content);
        return toolCall('t1-patch', 'apply_patch', { filePath: read.path, patch: thresholdDiff(read.path, read.content) });
      },
      () => completion({ content: '高額の基準を 50,000 円に下げる変更を提案しました。承認するとエディタのプランに反映されます。' }, 'stop'),
    ]);
    serve = await startServe(workspace, { llmBaseUrl: llm.url, env: { KEIRI_LLM_MODEL: 'fake-model', KEIRI_LLM_MAX_RETRIES: '0' } });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'ja-JP' });
    page.setDefaultTimeout(TIMEOUT_MS);
    collectPageErrors(page, pageErrors);
    // Only Date is frozen; timers (the validation debounce) keep running.
    await page.clock.setFixedTime(FROZEN);
    await page.goto(serve.url);
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    llm?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('opens on the three steps, with no plan and nothing to register', async () => {
    await page.locator('[data-testid="catalog-block"][data-block-id="csv.read"]').waitFor();
    const steps = page.getByTestId('first-step');
    assert.equal(await steps.count(), 3);
    const titles = await steps.locator('.first-step-title').allTextContents();
    assert.deepEqual(titles, ['指示を書く', '資料を添付', '自動生成']);
    assert.equal(await page.getByTestId('example-instruction').count(), 3);
    assert.equal(await editorText(page), '');
    assert.equal(await page.getByTestId('register').isDisabled(), true);
    assert.equal(await page.getByTestId('register-target').getAttribute('data-empty'), 'true');
    assert.notEqual(await page.getByTestId('validation-status').getAttribute('data-tone'), 'ok');
    assert.doesNotMatch((await page.getByTestId('validation-status').textContent()) ?? '', /問題ありません/);
    // ドライラン and 試行実行 say what they do before they are opened.
    assert.match((await page.getByTestId('right-tab-dryrun').getAttribute('title')) ?? '', /ファイルを読み書きせずに/);
    assert.match((await page.getByTestId('right-tab-run').getAttribute('title')) ?? '', /元のファイルは変更しません/);
    await screenshot(page, 'screenshots/00-first-screen.png');
  });

  it('fills the instruction with an example when it is clicked', async () => {
    await page.getByTestId('example-instruction').first().click();
    assert.equal(await page.getByTestId('instruction').inputValue(), EXAMPLE);
    await page.getByTestId('left-tab-candidates').click();
    assert.match((await page.getByTestId('explain-pin').textContent()) ?? '', /固定/);
  });

  it('draws each node with its Japanese title, the block id under it and every name on hover', async () => {
    await pasteIntoEditor(page, PLAN);
    await page.locator('[data-testid="validation-status"]:is([data-tone="ok"], [data-tone="warning"])').waitFor();
    assert.equal(await page.getByTestId('first-steps').count(), 0, 'the steps give way to the plan');
    await page.getByTestId('view-graph').click();
    const nodes = page.getByTestId('graph-node');
    await nodes.first().waitFor();
    assert.deepEqual(await nodes.getByTestId('graph-node-title').allTextContents(), [
      'CSVファイルを読み込む',
      '条件で行を絞り込む',
      'CSVファイルに書き出す',
    ]);
    assert.deepEqual(await nodes.getByTestId('graph-node-subtitle').allTextContents(), ['csv.read', 'transforms.filter_rows', 'csv.write']);
    assert.equal(await nodes.first().getAttribute('title'), 'CSVファイルを読み込む\nノード ID: read_invoices\nブロック: csv.read');
    await screenshot(page, 'screenshots/00-graph-titles.png');
    await page.getByTestId('view-editor').click();
  });

  it('asks the name before registering and saves the file it showed', async () => {
    await page.getByTestId('register').click();
    const dialog = page.getByTestId('register-dialog');
    await dialog.waitFor();
    // Proposed from the instruction, not the planner's generated_plan.
    assert.equal(await page.getByTestId('register-name').inputValue(), '請求書CSVから重複している請求書を見つけて');
    await page.getByTestId('register-name').fill('請求書の重複チェック');
    const shown = `designs/請求書の重複チェック_${FROZEN_STAMP}.yaml`;
    assert.equal((await page.getByTestId('register-preview').textContent())?.trim(), shown);
    await screenshot(page, 'screenshots/00-register-name.png');
    await page.getByTestId('register-confirm').click();
    await page.locator('[data-testid="register-result"][data-state="ok"]').waitFor();
    const fileName = ((await page.getByTestId('register-file').textContent()) ?? '').trim();
    assert.equal(`designs/${fileName}`, shown);
    assert.deepEqual(readdirSync(path.join(workspace, 'designs')), [`請求書の重複チェック_${FROZEN_STAMP}.yaml`]);
    const saved = readFileSync(path.join(workspace, 'designs', fileName), 'utf8');
    assert.equal(saved, PLAN.replace('id: generated_plan', 'id: 請求書の重複チェック'));
    // The editor holds the plan as saved, its id included.
    assert.equal(await editorText(page), saved);
  });

  it('writes a previewed workbook patch to outputs/, never beside the input', async () => {
    await pasteIntoEditor(page, PATCH_PLAN);
    await page.getByTestId('right-tab-dryrun').click();
    assert.match((await page.getByTestId('right-explain').textContent()) ?? '', /ドライラン/);
    await page.getByTestId('dryrun-run').click();
    await page.locator('[data-testid="workbook-preview"][data-status="ready"]').waitFor();
    await page.getByTestId('workbook-apply').click();
    await page.getByTestId('workbook-apply-confirm').click();
    const applied = page.getByTestId('workbook-applied');
    await applied.waitFor();
    assert.match((await applied.getAttribute('data-path')) ?? '', /[/\\]outputs[/\\]book_patched\.xlsx$/);
    assert.ok(existsSync(path.join(workspace, 'outputs', 'book_patched.xlsx')), 'the patched copy is in outputs/');
    assert.deepEqual(readdirSync(path.join(workspace, 'inputs')), ['book.xlsx'], 'nothing new beside the input');
    await screenshot(page, 'screenshots/00-output-folder.png');
  });

  it('keeps the chat’s conversation and pending approval across a reload, then says what the approval changed', async () => {
    await pasteIntoEditor(page, PLAN);
    await page.locator('[data-testid="validation-status"]:is([data-tone="ok"], [data-tone="warning"])').waitFor();
    await page.getByTestId('right-tab-questions').click();
    await page.getByTestId('chat-skill').selectOption('plan-editing');
    await page.getByTestId('chat-input').fill('高額の基準を5万円にして');
    await page.getByTestId('chat-send').click();
    await page.getByTestId('chat-reply').waitFor();
    await page.getByTestId('chat-pending').waitFor();
    const reply = await page.getByTestId('chat-reply').textContent();

    // Closing and opening again: the same browser profile, a new page load.
    await page.reload();
    await page.getByTestId('right-tab-questions').click();
    await page.getByTestId('chat-restored').waitFor();
    assert.deepEqual(await page.getByTestId('chat-user').allTextContents(), ['あなた 高額の基準を5万円にして']);
    assert.equal(await page.getByTestId('chat-reply').textContent(), reply);
    assert.equal(await page.getByTestId('chat-pending').count(), 1);
    const removed = await page.locator('[data-testid="chat-pending"] [data-tone="del"]').allTextContents();
    assert.ok(removed.some((line) => line.includes('金額 >= 100000')), removed.join(''));
    // The plan being written is kept too.
    assert.equal(await editorText(page), PLAN);
    await screenshot(page, 'screenshots/00-chat-restored.png');

    await page.getByTestId('chat-approve').click();
    await page.waitForFunction(
      (want) => [...document.querySelectorAll('.cm-content .cm-line')].map((line) => line.textContent).join('\n') === want,
      PLAN.replace(CONDITION, EDITED),
    );
    const notice = page.locator('[data-testid="chat-notice"]').last();
    assert.equal(
      (await notice.textContent())?.trim(),
      '承認しました。エディタのプランを変更しました（1 行追加・1 行削除）。ファイルにはまだ保存していません。保存は「登録」で行います',
    );
    await page.getByTestId('chat-undo').waitFor();
    // Only the editor changed: the one registered plan is as it was saved.
    assert.equal(readdirSync(path.join(workspace, 'designs')).length, 1);
  });

  it('raised no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
