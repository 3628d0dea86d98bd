// Smoke test of the real desktop window: the keiri-studio binary (with the built UI embedded)
// under Xvfb, driven over WebDriver by tauri-driver + WebKitWebDriver. It checks what only the
// real window can show: the window opens, the Design tab renders in desktop mode, validation
// round-trips through Tauri IPC, and a sample run (試行実行) streams over the IPC channel and
// shows a node's output grid. A screenshot goes to ui/test-results/desktop.png.
//
// Needs: `make test-desktop` (builds the binary with ui/dist inside), xvfb-run, tauri-driver
// (~/.cargo/bin or TAURI_DRIVER) and /usr/bin/WebKitWebDriver; scripts/setup-system.sh
// installs them. KEIRI_STUDIO_BIN overrides the binary.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { APP, CONTROL, UI_DIR, configDir, newSession, requireFile, startDriver } from './driver.mjs';

const SHOTS = path.join(UI_DIR, 'test-results');

// The plan the window works on: it reads input/invoices.csv and keeps the large invoices.
const SAMPLE_PLAN = readFileSync(new URL('../tests/fixtures/sample-plan.yaml', import.meta.url), 'utf8');

describe('desktop window', () => {
  let driver;
  let session;
  let workspace;

  before(async () => {
    requireFile(APP, 'the keiri-studio binary (run `make test-desktop`, or set KEIRI_STUDIO_BIN)');
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-desktop-'));
    // The sample plan's input: four invoices, two of them at or over 100,000 yen.
    mkdirSync(path.join(workspace, 'input'));
    writeFileSync(
      path.join(workspace, 'input', 'invoices.csv'),
      '請求書番号,取引先,金額\nINV-001,山田商事,120000\nINV-002,佐藤工業,55000\nINV-003,東京事務機,100000\nINV-004,大阪運輸,8000\n',
    );
    // Settings and the embedding cache live in the test's directory: never the user's.
    driver = await startDriver({
      KEIRI_WORKSPACE: workspace,
      KEIRI_CONFIG_DIR: configDir(workspace),
      KEIRI_EMBED_CACHE_DIR: path.join(configDir(workspace), 'embeddings'),
    });
    try {
      session = await newSession(driver);
    } catch (err) {
      await driver.stop();
      throw new Error(`${err.message}\n--- tauri-driver output ---\n${driver.output()}`);
    }
  });

  after(async () => {
    await session?.close();
    await driver?.stop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('opens the window with the Design tab in desktop mode', async () => {
    assert.equal(await session.title(), 'Keiri Studio');
    const tab = await session.waitFor('[data-testid="tab-design"]');
    assert.equal(await session.text(tab), '設計');
    // The badge reads the Tauri IPC bridge: this page is the desktop app, not a browser.
    assert.equal(await session.text(await session.find('[data-testid="mode"]')), 'デスクトップ');
  });

  it('lists the catalog through IPC', async () => {
    await session.waitFor('[data-testid="catalog-block"][data-block-id="csv.read"]');
  });

  it('takes a plan into the editor (the window opens without one)', async () => {
    // The editor keeps its draft in the webview's localStorage, so a reload shows this plan,
    // as reopening the app would; typing YAML over WebDriver would fight the editor's indent.
    await session.execute('window.localStorage.setItem(arguments[0], arguments[1]); window.location.reload();', [
      'keiri.draft.v1',
      SAMPLE_PLAN,
    ]);
    await session.waitFor('[data-testid="catalog-block"][data-block-id="csv.read"]');
    // The editor mounts again once the reloaded page has read the draft: its element is found
    // again until it shows the plan.
    assert.match(await session.waitForText('.cm-content', /save_large/), /save_large/);
  });

  it('runs the sample plan for real through IPC and shows a node\'s output grid', async () => {
    await session.click(await session.waitFor('[data-testid="right-tab-run"]'));
    await session.click(await session.waitFor('[data-testid="sample-run-start"]'));
    await session.waitFor('[data-testid="sample-run"][data-status="finished"]');
    await session.click(await session.waitFor('[data-testid="run-node"][data-node-id="large_invoices"] button'));
    const table = await session.waitFor('[data-testid="run-output-table"][data-output="rows"]');
    // 120,000 and 100,000 pass `金額 >= 100000`.
    assert.match(await session.text(table), /全 2 行/);
    assert.equal((await session.findAll('[data-output="rows"] [data-testid="run-output-row"]')).length, 2);
    // Back to the findings for the next test.
    await session.click(await session.find('[data-testid="right-tab-findings"]'));
  });

  it('validates through IPC: the sample plan is valid, a broken one is not', async () => {
    await session.waitFor('[data-testid="validation-status"][data-tone="ok"]');
    const shot = await session.screenshot();
    // PNG signature: the window really rendered.
    assert.deepEqual([...shot.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(path.join(SHOTS, 'desktop.png'), shot);

    const editor = await session.find('[data-testid="editor-content"]');
    await session.click(editor);
    // Select all, release Control, then type a document the validator must refuse.
    await session.type(editor, `${CONTROL}a${CONTROL}graph: 1\n`);
    await session.waitFor('[data-testid="validation-status"][data-tone="error"]');
    assert.ok((await session.findAll('[data-testid="finding"]')).length > 0);

  });
});
