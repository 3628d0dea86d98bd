// End-to-end: 試行実行 (the sample run) in headless Chromium against `keiri serve`, no LLM.
//
// Journey: attach the shipped sample invoices CSV → compose a plan from two shipped templates
// (invoice duplicate detection + exception report) → answer its questions → sample-run it:
// every node up to the confirmation is done on the graph and in the list, the duplicate rows
// are in the detect node's grid, the report workbook the run wrote is shown cell by cell, and
// the run pauses at the confirmation → reload the page (the app closed and reopened): the
// paused run is shown again → confirm → the same run finishes, the notification recorded in
// the run folder, the attached CSV byte-identical → 「この結果で書き込む」 puts the report
// workbook in the workspace, and undo takes it back → register the plan → 登録済みのプラン:
// reopen it, choose April's file (the last run's file pre-filled), run, confirm with a comment,
// write the report and read it back → both runs listed with the files they wrote. The
// expected rows are the sample file's own (samples/README.md) and April's, written here by
// hand.
//
// Needs what design.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH).

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { checkScreen, launchChromium, openPage, REPO, requireFile, requirePrerequisites, scanStep, screenshot, startServe } from './support.mjs';

const SAMPLE = path.join(REPO, 'samples', 'invoices.csv');
const TEMPLATES = ['invoice_duplicate_detection', 'exception_report'];

/** Every file under `dir`, recursively. */
function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? walk(full) : [full];
  });
}

describe('試行実行 against keiri serve', () => {
  let workspace;
  let serve;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => scanStep(page, 'run', t));
  const pageErrors = [];
  const sample = () => readFileSync(SAMPLE);

  before(async () => {
    requirePrerequisites();
    requireFile(SAMPLE, 'the sample invoices');
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-run-e2e-'));
    serve = await startServe(workspace);
    browser = await launchChromium();
    page = await openPage(browser, serve.url, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('composes the duplicate-invoice report from the templates and answers its questions', async () => {
    await page.getByTestId('instruction').fill('請求書の重複を検出して例外レポートを作り、担当者に知らせる');
    await page.getByTestId('document-input').setInputFiles({ name: 'invoices.csv', mimeType: 'text/csv', buffer: sample() });
    await page.locator('[data-testid="document"][data-name="invoices.csv"][data-status="ready"]').waitFor();
    await page.locator('details.templates > summary').click();
    for (const id of TEMPLATES) {
      await page.locator(`[data-testid="template"][data-template-id="${id}"] input`).check();
    }
    // No model is configured here: the default mode composes from the templates, and says so,
    // instead of failing because AI is not set up (issue 34, item 4).
    assert.equal(await page.getByTestId('apply-mode').inputValue(), 'auto');
    await page.getByTestId('generate').click();
    // Composed offline: the attached CSV is the file to read; the plan needs the recipient.
    await page.locator('[data-testid="generate-result"][data-status="needs_answers"]').waitFor();
    assert.match((await page.getByTestId('generate-result').textContent()) ?? '', /AIが設定されていないため、テンプレート合成で作りました/);
    await page.getByTestId('right-tab-questions').click();
    const answered = [];
    for (let round = 0; round < 6; round += 1) {
      const question = page.getByTestId('question');
      const more = await Promise.race([
        question.waitFor().then(() => true),
        page.getByTestId('questions-empty').waitFor().then(() => false),
      ]);
      if (!more) break;
      const id = await question.getAttribute('data-requirement-id');
      const control = await question.getByTestId('question-input').getAttribute('data-control');
      if (control === 'file') {
        await question.getByTestId('question-file-choice').selectOption('inputs/invoices.csv');
      } else if (id === 'notify_channel') {
        const input = question.getByTestId('question-input');
        if (control === 'select') await input.selectOption('file');
        else await input.fill('file');
      } else {
        await question.getByTestId('question-input').fill('keiri@example.co.jp');
      }
      await question.getByTestId('question-submit').click();
      await page.locator(`[data-testid="vars-preview"]:has-text("${id}")`).waitFor();
      answered.push(id);
    }
    assert.deepEqual(answered.sort(), ['notify_channel', 'notify_to']);
    assert.match((await page.getByTestId('generate-result').textContent()) ?? '', /添付のファイル inputs\/invoices\.csv を使います/);
    await page.locator('[data-testid="register-target"][data-blocked="false"]').waitFor();
  });

  it('runs the plan on the attached file: node states, the duplicate rows, the report workbook, then a pause', async () => {
    await page.getByTestId('right-tab-run').click();
    await page.getByTestId('sample-run-empty').waitFor();
    await page.getByTestId('sample-run-start').click();
    await page.locator('[data-testid="sample-run"][data-status="paused"]').waitFor();
    const states = await page.getByTestId('run-node').evaluateAll((nodes) => Object.fromEntries(nodes.map((n) => [n.dataset.nodeId, n.dataset.state])));
    const byName = (suffix) => Object.keys(states).find((id) => id.endsWith(suffix));
    for (const [id, state] of Object.entries(states)) {
      if (id.endsWith('__confirm')) assert.equal(state, 'paused', id);
      else if (id.endsWith('__notify')) assert.equal(state, 'waiting', id);
      else assert.equal(state, 'done', `${id}: ${JSON.stringify(states)}`);
    }
    // The question is in the panel, with the report's summary as its details.
    const question = page.locator('[data-testid="run-question"][data-kind="confirmation"]');
    await question.waitFor();
    assert.match((await question.textContent()) ?? '', /keiri@example\.co\.jp/);

    // The detect node's duplicates: the three 山田商事 invoices of INV-2025-0301 and the two
    // 東京事務機 maintenance invoices (TJ-2025-08812 / TJ-2025-08821).
    await page.locator(`[data-testid="run-node"][data-node-id="${byName('__detect')}"] button`).first().click();
    const duplicates = page.locator('[data-testid="run-output-table"][data-output="duplicates"]');
    await duplicates.waitFor();
    assert.equal(await duplicates.getAttribute('data-row-count'), '5');
    const numbers = await duplicates.locator('[data-testid="run-output-row"]').evaluateAll((rows) => rows.map((r) => r.textContent));
    assert.equal(numbers.filter((t) => t.includes('INV-2025-0301')).length, 3, numbers.join('\n'));
    assert.equal(numbers.filter((t) => /TJ-2025-088(12|21)/.test(t)).length, 2, numbers.join('\n'));
    await screenshot(page, 'screenshots/run-01-duplicates.png');
    await checkScreen(page, 'run-01-duplicates');
    // 広げる: the inputs column gives its room to the results, and 元の幅 brings it back.
    const narrow = (await duplicates.boundingBox())?.width ?? 0;
    await page.getByTestId('right-wide').click();
    await page.locator('.column-left').waitFor({ state: 'hidden' });
    const widened = (await duplicates.boundingBox())?.width ?? 0;
    assert.ok(widened > narrow * 1.3, `the results grow from ${narrow}px to ${widened}px`);
    await page.getByTestId('right-wide').click();
    await page.locator('.column-left').waitFor({ state: 'visible' });

    // The report workbook the write node saved under the run folder, cell by cell.
    await page.locator(`[data-testid="run-node"][data-node-id="${byName('__write')}"] button`).first().click();
    const workbook = page.getByTestId('run-workbook');
    await workbook.waitFor();
    assert.match((await workbook.getAttribute('data-path')) ?? '', /^runs\/.+\/exception_report\.xlsx$/);
    const title = workbook.locator('[data-testid="workbook-cell"][data-cell="A1"]');
    assert.equal(await title.getAttribute('data-change'), 'added');
    assert.match((await title.textContent()) ?? '', /例外/);

    // The graph shows the same states.
    await page.getByTestId('view-graph').click();
    await page.locator(`[data-testid="graph-node"][data-node-id="${byName('__detect')}"][data-run-state="done"]`).waitFor();
    await page.locator(`[data-testid="graph-node"][data-node-id="${byName('__confirm')}"][data-run-state="paused"]`).waitFor();
    await screenshot(page, 'screenshots/run-02-graph.png');
    await checkScreen(page, 'run-02-graph');
  });

  it('keeps the paused run when the window is reloaded, and finishes it after the confirmation', async () => {
    await page.reload();
    await page.getByTestId('right-tab-run').click();
    const question = page.locator('[data-testid="run-question"][data-kind="confirmation"]');
    await question.waitFor();
    await question.getByTestId('question-comment').fill('INV-2025-0301 は二重計上を確認済み');
    await question.getByTestId('question-approve').click();
    await page.locator('[data-testid="sample-run"][data-status="finished"]').waitFor();
    const states = await page.getByTestId('run-node').evaluateAll((nodes) => nodes.map((n) => [n.dataset.nodeId, n.dataset.state]));
    const notify = states.find(([id]) => id.endsWith('__notify'));
    assert.deepEqual(notify?.[1], 'done', JSON.stringify(states));
    // One run folder: the resume continued it. The notification is recorded there.
    const runs = path.join(workspace, 'runs');
    const files = walk(runs);
    assert.equal(new Set(files.map((f) => path.relative(runs, f).split(path.sep).slice(0, 2).join('/'))).size, 1, files.join('\n'));
    const recorded = files.find((f) => f.endsWith('notifications.jsonl'));
    assert.ok(recorded, files.join('\n'));
    assert.match(readFileSync(recorded, 'utf8'), /keiri@example\.co\.jp/);
    // The attached file is only read, and nothing was written outside runs/ yet.
    assert.deepEqual(readFileSync(path.join(workspace, 'inputs', 'invoices.csv')), sample());
    const report = path.join(workspace, 'outputs', 'exception_report.xlsx');
    assert.equal(existsSync(report), false);
  });

  it('writes the report workbook for real only when asked, and undo takes it back', async () => {
    const write = await page.getByTestId('run-node').evaluateAll((nodes) => nodes.map((n) => n.dataset.nodeId).find((id) => id.endsWith('__write')));
    await page.locator(`[data-testid="run-node"][data-node-id="${write}"] button`).first().click();
    await page.getByTestId('run-apply-start').click();
    await page.getByTestId('run-apply-yes').click();
    await page.getByTestId('run-applied').waitFor();
    const report = path.join(workspace, 'outputs', 'exception_report.xlsx');
    const runFile = walk(path.join(workspace, 'runs')).find((f) => f.endsWith('exception_report.xlsx'));
    assert.deepEqual(readFileSync(report), readFileSync(runFile));
    await page.getByTestId('run-undo-apply').click();
    await page.getByTestId('run-apply-start').waitFor();
    // The workbook did not exist before: undo removes it again.
    assert.equal(existsSync(report), false);
  });

  it('registers the plan, reopens it from 登録済みのプラン and runs it on next month’s file', async () => {
    await page.getByTestId('register').click();
    await page.getByTestId('register-confirm').click();
    await page.locator('[data-testid="register-result"][data-state="ok"]').waitFor();
    const registered = (await page.getByTestId('register-file').textContent()) ?? '';

    await page.getByTestId('tab-plans').click();
    const item = page.getByTestId('plans-item');
    await item.first().waitFor();
    assert.equal(await item.count(), 1);
    const planId = await item.first().getAttribute('data-plan-id');
    const detail = page.locator(`[data-testid="plan-detail"][data-plan-id="${planId}"]`);
    await detail.waitFor();
    assert.equal(await detail.getByTestId('plan-file').textContent(), `designs/${registered}`);
    // The file question starts from the last run's file; a new one is chosen (uploaded here,
    // the desktop app opens its file dialog).
    const file = detail.locator('[data-testid="rerun-input"][data-type="file"]');
    assert.equal(await file.count(), 1);
    assert.equal(await file.getByRole('textbox').inputValue(), 'inputs/invoices.csv');
    // April: one invoice entered twice (the second time without the ¥ sign), two others once.
    const april = [
      'invoice_no,vendor,invoice_date,amount,description',
      'INV-2025-0412,株式会社山田商事,2025/04/05,"¥88,000",事務用品 4月分',
      'OS-0430,大阪運輸株式会社,2025/04/30,"55,000",配送料 4月分',
      'INV-2025-0412,株式会社山田商事,2025/04/05,"88,000",事務用品 4月分',
      'KY-3402,九州食品有限会社,2025/04/03,"33,000",社員食堂食材',
      '',
    ].join('\n');
    await file.getByTestId('question-file-input').setInputFiles({ name: 'invoices_04.csv', mimeType: 'text/csv', buffer: Buffer.from(april) });
    await page.waitForFunction(() => /invoices_04\.csv$/.test(document.querySelector('[data-testid="rerun-input"][data-type="file"] input:not([type])')?.value ?? ''));
    await screenshot(page, 'screenshots/plans-01-rerun.png');
    await checkScreen(page, 'plans-01-rerun');

    await detail.getByTestId('sample-run-start').click();
    const question = detail.locator('[data-testid="run-question"][data-kind="confirmation"]');
    await question.waitFor();
    await question.getByTestId('question-comment').fill('4月分も確認済み');
    await question.getByTestId('question-approve').click();
    await detail.locator('[data-testid="sample-run"][data-status="finished"]').waitFor();

    // The report of this run, written to the workspace and read back: the two INV-2025-0412
    // rows under Japanese headers, nothing else reported.
    const write = await detail.getByTestId('run-node').evaluateAll((nodes) => nodes.map((n) => n.dataset.nodeId).find((id) => id.endsWith('__write')));
    await detail.locator(`[data-testid="run-node"][data-node-id="${write}"] button`).first().click();
    await detail.getByTestId('run-apply-start').click();
    await detail.getByTestId('run-apply-yes').click();
    await detail.getByTestId('run-applied').waitFor();
    // (Compared with no workbook before, every cell of the written file is in the diff.)
    const read = await serve.api('workbook_compare', { after: 'outputs/exception_report.xlsx' });
    assert.equal(read.status, 200, await read.clone().text());
    const cells = (await read.json()).patch_diff.map((item) => String(item.after?.value ?? ''));
    for (const header of ['請求書番号', '取引先', '金額', '理由']) assert.ok(cells.includes(header), `${header} in ${cells.join(' | ')}`);
    assert.equal(cells.filter((v) => v === 'INV-2025-0412').length, 2, cells.join(' | '));
    assert.ok(!cells.includes('OS-0430') && !cells.includes('KY-3402'), cells.join(' | '));

    // Both runs are listed, newest first, each with the report it wrote and who answered.
    const history = detail.getByTestId('run-history-item');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="plan-detail"] [data-testid="run-history-item"]').length === 2);
    for (let i = 0; i < 2; i += 1) {
      const files = await history.nth(i).getByTestId('run-history-file').allTextContents();
      assert.ok(files.includes('exception_report.xlsx'), files.join(', '));
      await history.nth(i).getByTestId('run-history-answers').waitFor();
    }
    await history.first().getByTestId('run-history-writes').waitFor();
    await screenshot(page, 'screenshots/plans-02-runs.png');
    await checkScreen(page, 'plans-02-runs');
  });

  it('raised no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
