// End-to-end: the whole Design tab flow in headless Chromium against `keiri serve`, with a
// fake OpenAI-compatible LLM server (support.mjs, on 127.0.0.1:0) that replies from a script
// written here, in order, and records every request so the test asserts on what was sent.
//
// Journey: instruction + an uploaded document → 自動生成 (Ctrl+Enter) → the first wiring is
// invalid and a repair attempt is visible in Attempts → two questions answered → the plan
// validates → plan and graph shown → dry-run → register (Ctrl+S) → the file is in designs/.
// Plus: Cancel during a generation, and an unreachable LLM shown with its code.
//
// Needs what design.e2e.test.mjs needs: the keiri binary (KEIRI_BIN), the built UI (ui/dist)
// and Chromium (CHROMIUM_PATH). Screenshots go to ui/test-results/screenshots/ (gitignored).

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import zlib from 'node:zlib';
import {
  checkScreen,
  completion,
  freePort,
  launchChromium,
  openPage,
  REPO,
  requireFile,
  requirePrerequisites,
  scanStep,
  screenshot,
  startFakeLlm,
  startServe,
} from './support.mjs';

const TEMPLATES = path.join(REPO, 'templates');
const INSTRUCTION = '請求書一覧のCSVを読み込んで重複している請求書を検出し、Excelの報告書ブックに結果を書き込んでください';
const INVOICES_CSV = '請求書番号,取引先,金額,請求日\nINV-7781,東京商事,120000,2026-04-01\nINV-7781,東京商事,120000,2026-04-01\nINV-7790,大阪物産,56000,2026-04-03\n';
const BLOCKS = ['csv.read', 'matching.duplicate_invoices', 'excel.patch_workbook'];

// ---- The fake LLM's script: the planner's skeleton and wiring stages (keiri-design). ----

const SKELETON = {
  reasoning: '請求書CSVを読み、重複を検出し、報告書ブックに書き込む',
  nodes: [
    { id: 'read', block: 'csv.read', purpose: '請求書一覧を読む', repeat: null, calls_plan: null },
    { id: 'detect', block: 'matching.duplicate_invoices', purpose: '重複を検出する', repeat: null, calls_plan: null },
    { id: 'report', block: 'excel.patch_workbook', purpose: '報告書に件数を書く', repeat: null, calls_plan: null },
  ],
  questions: [],
};

const input = (key, value) => ({ key, value_json: JSON.stringify(value) });

/** A wiring of the flow; `rowsRef` is what `detect.rows` reads. Path and encoding stay open vars. */
function wiring(rowsRef) {
  return {
    reasoning: '型に合わせて接続',
    policy: null,
    node_policies: [],
    ui_layout: [],
    vars: [
      { name: 'invoice_csv', value_json: 'null' },
      { name: 'encoding', value_json: 'null' },
    ],
    nodes: [
      {
        id: 'read',
        block: 'csv.read',
        inputs: [input('path', '${vars.invoice_csv}'), input('encoding', '${vars.encoding}')],
        outputs: [{ key: 'rows', alias: 'rows' }],
        when: null,
      },
      {
        id: 'detect',
        block: 'matching.duplicate_invoices',
        // The file's own columns: the block's English defaults are not in it (and are checked).
        inputs: [
          input('rows', rowsRef),
          input('vendor_field', '取引先'),
          input('amount_field', '金額'),
          input('date_field', '請求日'),
          input('invoice_no_field', '請求書番号'),
        ],
        outputs: [{ key: 'duplicates', alias: 'duplicates' }],
        when: null,
      },
      {
        id: 'report',
        block: 'excel.patch_workbook',
        inputs: [
          input('xlsx_path', 'inputs/report.xlsx'),
          input('operations', [
            { op: 'set_value', sheet: 'Sheet1', cell: 'B1', value: '重複チェック済み' },
            { op: 'set_value', sheet: 'Sheet1', cell: 'B2', value: 2 },
          ]),
          input('out_name', 'report_checked.xlsx'),
        ],
        outputs: [],
        when: null,
      },
    ],
  };
}

/** A structured-output answer: `content` as the assistant's JSON text. */
const answer = (content) => completion({ content: JSON.stringify(content) }, 'stop');

// ---- A tiny .xlsx (stored zip entries) for the workbook patch node. ----

function zip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [name, text] of files) {
    const data = Buffer.from(text, 'utf8');
    const nameBytes = Buffer.from(name, 'utf8');
    const crc = zlib.crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6);
    local.writeUInt16LE(0, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    locals.push(local, nameBytes, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + data.length;
  }
  const centralSize = centrals.reduce((sum, part) => sum + part.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

function reportWorkbook() {
  const ns = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  return zip([
    [
      '[Content_Types].xml',
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>`,
    ],
    [
      '_rels/.rels',
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ],
    [
      'xl/workbook.xml',
      `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${ns}" xmlns:r="${rel}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets><calcPr calcId="191029"/></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ],
    [
      'xl/sharedStrings.xml',
      `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${ns}" count="3" uniqueCount="3"><si><t>状態</t></si><si><t>重複件数</t></si><si><t>未確認</t></si></sst>`,
    ],
    [
      'xl/worksheets/sheet1.xml',
      `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${ns}"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>2</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>0</v></c></row></sheetData></worksheet>`,
    ],
  ]);
}

// ---- keiri serve and the browser ----

/** `keiri serve` on `workspace` talking to the fake LLM only (as model `fake-model`). */
const startStudio = (workspace, llmBaseUrl) => startServe(workspace, { llmBaseUrl, env: { KEIRI_LLM_MODEL: 'fake-model' } });

/** A screenshot of a main screen, which must also be in plain Japanese with nothing clipped. */
const shot = async (page, name) => {
  await screenshot(page, `screenshots/${name}.png`);
  await checkScreen(page, `studio-${name}`);
};

function messagesText(request) {
  return (request.body?.messages ?? []).map((message) => (typeof message.content === 'string' ? message.content : '')).join('\n');
}

describe('the Design tab flow against keiri serve and a fake LLM', () => {
  let workspace;
  let llm;
  let serve;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => scanStep(page, 'studio', t));
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    requireFile(TEMPLATES, 'the templates');
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-studio-e2e-'));
    mkdirSync(path.join(workspace, 'inputs'));
    writeFileSync(path.join(workspace, 'inputs', 'report.xlsx'), reportWorkbook());
    llm = await startFakeLlm([
      // Cancelled while this one is still on its way.
      { body: answer(SKELETON), delayMs: 4_000 },
      { body: answer(SKELETON) },
      // `reader` is no node: ref.unknown_node, so a repair round follows.
      { body: answer(wiring('${reader.rows}')) },
      { body: answer(wiring('${read.rows}')) },
    ]);
    serve = await startStudio(workspace, llm.url);
    browser = await launchChromium();
    page = await openPage(browser, serve.url, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    llm?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('starts loading the embedding model once the window is interactive', async () => {
    await page.waitForFunction(() => window.__KEIRI_INTERACTIVE__ !== undefined);
    await page.waitForFunction(() =>
      performance.getEntriesByType('resource').some((e) => e.name.endsWith('/api/embeddings_prewarm')),
    );
  });

  it('takes an instruction and an uploaded document, and lists candidates to pin', async () => {
    await page.getByTestId('instruction').fill(INSTRUCTION);
    await page.getByTestId('document-input').setInputFiles({
      name: 'invoices.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(INVOICES_CSV, 'utf8'),
    });
    const doc = page.locator('[data-testid="document"][data-name="invoices.csv"][data-status="ready"]');
    await doc.waitFor();
    // A table is summarised by its rows and columns, not its characters.
    assert.equal(
      (await doc.getByTestId('document-summary').textContent()) ?? '',
      '3 行 × 4 列: 請求書番号, 取引先, 金額, 請求日',
    );
    assert.equal(readFileSync(path.join(workspace, 'inputs', 'invoices.csv'), 'utf8'), INVOICES_CSV);

    await page.getByTestId('candidates').waitFor();
    for (const id of BLOCKS) {
      const row = page.locator(`[data-testid="candidate"][data-candidate-id="${id}"]`);
      await row.waitFor();
      if ((await row.getAttribute('data-pinned')) !== 'true') await row.getByTestId('candidate-pin').click();
      await page.locator(`[data-testid="candidate"][data-candidate-id="${id}"][data-pinned="true"]`).waitFor();
    }
    await page.getByTestId('apply-mode').selectOption('llm-only');
    await shot(page, '01-inputs');
  });

  it('cancels a running generation', async () => {
    await page.getByTestId('generate').click();
    await page.locator('[data-testid="progress-step"][data-stage="skeleton"]').waitFor();
    await page.getByTestId('generate-cancel').click();
    const error = page.getByTestId('generate-error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'CANCELLED');
    assert.equal(await page.getByTestId('generate').isEnabled(), true);
  });

  it('generates with Ctrl+Enter: progress per stage, a repair attempt, then questions', async () => {
    await page.getByTestId('instruction').focus();
    await page.keyboard.press('Control+Enter');
    const result = page.getByTestId('generate-result');
    await result.waitFor();
    assert.equal(await result.getAttribute('data-status'), 'needs_answers');
    const stages = await page.getByTestId('progress-step').evaluateAll((steps) => steps.map((step) => step.dataset.stage));
    for (const stage of ['extracting', 'retrieving', 'skeleton', 'wiring', 'validating', 'repair']) {
      assert.ok(stages.includes(stage), `${stage} missing from ${stages}`);
    }

    // What the planner sent: the pinned blocks in the schema, the document in the prompt,
    // the findings in the repair request.
    assert.equal(llm.requests.length, 4);
    const [, skeletonRequest, , repairRequest] = llm.requests;
    assert.equal(skeletonRequest.body.model, 'fake-model');
    const schema = JSON.stringify(skeletonRequest.body.response_format ?? skeletonRequest.body.tools ?? {});
    for (const id of BLOCKS) assert.ok(schema.includes(`"${id}"`), `${id} is a candidate in the schema`);
    assert.match(messagesText(skeletonRequest), /INV-7781/);
    assert.match(messagesText(repairRequest), /Repair 1\/2/);
    assert.match(messagesText(repairRequest), /ref\.unknown_node/);

    // The editor shows the generated plan.
    await page.locator('.cm-content', { hasText: 'excel.patch_workbook' }).waitFor();
  });

  it('shows both attempts with their findings and the diff between them', async () => {
    await page.getByTestId('right-tab-attempts').click();
    const attempts = page.getByTestId('attempt');
    assert.equal(await attempts.count(), 2);
    const first = attempts.nth(0);
    assert.notEqual(await first.getAttribute('data-errors'), '0');
    await first.locator('[data-testid="attempt-issue"][data-code="ref.unknown_node"]').waitFor();
    const second = attempts.nth(1);
    assert.equal(await second.getAttribute('data-stage'), 'repair');
    const diff = (await second.getByTestId('attempt-diff').textContent()) ?? '';
    assert.match(diff, /detect/);
    assert.match(diff, /\$\{reader\.rows\}/);
    assert.match(diff, /\$\{read\.rows\}/);
    await shot(page, '02-attempts');
  });

  it('lists the open vars as missing items whose "ask" opens that question', async () => {
    await page.getByTestId('right-tab-missing').click();
    const ask = page.locator('[data-testid="missing-ask"][data-requirement-id="encoding"]');
    await ask.waitFor();
    await page.locator('[data-testid="missing-ask"][data-requirement-id="invoice_csv"]').waitFor();
    await ask.click();
    await page.locator('[data-testid="question"][data-requirement-id="encoding"]').waitFor();
  });

  it('asks the two questions one at a time and fills vars', async () => {
    await page.getByTestId('right-tab-questions').click();
    const asked = [];
    for (let round = 0; round < 2; round += 1) {
      const question = page.getByTestId('question');
      await question.waitFor();
      const id = await question.getAttribute('data-requirement-id');
      assert.ok(!asked.includes(id), `question ${id} asked twice`);
      asked.push(id);
      const control = await question.getByTestId('question-input').getAttribute('data-control');
      if (control === 'file') {
        // A wrong type is refused next to the field before anything is sent.
        await question.getByTestId('question-input').fill('inputs/report.xlsx');
        await question.getByTestId('question-submit').click();
        await question.getByTestId('question-problem').waitFor();
        // A file chosen right here is uploaded and its path filled in…
        await question.getByTestId('question-file-input').setInputFiles({
          name: '四月分.csv',
          mimeType: 'text/csv',
          buffer: Buffer.from(INVOICES_CSV, 'utf8'),
        });
        await page.waitForFunction(() => document.querySelector('[data-testid="question-input"]')?.value === 'inputs/四月分.csv');
        // …but the attached document is the one meant.
        await question.getByTestId('question-file-choice').selectOption('inputs/invoices.csv');
      } else {
        assert.equal(control, 'select', `question ${id}`);
        await question.getByTestId('question-input').selectOption('cp932');
      }
      if (round === 0) await shot(page, '03-question');
      await question.getByTestId('question-submit').click();
      await page.locator(`[data-testid="vars-preview"]:has-text("${id}")`).waitFor();
    }
    assert.deepEqual(asked.sort(), ['encoding', 'invoice_csv']);
    await page.getByTestId('questions-empty').waitFor();
    const preview = (await page.getByTestId('vars-preview').textContent()) ?? '';
    assert.match(preview, /invoice_csv: "inputs\/invoices\.csv"/);
    assert.match(preview, /encoding: "cp932"/);
    await page.locator('.cm-content', { hasText: 'invoice_csv: inputs/invoices.csv' }).waitFor();
    // No errors remain (a warning may: the duplicates are not used further), so it can be registered.
    await page.locator('[data-testid="register-target"][data-blocked="false"]').waitFor();
    await page.locator('[data-testid="validation-status"]:is([data-tone="ok"], [data-tone="warning"])').waitFor();
  });

  it('shows the plan as a graph, and a node chosen there is selected in the editor', async () => {
    await page.getByTestId('view-graph').click();
    await page.locator('[data-testid="graph-view"][data-state="ok"]').waitFor();
    for (const id of ['read', 'detect', 'report']) {
      await page.locator(`[data-testid="graph-node"][data-node-id="${id}"]`).waitFor();
    }
    await page.getByTestId('right-tab-attempts').click();
    await shot(page, '04-graph');
    await page.locator('[data-testid="graph-node"][data-node-id="report"]').click();
    await page.locator('[data-testid="graph-frame"][data-selected-node="report"]').waitFor();
    await page.getByTestId('view-editor').click();
    assert.match((await page.locator('.cm-activeLine').first().textContent()) ?? '', /id: report/);
  });

  it('dry-runs the plan with a workbook diff grid', async () => {
    await page.getByTestId('right-tab-dryrun').click();
    await page.getByTestId('dryrun-run').click();
    await page.getByTestId('dryrun-result').waitFor();
    const order = await page.getByTestId('dryrun-order-item').evaluateAll((items) => items.map((item) => item.dataset.nodeId));
    assert.deepEqual(order, ['read', 'detect', 'report']);
    const grid = page.locator('[data-testid="dryrun-node"][data-node-id="report"] [data-testid="workbook-grid"]');
    await grid.waitFor();
    const changed = grid.locator('[data-testid="workbook-cell"][data-cell="B1"]');
    assert.match((await changed.getAttribute('data-change')) ?? '', /\S/);
    assert.match((await changed.getByTestId('workbook-after').textContent()) ?? '', /重複チェック済み/);
    await grid.scrollIntoViewIfNeeded();
    await shot(page, '05-dry-run');
    // A dry run writes nothing.
    assert.deepEqual(readdirSync(path.join(workspace, 'inputs')).sort(), ['invoices.csv', 'report.xlsx', '四月分.csv']);
  });

  it('registers with Ctrl+S and the file exists in designs/', async () => {
    const target = (await page.getByTestId('register-target').textContent()) ?? '';
    // The plan still has the planner's id; the name to confirm comes from the instruction.
    assert.match(target, /請求書一覧のCSVを読み込んで重複している請求書を検出し/);
    assert.equal(await page.getByTestId('register-target').getAttribute('data-blocked'), 'false');
    await page.getByTestId('instruction').focus();
    await page.keyboard.press('Control+s');
    assert.equal(await page.getByTestId('register-name').inputValue(), '請求書一覧のCSVを読み込んで重複している請求書を検出し');
    const shown = ((await page.getByTestId('register-preview').textContent()) ?? '').trim();
    // Ctrl+S again confirms the name.
    await page.keyboard.press('Control+s');
    await page.locator('[data-testid="register-result"][data-state="ok"]').waitFor();
    const fileName = ((await page.getByTestId('register-file').textContent()) ?? '').trim();
    assert.match(fileName, /^請求書一覧のCSVを読み込んで重複している請求書を検出し_\d{12}(_\d+)?\.yaml$/);
    assert.equal(`designs/${fileName}`, shown);
    const saved = path.join(workspace, 'designs', fileName);
    assert.ok(existsSync(saved), `${saved} should exist`);
    const yaml = readFileSync(saved, 'utf8');
    assert.match(yaml, /invoice_csv: inputs\/invoices\.csv/);
    assert.match(yaml, /\$\{read\.rows\}/);
    assert.match((await page.getByTestId('register-path').textContent()) ?? '', new RegExp(fileName.replace('.', '\\.')));
    await shot(page, '06-registered');
  });

  it('raised no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe('an unreachable LLM', () => {
  let workspace;
  let serve;
  let browser;
  const pageErrors = [];

  before(async () => {
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-studio-e2e-down-'));
    // A port that was free a moment ago: nothing listens there.
    serve = await startStudio(workspace, `http://127.0.0.1:${await freePort()}/v1`);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('shows the failure by code with a human message, and nothing is registered', async () => {
    const page = await openPage(browser, serve.url, pageErrors);
    await page.getByTestId('instruction').fill(INSTRUCTION);
    await page.getByTestId('apply-mode').selectOption('llm-only');
    await page.getByTestId('generate').click();
    const error = page.getByTestId('generate-error');
    await error.waitFor({ timeout: 60_000 });
    assert.equal(await error.getAttribute('data-code'), 'LLM_FAILED');
    assert.match((await error.getAttribute('data-detail-code')) ?? '', /^LLM_(CONNECTION|TRANSPORT|TIMEOUT)$/);
    assert.match((await error.textContent()) ?? '', /AIモデル/);
    await shot(page, '07-llm-unreachable');
    assert.equal(existsSync(path.join(workspace, 'designs')) ? readdirSync(path.join(workspace, 'designs')).length : 0, 0);
    assert.deepEqual(pageErrors, []);
  });
});
