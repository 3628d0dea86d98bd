#!/usr/bin/env node
// Cold start of the desktop app: from launching the process to an interactive window (the
// Design tab rendered and the first `catalog_list` answered over IPC), over RUNS launches.
//
// Each run opens a fresh WebDriver session (tauri-driver + WebKitWebDriver under Xvfb), which
// starts a new keiri-studio process, and measures on one clock (the machine's epoch time):
//   session ready                when the WebDriver session answered (the process is up)
//   spawn → page load start      performance.timeOrigin − the moment the session was requested
//   spawn → interactive mark     + `window.__KEIRI_INTERACTIVE__` (performance.now() that the UI
//                                records once the Design tab shows the first catalog_list
//                                answer), when the UI sets it
//   spawn → catalog shown        when WebDriver first finds a rendered catalog block (10 ms
//                                polling; an upper bound, each poll is a WebDriver round trip)
// Prints a table and the medians. Not a test: nothing is asserted.
//
// Run: `make bench-cold-start` (or `node scripts/bench-cold-start.mjs` after building
// keiri-studio with the built UI; KEIRI_STUDIO_BIN, RUNS override).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { APP, newSession, pageTimings, requireFile, startDriver } from '../ui/e2e-desktop/driver.mjs';

const RUNS = Number(process.env.RUNS ?? 5);

function median(values) {
  const sorted = values.filter((v) => typeof v === 'number').sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const ms = (v) => (v === null || v === undefined ? '   n/a' : `${Math.round(v).toString().padStart(6)}`);

requireFile(APP, 'the keiri-studio binary (run `make bench-cold-start`)');
const workspace = mkdtempSync(path.join(tmpdir(), 'keiri-cold-'));
const driver = await startDriver({ KEIRI_WORKSPACE: workspace, KEIRI_CONFIG_DIR: path.join(workspace, '.config') });
const rows = [];
try {
  for (let run = 1; run <= RUNS; run += 1) {
    const requested = Date.now();
    const session = await newSession(driver);
    const ready = Date.now();
    try {
      await session.waitFor('[data-testid="tab-design"]', 30_000, 10);
      await session.waitFor('[data-testid="catalog-block"]', 30_000, 10);
      const shown = Date.now();
      const page = await pageTimings(session);
      rows.push({
        run,
        session: ready - requested,
        pageStart: page.navigationStart - requested,
        interactive: page.interactive === null ? null : page.navigationStart + page.interactive - requested,
        shown: shown - requested,
      });
    } finally {
      await session.close();
    }
  }
} finally {
  await driver.stop();
  rmSync(workspace, { recursive: true, force: true });
}

console.log(`keiri-studio cold start, ${RUNS} runs (${APP})`);
console.log('run  session-ready  page-start  interactive-mark  catalog-shown   (ms since launch)');
for (const r of rows) {
  console.log(`${String(r.run).padStart(3)}  ${ms(r.session)}         ${ms(r.pageStart)}      ${ms(r.interactive)}            ${ms(r.shown)}`);
}
const med = (key) => median(rows.map((r) => r[key]));
console.log(
  `median ${ms(med('session'))}         ${ms(med('pageStart'))}      ${ms(med('interactive'))}            ${ms(med('shown'))}`,
);
