// End-to-end: every screen of the Design tab as a Japanese accountant meets it (issue #19,
// items 3 and 6), at 1280×800 and at 1920×1080.
//
// Each screen is checked with `checkScreen` (support.mjs): no sentence without Japanese, no
// environment variable (`KEIRI_…`), CLI flag (`--templates`) or ranking jargon (`BM25`) in the
// window, and no button, field or tab outside the window, clipped by its panel, or with a label
// that wraps or is cut. The workbook grid of the dry run and of the sample run shows the cells
// around a change as the workbook holds them: the header labels, the neighbouring amounts, and a
// formula with the value the workbook saved for it.
//
// Needs what design.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH). Screenshots go to ui/test-results/screens/ (gitignored).

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { checkScreen, launchChromium, openPage, requirePrerequisites, startServe, xlsxWorkbook } from './support.mjs';

// 集計: 項目/金額 headers, 売上 1000, 原価 400, 粗利 = B2-B3 saved as 600. The plan changes
// 原価 to 450; the grid must draw 項目, 金額, 売上, 1000, 粗利 and 600 around it.
const STRINGS = ['項目', '金額', '売上', '原価', '粗利'];
const ROWS =
  '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>' +
  '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><v>1000</v></c></row>' +
  '<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3"><v>400</v></c></row>' +
  '<row r="4"><c r="A4" t="s"><v>4</v></c><c r="B4"><f>B2-B3</f><v>600</v></c></row>';

const PLAN = `apiVersion: v1
id: gross_profit_update
version: 0.1.0
graph:
  - id: update_cost
    block: excel.patch_workbook
    in:
      xlsx_path: inputs/集計.xlsx
      operations:
        - {op: set_value, sheet: 集計, cell: B3, value: 450}
      out_name: 集計_更新.xlsx
`;

const INSTRUCTION = '請求書一覧のCSVを読み込んで重複している請求書を検出し、Excelの報告書ブックに結果を書き込んでください';
const INVOICES_CSV = '請求書番号,取引先,金額,請求日\nINV-7781,東京商事,120000,2026-04-01\nINV-7790,大阪物産,56000,2026-04-03\n';

async function pasteIntoEditor(page, text) {
  const editor = page.getByTestId('editor-content');
  await editor.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
}

/** Whether `locator`'s element is wholly inside the window and is what a click at its centre hits. */
async function uncovered(locator) {
  return locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const inside = r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight;
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return { inside, onTop: hit !== null && (hit === el || el.contains(hit)) };
  });
}

/** The text and formula of cell `a1` in `grid`. */
async function gridCell(grid, a1) {
  const cell = grid.locator(`[data-testid="workbook-cell"][data-cell="${a1}"]`);
  return { text: ((await cell.textContent()) ?? '').trim(), formula: await cell.getAttribute('data-formula') };
}

/** The cells around the change of 集計!B3 as an accountant must see them. */
async function assertNeighbours(grid) {
  assert.deepEqual(await gridCell(grid, 'A2'), { text: '売上', formula: null });
  assert.deepEqual(await gridCell(grid, 'B2'), { text: '1000', formula: null });
  assert.deepEqual(await gridCell(grid, 'A3'), { text: '原価', formula: null });
  assert.deepEqual(await gridCell(grid, 'A4'), { text: '粗利', formula: null });
  // The formula shows the value the workbook saved for it, the formula itself on hover.
  const profit = await gridCell(grid, 'B4');
  assert.equal(profit.formula, '=B2-B3');
  assert.match(profit.text, /^600/);
  const changed = grid.locator('[data-testid="workbook-cell"][data-cell="B3"]');
  assert.equal(await changed.getAttribute('data-change'), 'changed');
  assert.equal((await changed.getByTestId('workbook-after').textContent())?.trim(), '450');
}

for (const viewport of [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
]) {
  const size = `${viewport.width}x${viewport.height}`;

  describe(`every Design tab screen at ${size}, in Japanese`, () => {
    let workspace;
    let serve;
    let browser;
    let page;
    const pageErrors = [];
    const check = (screen) => checkScreen(page, `${size}-${screen}`);

    before(async () => {
      requirePrerequisites();
      workspace = mkdtempSync(path.join(tmpdir(), 'keiri-screens-e2e-'));
      mkdirSync(path.join(workspace, 'inputs'));
      writeFileSync(path.join(workspace, 'inputs', '集計.xlsx'), xlsxWorkbook('集計', ROWS, STRINGS));
      serve = await startServe(workspace);
      browser = await launchChromium();
      page = await openPage(browser, serve.url, pageErrors);
      await page.setViewportSize(viewport);
    });

    after(async () => {
      await browser?.close();
      await serve?.stop();
      if (workspace) rmSync(workspace, { recursive: true, force: true });
    });

    it('the first screen', async () => {
      await page.locator('[data-testid="catalog-block"][data-block-id="csv.read"]').waitFor();
      await check('01-first');
    });

    it('an instruction, an attached CSV and the candidates', async () => {
      await page.getByTestId('instruction').fill(INSTRUCTION);
      await page.getByTestId('document-input').setInputFiles({
        name: 'invoices.csv',
        mimeType: 'text/csv',
        buffer: Buffer.from(INVOICES_CSV, 'utf8'),
      });
      await page.locator('[data-testid="document"][data-name="invoices.csv"][data-status="ready"]').waitFor();
      await page.getByTestId('candidates').waitFor();
      await page.getByTestId('candidate-relevance').first().waitFor();
      await check('02-candidates');
    });

    it('a plan, its findings, missing items and attempts', async () => {
      await pasteIntoEditor(page, PLAN);
      await page.locator('[data-testid="validation-status"]:is([data-tone="ok"], [data-tone="warning"])').waitFor();
      await page.getByTestId('right-tab-findings').click();
      await check('03-findings');
      await page.getByTestId('right-tab-missing').click();
      await page.getByTestId('missing').waitFor();
      await check('04-missing');
      await page.getByTestId('right-tab-attempts').click();
      await check('05-attempts');
      await page.getByTestId('left-tab-catalog').click();
      await check('06-catalog');
    });

    it('the chat, its send button inside the window', async () => {
      await page.getByTestId('right-tab-questions').click();
      await page.getByTestId('chat-send').waitFor();
      await check('07-chat');
      // Not merely scrollable into view: 送信 is seen where it is, nothing covers it.
      assert.deepEqual(await uncovered(page.getByTestId('chat-send')), { inside: true, onTop: true });
      assert.deepEqual(await uncovered(page.getByTestId('chat-input')), { inside: true, onTop: true });
    });

    it('the dry run: the change among its real neighbours and a formula with its saved value', async () => {
      await page.getByTestId('right-tab-dryrun').click();
      await check('08-dryrun-idle');
      await page.getByTestId('dryrun-run').click();
      const grid = page.locator('[data-testid="dryrun-node"][data-node-id="update_cost"] [data-testid="workbook-grid"]');
      await grid.waitFor();
      await assertNeighbours(grid);
      await grid.scrollIntoViewIfNeeded();
      await check('09-dryrun');
    });

    it('the sample run and the workbook it wrote, with the same neighbours', async () => {
      await page.getByTestId('right-tab-run').click();
      await check('10-run-idle');
      await page.getByTestId('sample-run-start').click();
      await page.locator('[data-testid="sample-run"][data-status="finished"]').waitFor({ timeout: 60_000 });
      await page.locator('[data-testid="run-node"][data-node-id="update_cost"] button').first().click();
      const grid = page.locator('[data-testid="run-workbook"] [data-testid="workbook-grid"]');
      await grid.waitFor();
      // The patched copy is a new file of the outputs folder, yet the grid shows what the
      // patch changed in the source (B3), among the same neighbours and formula as the dry run.
      await assertNeighbours(grid);
      await grid.scrollIntoViewIfNeeded();
      await check('11-run');
    });

    it('the graph', async () => {
      await page.getByTestId('view-graph').click();
      await page.locator('[data-testid="graph-node"][data-node-id="update_cost"]').waitFor();
      await check('12-graph');
      await page.getByTestId('view-editor').click();
    });

    it('the settings dialog', async () => {
      await page.getByTestId('open-settings').click();
      await page.getByRole('dialog').waitFor();
      await check('13-settings');
      await page.keyboard.press('Escape');
    });

    it('raised no page errors', () => {
      assert.deepEqual(pageErrors, []);
    });
  });
}
