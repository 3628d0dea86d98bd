// End-to-end: a plan fitted to the attached file, in headless Chromium against `keiri serve`,
// no LLM.
//
// Journey: attach an invoices CSV whose headers are Japanese (請求書番号, 相手先, 請求日, 金額),
// not the duplicate-detection template's (vendor, invoice_date, amount, invoice_no) → compose
// the template → the attached CSV is the file to read, and the columns that mean the same
// (請求書番号, 請求日, 金額) are fitted and said in the result's notes → the one it cannot know
// (相手先 for `vendor`) is a finding 「…列「vendor」は inputs/invoices.csv にありません」 with the
// CSV's real columns as the hint, and its question is a select listing exactly the CSV's
// headers → pick it → no column finding is left and the plan can be registered.
//
// Needs what design.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { launchChromium, openPage, requirePrerequisites, scanStep, screenshot, startServe } from './support.mjs';

const HEADERS = ['請求書番号', '相手先', '請求日', '金額'];
const CSV = `${HEADERS.join(',')}\nINV-001,株式会社山田商事,2025/03/05,"110,000"\nINV-002,北海道物産株式会社,2025/03/03,"33,000"\nINV-001,株式会社山田商事,2025/03/06,"110,000"\n`;

describe('plans fitted to the attached files', () => {
  let workspace;
  let serve;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => scanStep(page, 'contract', t));
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

  it('fits the columns that mean the same and asks for the one it cannot know, with the headers as the choices', async () => {
    await page.getByTestId('instruction').fill('請求書の重複を検出する');
    await page.getByTestId('document-input').setInputFiles({ name: 'invoices.csv', mimeType: 'text/csv', buffer: Buffer.from(CSV) });
    await page.locator('[data-testid="document"][data-name="invoices.csv"][data-status="ready"]').waitFor();
    await page.locator('details.templates > summary').click();
    await page.locator('[data-testid="template"][data-template-id="invoice_duplicate_detection"] input').check();
    await page.getByTestId('apply-mode').selectOption('compose');
    await page.getByTestId('generate').click();
    const result = page.locator('[data-testid="generate-result"][data-status="needs_answers"]');
    await result.waitFor();
    // The composition in one line, the attached file used, the columns fitted by meaning.
    assert.match((await page.getByTestId('generate-composition').textContent()) ?? '', /「請求書の重複検出」を使います/);
    const notes = (await result.textContent()) ?? '';
    assert.match(notes, /添付のファイル inputs\/invoices\.csv を使います/);
    assert.match(notes, /列「invoice_date」には、同じ意味のファイルの見出し「請求日」を使います/);
    assert.match(notes, /列「invoice_no」には、同じ意味のファイルの見出し「請求書番号」を使います/);

    // 相手先 is not a name the studio knows for the vendor: a finding, with the CSV's columns.
    await page.getByTestId('right-tab-findings').click();
    const vendor = page.locator('[data-testid="finding"][data-code="column.unknown"]', { hasText: '「vendor」' });
    await vendor.waitFor();
    const text = (await vendor.textContent()) ?? '';
    assert.match(text, /inputs\/invoices\.csv にありません/);
    assert.match(text, /請求書番号, 相手先, 請求日, 金額/);
    await screenshot(page, 'screenshots/contract-01-findings.png');

    // Its question is a select of exactly the CSV's headers, and the only one left.
    await page.getByTestId('right-tab-questions').click();
    const question = page.getByTestId('question');
    await question.waitFor();
    assert.equal(await page.getByTestId('question').count(), 1);
    const id = await question.getAttribute('data-requirement-id');
    assert.equal(id, 'invoice_duplicate_detection__detect_vendor_field');
    const input = question.getByTestId('question-input');
    assert.equal(await input.getAttribute('data-control'), 'select', id);
    const options = await input.locator('option').evaluateAll((nodes) => nodes.map((n) => n.value).filter((v) => v !== ''));
    assert.deepEqual(options, HEADERS, id);
    await screenshot(page, 'screenshots/contract-02-column-question.png');
    await input.selectOption('相手先');
    await question.getByTestId('question-submit').click();
    await page.locator(`[data-testid="vars-preview"]:has-text("${id}")`).waitFor();
    await page.getByTestId('questions-empty').waitFor();

    // The plan fits the file: no column finding, and it can be registered.
    await page.locator('[data-testid="register-target"][data-blocked="false"]').waitFor();
    await page.getByTestId('right-tab-findings').click();
    assert.equal(await page.locator('[data-testid="finding"][data-code="column.unknown"]').count(), 0);
    assert.deepEqual(pageErrors, []);
  });
});
