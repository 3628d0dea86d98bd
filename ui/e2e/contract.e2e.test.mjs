// End-to-end: a plan fitted to the attached file, in headless Chromium against `keiri serve`,
// no LLM.
//
// Journey: attach an invoices CSV whose headers are Japanese (請求書番号, 取引先名, 請求日, 金額),
// not the duplicate-detection template's defaults (vendor, invoice_date, amount, invoice_no) →
// compose the template → answer which file to read → the plan's columns are checked against
// the file: the Findings tab shows 「…列「vendor」は inputs/invoices.csv にありません」 with the
// CSV's real columns as the hint, and each column question is a select listing exactly the
// CSV's headers → pick them → no column finding is left and the plan can be registered.
//
// Needs what design.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { launchChromium, openPage, requirePrerequisites, screenshot, startServe } from './support.mjs';

const HEADERS = ['請求書番号', '取引先名', '請求日', '金額'];
const CSV = `${HEADERS.join(',')}\nINV-001,株式会社山田商事,2025/03/05,"110,000"\nINV-002,北海道物産株式会社,2025/03/03,"33,000"\nINV-001,株式会社山田商事,2025/03/06,"110,000"\n`;

/** The header the user picks for each column question, by the input it fills. */
const PICK = {
  vendor_field: '取引先名',
  amount_field: '金額',
  date_field: '請求日',
  invoice_no_field: '請求書番号',
  fields_1: null, // normalize_dates / normalize_amounts: by the node below
};

function pickFor(id) {
  if (id.includes('__dates_fields')) return '請求日';
  if (id.includes('__amounts_fields')) return '金額';
  const key = Object.keys(PICK).find((k) => PICK[k] !== null && id.endsWith(k));
  return key === undefined ? null : PICK[key];
}

describe('plans fitted to the attached files', () => {
  let workspace;
  let serve;
  let browser;
  let page;
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-contract-e2e-'));
    serve = await startServe(workspace);
    browser = await launchChromium();
    page = await openPage(browser, serve.url, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('asks for the columns the attached CSV names differently, with its headers as the choices', async () => {
    await page.getByTestId('instruction').fill('請求書の重複を検出する');
    await page.getByTestId('document-input').setInputFiles({ name: 'invoices.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
    await page.locator('[data-testid="document"][data-name="invoices.csv"][data-status="ready"]').waitFor();
    await page.locator('details.templates > summary').click();
    await page.locator('[data-testid="template"][data-template-id="invoice_duplicate_detection"] input').check();
    await page.getByTestId('apply-mode').selectOption('compose');
    await page.getByTestId('generate').click();
    await page.locator('[data-testid="generate-result"][data-status="needs_answers"]').waitFor();
    await page.getByTestId('right-tab-questions').click();

    // The file to read first: until then the plan's columns cannot be checked.
    const first = page.getByTestId('question');
    await first.waitFor();
    assert.equal(await first.getAttribute('data-requirement-id'), 'invoice_csv');
    await first.getByTestId('question-file-choice').selectOption('inputs/invoices.csv');
    await first.getByTestId('question-submit').click();
    await page.locator('[data-testid="vars-preview"]:has-text("invoice_csv")').waitFor();

    // Now the template's `vendor` is a finding, with the CSV's columns as the hint.
    await page.getByTestId('right-tab-findings').click();
    const vendor = page.locator('[data-testid="finding"][data-code="column.unknown"]', { hasText: '「vendor」' });
    await vendor.waitFor();
    const text = (await vendor.textContent()) ?? '';
    assert.match(text, /inputs\/invoices\.csv にありません/);
    assert.match(text, /請求書番号, 取引先名, 請求日, 金額/);
    await screenshot(page, 'screenshots/contract-01-findings.png');

    // Each column question is a select of exactly the CSV's headers.
    await page.getByTestId('right-tab-questions').click();
    const answered = [];
    for (let round = 0; round < 8; round += 1) {
      const question = page.getByTestId('question');
      const more = await Promise.race([
        question.waitFor().then(() => true),
        page.getByTestId('questions-empty').waitFor().then(() => false),
      ]);
      if (!more) break;
      const id = await question.getAttribute('data-requirement-id');
      assert.ok(!answered.includes(id), `question ${id} is asked again after it was answered`);
      const input = question.getByTestId('question-input');
      assert.equal(await input.getAttribute('data-control'), 'select', id);
      const options = await input.locator('option').evaluateAll((nodes) => nodes.map((n) => n.value).filter((v) => v !== ''));
      assert.deepEqual(options, HEADERS, id);
      if (round === 0) await screenshot(page, 'screenshots/contract-02-column-question.png');
      const pick = pickFor(id);
      assert.ok(pick, `no header chosen for question ${id}`);
      await input.selectOption(pick);
      await question.getByTestId('question-submit').click();
      await page.locator(`[data-testid="vars-preview"]:has-text("${id}")`).waitFor();
      answered.push(id);
    }
    assert.deepEqual(answered.sort(), [
      'invoice_duplicate_detection__amounts_fields_1',
      'invoice_duplicate_detection__dates_fields_1',
      'invoice_duplicate_detection__detect_amount_field',
      'invoice_duplicate_detection__detect_date_field',
      'invoice_duplicate_detection__detect_invoice_no_field',
      'invoice_duplicate_detection__detect_vendor_field',
    ]);

    // The plan fits the file: no column finding, and it can be registered.
    await page.locator('[data-testid="register-target"][data-blocked="false"]').waitFor();
    await page.getByTestId('right-tab-findings').click();
    assert.equal(await page.locator('[data-testid="finding"][data-code="column.unknown"]').count(), 0);
    assert.deepEqual(pageErrors, []);
  });
});
