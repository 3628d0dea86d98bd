// Smoke test of the real desktop window: the keiri-studio binary (with the built UI embedded)
// under Xvfb, driven over WebDriver by tauri-driver + WebKitWebDriver. It checks what only the
// real window can show: the window opens, the Design tab renders in desktop mode, and
// validation round-trips through Tauri IPC. A screenshot goes to ui/test-results/desktop.png.
//
// Needs: `make test-desktop` (builds the binary with ui/dist inside), xvfb-run, tauri-driver
// (~/.cargo/bin or TAURI_DRIVER) and /usr/bin/WebKitWebDriver; scripts/setup-system.sh
// installs them. KEIRI_STUDIO_BIN overrides the binary.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { APP, CONTROL, UI_DIR, configDir, newSession, requireFile, startDriver } from './driver.mjs';

const SHOTS = path.join(UI_DIR, 'test-results');

describe('desktop window', () => {
  let driver;
  let session;
  let workspace;

  before(async () => {
    requireFile(APP, 'the keiri-studio binary (run `make test-desktop`, or set KEIRI_STUDIO_BIN)');
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-desktop-'));
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
