// What the end-to-end tests share: where the binary, the built UI, the catalog and Chromium are;
// a free port; `keiri serve` started on a temporary workspace and stopped again; headless
// Chromium through playwright-core (never a downloaded browser); pages that record their
// errors; screenshots under ui/test-results/ (gitignored); a fake OpenAI-compatible LLM.
//
// Every process under test runs isolated from the developer's machine: no LLM variable is
// inherited (a test names its fake server itself) and `KEIRI_CONFIG_DIR` points into the test's
// workspace, so saved settings or a keychain key never reach a test. The desktop driver
// (../e2e-desktop/driver.mjs) uses the same environment.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { chromium } from 'playwright-core';

export const UI_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const REPO = path.resolve(UI_DIR, '..');
/** The `keiri` binary: `KEIRI_BIN` (relative to the repository root or absolute). */
export const KEIRI_BIN = path.resolve(REPO, process.env.KEIRI_BIN ?? 'target/debug/keiri');
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const DIST = path.join(UI_DIR, 'dist');
export const CATALOG = path.join(REPO, 'block_specs');
/** Where screenshots go; `screenshot` takes names relative to it. */
export const TEST_RESULTS = path.join(UI_DIR, 'test-results');
// Generous: the first request may wait for the catalog to load on a busy 2-core machine.
export const TIMEOUT_MS = 20_000;

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Every variable that chooses or configures an LLM provider (keiri-llm's `ENV_VARS`, plus the
 * planner's fallback switch): none is inherited by a process under test.
 */
export const LLM_VARS = [
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'AZURE_OPENAI_API_KEY',
  'AZURE_OPENAI_ENDPOINT',
  'AZURE_OPENAI_DEPLOYMENT',
  'AZURE_OPENAI_API_VERSION',
  'KEIRI_LLM_BASE_URL',
  'KEIRI_LLM_API_KEY',
  'KEIRI_LLM_MODEL',
  'KEIRI_LLM_TIMEOUT_SECS',
  'KEIRI_LLM_MAX_RETRIES',
  'KEIRI_AGENT_LLM_FALLBACK',
];

export function requireFile(file, what) {
  if (!existsSync(file)) throw new Error(`e2e: ${what} not found at ${file}`);
}

/** Fails early, with what to do, when the binary, the built UI, Chromium or the catalog is missing. */
export function requirePrerequisites() {
  requireFile(KEIRI_BIN, 'the keiri binary (build it with `cargo build -p keiri-cli`, or set KEIRI_BIN)');
  requireFile(path.join(DIST, 'index.html'), 'the built UI (run `npm run build`)');
  requireFile(CHROMIUM_PATH, 'Chromium (install the chromium package, or set CHROMIUM_PATH)');
  requireFile(CATALOG, 'the block catalog');
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The settings directory of a test: inside its workspace; it need not exist. */
export const configDir = (workspace) => path.join(workspace, '.config-test');

/** This process's environment without any LLM variable. */
export function inheritedEnv() {
  const env = { ...process.env };
  for (const name of LLM_VARS) delete env[name];
  return env;
}

/**
 * The environment of a keiri process on `workspace`: `inheritedEnv()` with the settings in
 * `configDir(workspace)`, `KEIRI_LLM_BASE_URL` when the test has a (fake) LLM, then `extra`.
 */
export function serveEnv(workspace, { llmBaseUrl, extra = {} } = {}) {
  // Settings and the embedding cache live in the test's workspace, never the user's home.
  const env = {
    ...inheritedEnv(),
    RUST_BACKTRACE: '1',
    KEIRI_CONFIG_DIR: configDir(workspace),
    KEIRI_EMBED_CACHE_DIR: path.join(configDir(workspace), 'embeddings'),
  };
  if (llmBaseUrl !== undefined) env.KEIRI_LLM_BASE_URL = llmBaseUrl;
  return { ...env, ...extra };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Killed when this test process exits however it ends, so no server outlives its test file.
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `keiri serve` on a free port for `workspace` and resolves once it prints
 * `listening on http://127.0.0.1:<port>/?token=<token>`: `{url, base, token, child, logs(),
 * stop(), api()}`. `url` is the page to open (it carries the per-launch token, which the UI
 * keeps); `base` is the bare origin; `api(fn, request)` posts to `/api/<fn>` the way the UI
 * does (JSON, `X-Keiri-Token`). `llmBaseUrl` and `env` go to `serveEnv`.
 */
export async function startServe(workspace, { llmBaseUrl, env } = {}) {
  const port = await freePort();
  const args = ['serve', '--port', String(port), '--workspace', workspace, '--ui-dir', DIST, '--catalog', CATALOG];
  const child = spawn(KEIRI_BIN, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: serveEnv(workspace, { llmBaseUrl, extra: env }),
  });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const logs = () => `stdout: ${stdout}\nstderr: ${stderr}`;
  const exited = new Promise((resolve) => {
    child.on('exit', () => {
      running.delete(child);
      resolve();
    });
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    if ((await Promise.race([exited.then(() => true), sleep(5_000).then(() => false)])) === false) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`keiri serve did not print "listening on" within ${TIMEOUT_MS} ms\n${logs()}`)),
        TIMEOUT_MS,
      );
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        const match = /listening on (http:\/\/\S+)/.exec(stdout);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`keiri serve exited early (code ${code}, signal ${signal})\n${logs()}`));
      });
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
    const { origin: base, searchParams } = new URL(url);
    const token = searchParams.get('token');
    if (!token) throw new Error(`keiri serve printed no token in its URL\n${logs()}`);
    const api = (fn, request = {}) =>
      fetch(`${base}/api/${fn}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-keiri-token': token },
        body: JSON.stringify(request),
      });
    return { url, base, token, child, logs, stop, api };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Debian's Chromium, headless, through playwright-core. */
export function launchChromium() {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}

/** Records every uncaught error of `page` in `errors` (returned). */
export function collectPageErrors(page, errors = []) {
  page.on('pageerror', (err) => errors.push(String(err)));
  return errors;
}

/** A 1280×800 Japanese page at `url` whose uncaught errors go to `pageErrors`. */
export async function openPage(browser, url, pageErrors) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, locale: 'ja-JP' });
  page.setDefaultTimeout(TIMEOUT_MS);
  collectPageErrors(page, pageErrors);
  await page.goto(url);
  return page;
}

/** Saves a screenshot of `page` to `ui/test-results/<file>` (e.g. `screenshots/01-inputs.png`). */
/** Replaces the editor's whole text the way a person pastes: select all, then insert. */
export async function pasteIntoEditor(page, text) {
  await page.getByTestId('editor-content').click();
  await page.keyboard.press('Control+A');
  await page.keyboard.insertText(text);
}

export async function screenshot(page, file) {
  const target = path.join(TEST_RESULTS, file);
  mkdirSync(path.dirname(target), { recursive: true });
  await page.screenshot({ path: target });
}

/** An OpenAI chat-completions response whose one choice is the assistant's `message`. */
export function completion(message, finishReason) {
  return {
    id: 'chatcmpl-e2e',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 answering from `script` in order:
 * each entry is `{body, delayMs?}`, or a function of the request's JSON body returning the reply
 * body. Every request is recorded in `requests`; one the script has no reply for (or whose
 * function throws) gets a 500. Resolves with `{url, requests, server, close()}`.
 */
export function startFakeLlm(script) {
  const requests = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // Recorded as null; the assertions say what was expected.
      }
      requests.push({ method: req.method, url: req.url, body });
      const step = req.url.endsWith('/chat/completions') ? script[requests.length - 1] : undefined;
      let reply;
      let failure = 'the e2e script has no reply for this request';
      try {
        reply = typeof step === 'function' ? { body: step(body) } : step;
      } catch (err) {
        reply = undefined;
        failure = `the e2e script failed: ${err}`;
      }
      const send = () => {
        if (res.destroyed) return;
        if (reply?.body === undefined) {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: failure } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      };
      if (reply?.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, requests, close, url: `http://127.0.0.1:${server.address().port}/v1` }),
    );
  });
}

// ---- What every screen of a journey must satisfy (issue #19, items 3 and 6) ----

/**
 * Product names that stay in English in the Japanese window: they are names, not sentences.
 * Anything else written in Latin letters only must be translated, or be an identifier marked
 * `translate="no"` (a block id shown as a subtitle, a file name the user chose, an error code
 * kept for support) or sit in the YAML editor.
 */
export const PRODUCT_NAMES = ['Keiri Studio', 'Azure OpenAI', 'OpenAI', 'React Flow'];

/**
 * The texts a person sees on the page now, in its Japanese mode, that are developer language:
 * a sentence with no Japanese in it (two or more Latin words), an environment variable name
 * (`KEIRI_…`, `OPENAI_API_KEY`), a CLI flag (`--templates`), a retrieval score's name (`BM25`,
 * `json_schema`), or machine Japanese that glues an ASCII key onto 「の」 (「… の path」).
 * Skipped: what is not rendered (hidden, closed `<details>`), the YAML editor, and elements
 * marked `translate="no"`. Each problem is `{text, where}` (`where`: the nearest test id).
 */
export async function developerLanguage(page) {
  return page.evaluate((names) => {
    const japanese = /[\u3040-\u30ff\u3400-\u9fff\uff01-\uff5e]/u;
    const problems = [];
    const seen = new Set();
    const skipped = (el) =>
      el.closest('[translate="no"], .cm-editor, script, style, noscript, svg title') !== null ||
      !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
    const where = (el) => el.closest('[data-testid]')?.getAttribute('data-testid') ?? el.tagName.toLowerCase();
    const judge = (raw, el) => {
      let text = raw.replace(/\s+/gu, ' ').trim();
      if (text === '') return;
      for (const name of names) text = text.split(name).join('');
      const reasons = [];
      if (/KEIRI_[A-Z]|OPENAI_API_KEY|AZURE_OPENAI_/u.test(text)) reasons.push('environment variable');
      if (/(^|[\s(（「])--[a-z]/u.test(text)) reasons.push('command-line flag');
      if (/\bBM25\b|json_schema|意味 ?\d+\.\d/u.test(text)) reasons.push('retrieval jargon');
      if (/[\u3040-\u30ff\u3400-\u9fff] の [a-z][a-z0-9_]*(?![a-z0-9_])/u.test(text)) reasons.push('machine Japanese');
      // Two or more words (whitespace apart) with letters: an identifier such as `csv.read`
      // or a file name is one word and no sentence.
      const words = text.split(/\s+/u).filter((word) => /[A-Za-z]{2,}/u.test(word));
      if (!japanese.test(text) && words.length >= 2) reasons.push('English sentence');
      if (reasons.length === 0) return;
      const key = `${where(el)}|${raw}`;
      if (seen.has(key)) return;
      seen.add(key);
      problems.push({ text: raw.replace(/\s+/gu, ' ').trim(), where: where(el), reasons });
    };
    // An element's own text: its direct text nodes joined, so `BM25 ` and `12.3` rendered as
    // two nodes are judged together.
    for (const el of document.body.querySelectorAll('*')) {
      if (skipped(el)) continue;
      const own = [...el.childNodes]
        .filter((node) => node.nodeType === Node.TEXT_NODE)
        .map((node) => node.textContent ?? '')
        .join('');
      judge(own, el);
      if ((el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) && el.value === '') judge(el.placeholder, el);
    }
    return problems;
  }, PRODUCT_NAMES);
}

/**
 * The controls (buttons, inputs, selects, text areas, links) drawn wrongly at the page's size:
 * outside the window, clipped by a parent that does not scroll, wider than the panel that
 * scrolls them, or whose label wraps onto a second line (「ファイルを追 / 加」) or is cut.
 * Each problem is `{control, where, problem}`.
 */
export async function clippedControls(page) {
  return page.evaluate(() => {
    const problems = [];
    const tolerance = 1;
    const label = (el) =>
      (el.textContent ?? '').replace(/\s+/gu, ' ').trim().slice(0, 40) ||
      el.getAttribute('aria-label') ||
      el.getAttribute('placeholder') ||
      el.getAttribute('data-testid') ||
      el.tagName.toLowerCase();
    const where = (el) => el.closest('[data-testid]')?.getAttribute('data-testid') ?? '';
    const scrolls = (style, axis) => ['auto', 'scroll'].includes(axis === 'x' ? style.overflowX : style.overflowY);
    const controls = document.body.querySelectorAll(
      'button, input:not([type="hidden"]), select, textarea, a[href], [role="tab"]',
    );
    for (const el of controls) {
      if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      if (el.closest('.cm-editor, .react-flow__renderer') !== null) continue;
      const rect = el.getBoundingClientRect();
      if (rect.width === 0 && rect.height === 0) continue;
      const report = (problem) => problems.push({ control: label(el), where: where(el), problem });
      // Outside the window, unless a scrolling parent can bring it in.
      let scroller = null;
      let clippedBy = null;
      for (let parent = el.parentElement; parent !== null && parent !== document.body; parent = parent.parentElement) {
        const style = getComputedStyle(parent);
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const box = parent.getBoundingClientRect();
        const canScrollX = scrolls(style, 'x');
        const canScrollY = scrolls(style, 'y');
        if (canScrollX || canScrollY) {
          scroller ??= parent;
          // Scrolling down a panel to reach a control is fine; scrolling a panel sideways to
          // see a control is not (a card wider than its column cuts its 固定 button).
          const inner = parent.clientWidth > 0 ? box.left + parent.clientLeft + parent.clientWidth : box.right;
          if (rect.left < box.left - tolerance || rect.right > inner + tolerance) {
            clippedBy = `cut at the side of its panel (${Math.round(rect.left)}–${Math.round(rect.right)} px, panel ${Math.round(box.left)}–${Math.round(inner)} px)`;
          }
          break;
        }
        const outside =
          rect.left < box.left - tolerance ||
          rect.right > box.right + tolerance ||
          rect.top < box.top - tolerance ||
          rect.bottom > box.bottom + tolerance;
        if (outside) {
          clippedBy = `clipped by a parent that does not scroll (${parent.className || parent.tagName.toLowerCase()})`;
          break;
        }
      }
      if (clippedBy !== null) report(clippedBy);
      else if (
        scroller === null &&
        (rect.left < -tolerance || rect.top < -tolerance || rect.right > innerWidth + tolerance || rect.bottom > innerHeight + tolerance)
      ) {
        report(`outside the ${innerWidth}×${innerHeight} window (${Math.round(rect.left)},${Math.round(rect.top)} – ${Math.round(rect.right)},${Math.round(rect.bottom)})`);
      }
      // A button's or tab's label: on one line and whole. A button that is a whole list entry
      // (a finding: severity, place and message) says so with data-multiline and may wrap.
      if ((el instanceof HTMLButtonElement && !el.hasAttribute('data-multiline')) || el.getAttribute('role') === 'tab') {
        const text = (el.textContent ?? '').trim();
        if (text === '') continue;
        const range = document.createRange();
        range.selectNodeContents(el);
        // Lines are the rectangles that do not overlap vertically (a badge beside the text sits
        // a few pixels lower, on the same line).
        const rects = [...range.getClientRects()].filter((r) => r.width > 0 && r.height > 0).sort((a, b) => a.top - b.top);
        let lines = rects.length > 0 ? 1 : 0;
        let bottom = rects[0]?.bottom ?? 0;
        for (const r of rects.slice(1)) {
          if (r.top >= bottom - 2) {
            lines += 1;
            bottom = r.bottom;
          } else bottom = Math.max(bottom, r.bottom);
        }
        if (lines > 1) report(`its label wraps onto ${lines} lines`);
        if (el.scrollWidth > el.clientWidth + tolerance) report(`its label is cut (${el.scrollWidth} > ${el.clientWidth} px)`);
      }
    }
    return problems;
  });
}

/**
 * Checks the screen a journey shows now, in its Japanese mode: no developer language
 * (`developerLanguage`) and no clipped control (`clippedControls`). Fails with every problem
 * found, naming the screen; a screenshot of it goes to `screens/<screen>.png`.
 */
export async function checkScreen(page, screen, { language = true, layout = true } = {}) {
  await screenshot(page, `screens/${screen}.png`);
  const found = [];
  if (language) {
    for (const p of await developerLanguage(page)) found.push(`  [${p.reasons.join(', ')}] ${p.where}: ${p.text}`);
  }
  if (layout) {
    for (const p of await clippedControls(page)) found.push(`  [layout] ${p.where}: 「${p.control}」 ${p.problem}`);
  }
  if (found.length > 0) throw new Error(`screen "${screen}" is not fit for an accountant:\n${found.join('\n')}`);
}

/**
 * The ja-mode scan of a journey (issue 34, item 7): after each step, when the window speaks
 * Japanese, no developer language is on the screen (`developerLanguage`). Call it from the
 * suite's `afterEach` with the step's context; steps that switched to English are passed over.
 */
export async function scanStep(page, journey, context) {
  if (page === undefined || page.isClosed()) return;
  const lang = await page.evaluate(() => document.documentElement.lang);
  if (lang !== 'ja') return;
  const step = (context?.name ?? 'step').replace(/[^\p{L}\p{N}]+/gu, '-').slice(0, 60);
  await checkScreen(page, `${journey}-after-${step}`, { layout: false });
}

// ---- Workbooks for a journey ----

/** A zip of `[name, text]` entries, stored (not deflated): enough for a small .xlsx. */
export function storedZip(files) {
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

/**
 * A one-sheet .xlsx named `sheet` whose `<sheetData>` is `rows` (cell XML as Excel writes it:
 * `<c r="B4"><f>B2-B3</f><v>600</v></c>` is a formula with its cached value) and whose shared
 * strings are `strings` (`t="s"` cells index them).
 */
export function xlsxWorkbook(sheet, rows, strings = []) {
  const ns = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
  const rel = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
  const escape = (text) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  return storedZip([
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
      `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${ns}" xmlns:r="${rel}"><sheets><sheet name="${escape(sheet)}" sheetId="1" r:id="rId1"/></sheets><calcPr calcId="191029"/></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${rel}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${rel}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ],
    [
      'xl/sharedStrings.xml',
      `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${ns}" count="${strings.length}" uniqueCount="${strings.length}">${strings.map((text) => `<si><t>${escape(text)}</t></si>`).join('')}</sst>`,
    ],
    ['xl/worksheets/sheet1.xml', `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${ns}"><sheetData>${rows}</sheetData></worksheet>`],
  ]);
}
