// End-to-end: runtime chat (実行チャット, issue 35 item 1). A plan whose payments file is left
// open (`payments: null`, how a generated plan marks what only the user can say) is run in
// 試行実行: the run pauses at the question the runtime inserted at its head, the form asks the
// plan's own question (the CSV file), and answered with April's file the run finishes with
// the totals worked out by hand: 山田商事 330,000 + 220,000 = 550,000; 東京事務機 88,000.
//
// Needs what design.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { checkScreen, launchChromium, openPage, pasteIntoEditor, requirePrerequisites, scanStep, startServe } from './support.mjs';

const PAYMENTS = '支払番号,取引先,金額\r\nP-001,山田商事,330000\r\nP-002,東京事務機,88000\r\nP-003,山田商事,220000\r\n';

const PLAN = `apiVersion: v1
id: e2e_open_payments
version: 0.1.0
vars:
  payments: null
graph:
  - id: read
    block: csv.read
    in:
      path: \${vars.payments}
    out:
      rows: payments
  - id: totals
    block: transforms.group_aggregate
    in:
      rows: \${read.payments}
      by: [取引先]
      aggregations: [{field: 金額, op: sum, as: 支払額}]
    out:
      rows: totals
`;

describe('runtime chat in 試行実行', () => {
  let workspace;
  let serve;
  let browser;
  let page;
  afterEach(async (t) => scanStep(page, 'runchat', t));
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-runchat-e2e-'));
    mkdirSync(path.join(workspace, 'inputs'));
    writeFileSync(path.join(workspace, 'inputs', 'payments.csv'), PAYMENTS);
    serve = await startServe(workspace);
    browser = await launchChromium();
    page = await openPage(browser, serve.url, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('asks the open file when the run starts and finishes with the answer', async () => {
    await pasteIntoEditor(page, PLAN);
    await page.getByTestId('validation-status').waitFor();
    await page.getByTestId('right-tab-run').click();
    await page.getByTestId('sample-run-start').click();
    await page.locator('[data-testid="sample-run"][data-status="paused"]').waitFor();
    const question = page.locator('[data-testid="run-question"][data-kind="input"][data-node-id="run_inputs"]');
    await question.waitFor();
    const field = question.locator('[data-testid="question-field"][data-field="payments"]');
    assert.match((await field.textContent()) ?? '', /CSV/);
    await checkScreen(page, 'runchat-01-question');
    await field.locator('input').fill('inputs/payments.csv');
    await question.getByTestId('question-submit').click();
    await page.locator('[data-testid="sample-run"][data-status="finished"]').waitFor();
    await page.locator('[data-testid="run-node"][data-node-id="totals"] button').first().click();
    const totals = page.locator('[data-testid="run-output-table"][data-output="rows"]');
    await totals.waitFor();
    assert.equal(await totals.getAttribute('data-row-count'), '2');
    const text = (await totals.textContent()) ?? '';
    assert.match(text, /山田商事/);
    assert.match(text, /550,?000/);
    assert.match(text, /88,?000/);
  });

  it('raised no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
