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
//   first retrieval              then (at once, or PAUSE_MS later, as after typing an
//                                instruction), in the page, the first `blocks_retrieve` call of the
//                                process over IPC (a Japanese instruction, default hybrid
//                                mode), timed with performance.now(): model load + one query
//                                embedding + ranking, with the bundled catalog's vectors from
//                                the pack; its mode shows whether the dense side ran
//   second retrieval             the same call again (the model is loaded by then)
// The embedding cache is emptied before every launch, as after a fresh install.
// Prints a table and the medians. Not a test: nothing is asserted.
//
// Run: `make bench-cold-start` (the release build; BUILD=debug for the debug one), or
// `node scripts/bench-cold-start.mjs` after building keiri-studio with the built UI;
// KEIRI_STUDIO_BIN, RUNS override.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { APP, newSession, pageTimings, requireFile, startDriver } from '../ui/e2e-desktop/driver.mjs';

const RUNS = Number(process.env.RUNS ?? 5);
// How long after the catalog shows the first search is made: 0 (default) searches at once, the
// worst case; a person first types an instruction, which takes seconds (PAUSE_MS=2000).
const PAUSE_MS = Number(process.env.PAUSE_MS ?? 0);

function median(values) {
  const sorted = values.filter((v) => typeof v === 'number').sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const INSTRUCTION = '請求書CSVから重複を検出してExcelレポートにする';

/** Calls blocks_retrieve in the page and waits for the answer: `{ms, mode, candidates}`. */
async function timedRetrieval(session) {
  await session.execute(`
    window.__KEIRI_BENCH__ = null;
    const started = performance.now();
    window.__TAURI_INTERNALS__.invoke('call', { function: 'blocks_retrieve', request: { instruction: arguments[0] } })
      .then((r) => { window.__KEIRI_BENCH__ = { ms: performance.now() - started, mode: r.mode, candidates: r.candidates.length }; })
      .catch((e) => { window.__KEIRI_BENCH__ = { error: String((e && (e.code || e.message)) || e) }; });
  `, [INSTRUCTION]);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const result = await session.execute('return window.__KEIRI_BENCH__;');
    if (result) {
      if (result.error) throw new Error(`blocks_retrieve failed: ${result.error}`);
      return result;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('blocks_retrieve did not answer in 120 s');
}

const ms = (v) => (v === null || v === undefined ? '   n/a' : `${Math.round(v).toString().padStart(6)}`);

requireFile(APP, 'the keiri-studio binary (run `make bench-cold-start`)');
const workspace = mkdtempSync(path.join(tmpdir(), 'keiri-cold-'));
const cache = path.join(workspace, '.embeddings-cache');
const driver = await startDriver({
  KEIRI_WORKSPACE: workspace,
  KEIRI_CONFIG_DIR: path.join(workspace, '.config'),
  KEIRI_EMBED_CACHE_DIR: cache,
});
const rows = [];
try {
  for (let run = 1; run <= RUNS; run += 1) {
    rmSync(cache, { recursive: true, force: true });
    const requested = Date.now();
    const session = await newSession(driver);
    const ready = Date.now();
    try {
      await session.waitFor('[data-testid="tab-design"]', 30_000, 10);
      await session.waitFor('[data-testid="catalog-block"]', 30_000, 10);
      const shown = Date.now();
      const page = await pageTimings(session);
      if (PAUSE_MS > 0) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      const asked = Date.now();
      const first = await timedRetrieval(session);
      // While the model loads, a window gets keyword results (mode bm25) and asks again, as
      // the UI does: time until the hybrid ranking arrives.
      let hybrid = first.mode === 'hybrid' ? first.ms : null;
      while (hybrid === null && Date.now() - asked < 120_000) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const again = await timedRetrieval(session);
        if (again.mode === 'hybrid') hybrid = Date.now() - asked;
      }
      const second = await timedRetrieval(session);
      rows.push({
        firstRetrieval: first.ms,
        firstHybrid: hybrid,
        secondRetrieval: second.ms,
        mode: first.mode,
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

console.log(`keiri-studio cold start, ${RUNS} runs (${APP}), first search ${PAUSE_MS} ms after the catalog shows`);
console.log('run  session-ready  page-start  interactive-mark  catalog-shown   (ms since launch)   first-retrieval  hybrid-ready  second  (ms)  first mode');
for (const r of rows) {
  console.log(
    `${String(r.run).padStart(3)}  ${ms(r.session)}         ${ms(r.pageStart)}      ${ms(r.interactive)}            ${ms(r.shown)}                       ${ms(r.firstRetrieval)}        ${ms(r.firstHybrid)}  ${ms(r.secondRetrieval)}        ${r.mode}`,
  );
}
const med = (key) => median(rows.map((r) => r[key]));
console.log(
  `median ${ms(med('session'))}         ${ms(med('pageStart'))}      ${ms(med('interactive'))}            ${ms(med('shown'))}                       ${ms(med('firstRetrieval'))}        ${ms(med('firstHybrid'))}  ${ms(med('secondRetrieval'))}`,
);
