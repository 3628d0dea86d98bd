// End-to-end: the built UI served by `keiri serve`, driven in headless Chromium.
//
// Needs: the `keiri` binary (KEIRI_BIN, default <repo>/target/debug/keiri), the built UI
// (ui/dist, `npm run build`) and a Chromium (CHROMIUM_PATH, default /usr/bin/chromium).
// Playwright never downloads a browser here: playwright-core drives the system one
// (support.mjs holds what the e2e tests share). Screenshots go to ui/test-results/ (gitignored).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import { checkScreen, launchChromium, openPage, pasteIntoEditor, requirePrerequisites, scanStep, screenshot, startServe } from './support.mjs';

// A plan using our catalog's real block ids. `csv.reed` is a typo of `csv.read` (unknown
// block) and the filter misses its required `condition`.
const INVALID_PLAN = `apiVersion: v1
id: e2e_invoices
version: 0.1.0
graph:
  - id: read_invoices
    block: csv.reed
    in:
      path: input/invoices.csv
    out:
      rows: invoices
  - id: large_invoices
    block: transforms.filter_rows
    in:
      rows: "\${read_invoices.invoices}"
    out:
      rows: large
  - id: save_large
    block: csv.write
    in:
      rows: "\${large_invoices.large}"
`;

const VALID_PLAN = INVALID_PLAN.replace('block: csv.reed', 'block: csv.read').replace(
  '      rows: "${read_invoices.invoices}"\n',
  '      rows: "${read_invoices.invoices}"\n      condition: 金額 >= 100000\n',
);

async function editorText(page) {
  return page.getByTestId('editor-content').evaluate((el) =>
    [...el.querySelectorAll('.cm-line')].map((line) => line.textContent).join('\n'),
  );
}

describe('design tab against keiri serve', () => {
  let workspace;
  let server;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => scanStep(page, 'design', t));
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-e2e-'));
    server = await startServe(workspace);
    browser = await launchChromium();
    page = await openPage(browser, server.url, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('opens with the title and the catalog, and a pasted valid plan validates clean', async () => {
    assert.equal(await page.title(), 'Keiri Studio');
    await page.locator('[data-testid="catalog-block"][data-block-id="csv.read"]').waitFor();
    // The editor starts empty (the first screen explains the steps instead of a sample plan).
    await pasteIntoEditor(page, VALID_PLAN);
    await page.locator('[data-testid="validation-status"][data-tone="ok"]').waitFor();
    assert.equal(await page.getByTestId('finding').count(), 0);
    await screenshot(page, '01-start.png');
  });

  it('filters the catalog by the search box', async () => {
    const search = page.getByTestId('catalog-search');
    await search.fill('重複');
    await page.locator('[data-block-id="matching.duplicate_invoices"]').waitFor();
    assert.equal(await page.locator('[data-block-id="csv.read"]').count(), 0);
    await search.fill('zzz-no-such-block');
    await page.getByTestId('catalog-no-match').waitFor();
    await search.fill('');
    await page.locator('[data-block-id="csv.read"]').waitFor();
  });

  it('shows the validator findings for an invalid plan and jumps to them', async () => {
    await pasteIntoEditor(page, INVALID_PLAN);
    const unknown = page.locator('[data-testid="finding"][data-code="block.unknown"]');
    await unknown.waitFor();
    await page.locator('[data-testid="finding"][data-code="input.missing_required"]').waitFor();
    assert.equal(await unknown.getAttribute('data-line'), '6');
    await page.locator('[data-testid="validation-status"][data-tone="error"]').waitFor();
    // The editor marks the finding inline too.
    await page.locator('.cm-lintRange-error').first().waitFor();
    await screenshot(page, '02-findings.png');
    await checkScreen(page, 'design-02-findings');

    await unknown.click();
    const active = await page.locator('.cm-activeLine').textContent();
    assert.match(active ?? '', /csv\.reed/);
  });

  it('refuses to register an invalid plan, by code', async () => {
    await page.getByTestId('register').click();
    // The name asked is the plan's own id.
    assert.equal(await page.getByTestId('register-name').inputValue(), 'e2e_invoices');
    await page.getByTestId('register-confirm').click();
    const result = page.locator('[data-testid="register-result"][data-state="error"]');
    await result.waitFor();
    assert.equal(await result.getAttribute('data-code'), 'PLAN_INVALID');
    assert.equal(readdirSync(workspace).includes('designs') ? readdirSync(path.join(workspace, 'designs')).length : 0, 0);
  });

  it('clears the findings once the plan is fixed', async () => {
    await pasteIntoEditor(page, VALID_PLAN);
    await page.getByTestId('findings-empty').waitFor();
    await page.locator('[data-testid="validation-status"][data-tone="ok"]').waitFor();
    assert.equal(await page.getByTestId('finding').count(), 0);
    assert.equal(await editorText(page), VALID_PLAN);
  });

  it('registers the plan and saves it under designs/', async () => {
    await page.getByTestId('register').click();
    const shown = ((await page.getByTestId('register-preview').textContent()) ?? '').trim();
    await page.getByTestId('register-confirm').click();
    await page.locator('[data-testid="register-result"][data-state="ok"]').waitFor();
    const fileName = (await page.getByTestId('register-file').textContent())?.trim() ?? '';
    assert.match(fileName, /^e2e_invoices_\d{12}(_\d+)?\.yaml$/);
    assert.equal(`designs/${fileName}`, shown);
    const saved = path.join(workspace, 'designs', fileName);
    assert.ok(existsSync(saved), `${saved} should exist`);
    assert.equal(readFileSync(saved, 'utf8'), VALID_PLAN);
    await screenshot(page, '03-registered.png');
    await checkScreen(page, 'design-03-registered');
  });

  it('inserts a node skeleton for a catalog block, wired to the selected node, and asks for its inputs', async () => {
    await page.getByTestId('catalog-search').fill('csv.read');
    await page.locator('[data-block-id="csv.read"] [data-testid="catalog-insert"]').click();
    assert.equal(await editorText(page), `${VALID_PLAN}  - id: csv_read\n    block: csv.read\n    in:\n      path: null\n`);
    // The cursor is on the new node, so it is the selected one: + on a block that reads a
    // table wires that table in (giving csv_read an out:), and leaves its condition to ask.
    await page.getByTestId('catalog-search').fill('transforms.filter_rows');
    await page.locator('[data-block-id="transforms.filter_rows"] [data-testid="catalog-insert"]').click();
    assert.equal(
      await editorText(page),
      `${VALID_PLAN}  - id: csv_read\n    block: csv.read\n    out: {rows: rows}\n    in:\n      path: null\n` +
        '  - id: transforms_filter_rows\n    block: transforms.filter_rows\n    in:\n      rows: "${csv_read.rows}"\n      condition: null\n',
    );
    // Nothing is left silently empty: the file and the condition are asked.
    await page.getByTestId('right-tab-questions').click();
    const asked = page.locator('[data-testid="question"], [data-testid="question-list-item"]');
    await page.locator('[data-testid="right-tab-questions"] .count-badge').waitFor();
    assert.equal((await page.locator('[data-testid="right-tab-questions"] .count-badge').textContent())?.trim(), '2', await asked.allTextContents().then((t) => t.join(' | ')));
    await page.getByTestId('catalog-search').fill('');
    await page.getByTestId('right-tab-findings').click();
  });

  it('asks the columns of a wired node as check boxes of the columns its rows have', async () => {
    // An export in the workspace: the plan reads it, so its header is known before a run.
    mkdirSync(path.join(workspace, 'input'), { recursive: true });
    writeFileSync(path.join(workspace, 'input', 'journal.csv'), '伝票番号,取引先,部門,金額\r\nV1,山田商事,営業,1000\r\n');
    await pasteIntoEditor(page, 'apiVersion: v1\nid: e2e_totals\nversion: 0.1.0\ngraph:\n  - id: read_journal\n    block: csv.read\n    in:\n      path: input/journal.csv\n    out:\n      rows: lines\n');
    await page.getByTestId('catalog-search').fill('transforms.group_aggregate');
    await page.locator('[data-block-id="transforms.group_aggregate"] [data-testid="catalog-insert"]').click();
    assert.match(await editorText(page), /rows: "\$\{read_journal\.lines\}"\n {6}by: null/);
    await page.getByTestId('right-tab-questions').click();
    // The grouping columns: the file's headers to tick, in the order wanted.
    const picks = page.locator('[data-testid="question-input"][data-control="columns"] label');
    await picks.first().waitFor();
    assert.deepEqual(await picks.allTextContents(), ['伝票番号', '取引先', '部門', '金額']);
    await picks.filter({ hasText: '部門' }).locator('input').check();
    await picks.filter({ hasText: '取引先' }).locator('input').check();
    await screenshot(page, '05-column-picks.png');
    await page.getByTestId('question-submit').click();
    // The answer is the list, in the order ticked, written into the plan for the node.
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="editor-content"] .cm-line')].some((line) => line.textContent?.includes('部門')),
    );
    const text = await editorText(page);
    assert.match(text, /by: "?\$\{vars\.transforms_group_aggregate_by\}"?\n/, text);
    assert.match(text, /transforms_group_aggregate_by:\s*(\[\s*部門,\s*取引先\s*\]|\n\s*- 部門\n\s*- 取引先)/, text);
    await page.getByTestId('catalog-search').fill('');
    await page.getByTestId('right-tab-findings').click();
  });

  it('switches the whole UI and the validator to English', async () => {
    await page.getByTestId('lang-en').click();
    assert.equal((await page.getByTestId('register').textContent())?.trim(), 'Register');
    assert.equal((await page.getByTestId('validate').textContent())?.trim(), 'Validate');
    await pasteIntoEditor(page, INVALID_PLAN);
    const message = page.locator('[data-testid="finding"][data-code="block.unknown"] .finding-message');
    await message.waitFor();
    assert.match((await message.textContent()) ?? '', /^[\x20-\x7e]+$/, 'an English message');
    await screenshot(page, '04-english.png');
    await page.getByTestId('lang-ja').click();
    assert.equal((await page.getByTestId('register').textContent())?.trim(), '登録');
    // The validator speaks Japanese again too (it re-validates on the switch).
    await page.waitForFunction(() =>
      /[\u3040-\u30ff\u3400-\u9fff]/u.test(document.querySelector('[data-testid="finding"][data-code="block.unknown"] .finding-message')?.textContent ?? ''),
    );
  });

  it('raised no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
