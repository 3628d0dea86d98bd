// End-to-end: a human step as a real form (issue 34, item 2). A plan totals April's payments
// by vendor and asks two named approvers to sign them off before anything is written; 試行実行
// pauses at the approval, whose form shows what is approved (the totals as a table), the amount
// formatted in yen, one decision and one signature per approver and a comment; answered, the
// run finishes and the approval's record holds who signed.
//
// Needs what design.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { checkScreen, launchChromium, openPage, pasteIntoEditor, requirePrerequisites, scanStep, screenshot, startServe } from './support.mjs';

// April's payments: 山田商事 330,000 + 220,000 = 550,000; 東京事務機 88,000. Total 638,000,
// over 佐藤's limit of 500,000, so the route goes on to 鈴木.
const PAYMENTS = '支払番号,取引先,金額\r\nP-001,山田商事,330000\r\nP-002,東京事務機,88000\r\nP-003,山田商事,220000\r\n';

const PLAN = `apiVersion: v1
id: e2e_payment_approval
version: 0.1.0
graph:
  - id: read
    block: csv.read
    in:
      path: inputs/payments.csv
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
  - id: approve
    block: control.approval
    in:
      subject: 4月分の支払
      amount: 638000
      approvers: [{name: 佐藤 一郎, role: 経理課長, limit: 500000}, {name: 鈴木 花子, role: 部長}]
      details: \${totals.totals}
      require_signature: true
    out:
      approved: approved
      decisions: decisions
`;

describe('an approval with signatures in 試行実行', () => {
  let workspace;
  let serve;
  let browser;
  let page;
  afterEach(async (t) => scanStep(page, 'approval', t));
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-approval-e2e-'));
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

  it('pauses at the approval and shows what is approved, the amount and a signature per approver', async () => {
    await pasteIntoEditor(page, PLAN);
    await page.locator('[data-testid="validation-status"][data-tone="ok"]').waitFor();
    await page.getByTestId('right-tab-run').click();
    await page.getByTestId('sample-run-start').click();
    await page.locator('[data-testid="sample-run"][data-status="paused"]').waitFor();
    const question = page.locator('[data-testid="run-question"][data-kind="approval"]');
    await question.waitFor();
    // What is approved: the totals by vendor, as a table.
    const details = await question.getByTestId('question-details').textContent();
    assert.match(details ?? '', /山田商事/);
    assert.match(details ?? '', /550,000/);
    assert.match(details ?? '', /東京事務機/);
    assert.equal((await question.getByTestId('question-amount').textContent())?.trim(), '金額 ¥638,000');
    assert.deepEqual(await question.getByTestId('question-approver').evaluateAll((all) => all.map((a) => a.dataset.approver)), [
      '佐藤 一郎',
      '鈴木 花子',
    ]);
    // Nothing can be sent before both have decided and signed.
    const submit = question.getByTestId('question-submit');
    assert.equal(await submit.isDisabled(), true);
    const approvers = question.getByTestId('question-approver');
    // Each signs with their own name (spaces and width do not matter: 佐藤一郎 is 佐藤 一郎).
    for (const [i, signer] of ['佐藤一郎', '鈴木　花子'].entries()) {
      await approvers.nth(i).locator('select').selectOption('approved');
      await approvers.nth(i).getByTestId('question-signature').fill(signer);
    }
    await question.getByTestId('question-comment').fill('山田商事の2件は請求書と照合済み');
    assert.equal(await submit.isDisabled(), false);
    await screenshot(page, 'approval-01-form.png');
    await checkScreen(page, 'approval-01-form');
  });

  it('finishes once answered, and the decisions record who signed and the comment', async () => {
    await page.locator('[data-testid="run-question"][data-kind="approval"]').getByTestId('question-submit').click();
    await page.locator('[data-testid="sample-run"][data-status="finished"]').waitFor();
    await page.locator('[data-testid="run-node"][data-node-id="approve"] button').first().click();
    const decisions = page.locator('[data-testid="run-output-table"][data-output="decisions"]');
    await decisions.waitFor();
    const text = (await decisions.textContent()) ?? '';
    for (const expected of ['佐藤 一郎', '佐藤一郎', '経理課長', '鈴木 花子', '鈴木　花子', '部長', '山田商事の2件は請求書と照合済み']) {
      assert.ok(text.includes(expected), `${expected} in ${text}`);
    }
  });

  it('raised no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
