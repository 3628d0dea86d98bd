// The real desktop window, driven over W3C WebDriver: tauri-driver (from crates.io) in front of
// WebKitWebDriver (Debian's webkit2gtk-driver), under Xvfb. Plain `fetch` calls, no client
// library: a session, find an element, click, type, read, run a script, take a screenshot.
//
// Shared by the smoke test (window.test.mjs) and the cold-start benchmark
// (scripts/bench-cold-start.mjs). The app inherits no LLM variable (../e2e/support.mjs).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, freePort, inheritedEnv } from '../e2e/support.mjs';

export { REPO, UI_DIR, configDir, freePort } from '../e2e/support.mjs';
const TARGET_DIR = process.env.CARGO_TARGET_DIR ? path.resolve(REPO, process.env.CARGO_TARGET_DIR) : path.join(REPO, 'target');
/** The desktop binary under test (`make test-desktop` builds it with the built UI inside). */
export const APP = path.resolve(REPO, process.env.KEIRI_STUDIO_BIN ?? path.join(TARGET_DIR, 'debug', 'keiri-studio'));
export const TAURI_DRIVER =
  process.env.TAURI_DRIVER ??
  // CARGO_HOME first: CI runs with an empty HOME while cargo (and tauri-driver) stay put.
  [process.env.CARGO_HOME ?? '', path.join(os.homedir(), '.cargo')]
    .filter((dir) => dir !== '')
    .map((dir) => path.join(dir, 'bin', 'tauri-driver'))
    .find(existsSync) ??
  'tauri-driver';
export const NATIVE_DRIVER = process.env.WEBKIT_WEBDRIVER ?? '/usr/bin/WebKitWebDriver';

/** The W3C key code of Control (held until released by sending it again). */
export const CONTROL = '\uE009';
/** An element reference's id: the value under the W3C web element identifier key. */
const elementId = (reference) => Object.values(reference)[0];

export function requireFile(file, what) {
  if (!existsSync(file)) throw new Error(`missing ${what}: ${file}`);
}

export function requireCommand(command, what) {
  const found = command.includes('/') ? existsSync(command) : spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
  if (!found) throw new Error(`missing ${what}: ${command} (run scripts/setup-system.sh)`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts tauri-driver under `xvfb-run` in its own process group, with `env` added to the
 * environment the app inherits (this process's, without any LLM variable). Resolves once the
 * driver answers `/status`.
 */
export async function startDriver(env = {}) {
  requireCommand('xvfb-run', 'xvfb-run (Debian package xvfb)');
  requireCommand(TAURI_DRIVER, 'tauri-driver (cargo install tauri-driver --locked)');
  requireFile(NATIVE_DRIVER, 'WebKitWebDriver (Debian package webkit2gtk-driver)');
  const port = await freePort();
  const nativePort = await freePort();
  const child = spawn(
    'xvfb-run',
    [
      '-a',
      '-s',
      '-screen 0 1280x800x24',
      TAURI_DRIVER,
      '--port',
      String(port),
      '--native-port',
      String(nativePort),
      '--native-driver',
      NATIVE_DRIVER,
    ],
    { env: { ...inheritedEnv(), ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const driver = {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    /** Ends the driver, Xvfb, WebKitWebDriver and any app they started: the whole group. */
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        return;
      }
      const done = await Promise.race([exited, sleep(5000).then(() => null)]);
      if (done === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`tauri-driver exited early (code ${child.exitCode})\n${output}`);
    try {
      const response = await fetch(`${driver.url}/status`);
      if (response.ok) return driver;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await driver.stop();
      throw new Error(`tauri-driver did not start in 30 s\n${output}`);
    }
    await sleep(100);
  }
}

async function command(base, method, route, body) {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${method} ${route}: HTTP ${response.status}, not JSON: ${text.slice(0, 500)}`);
  }
  if (!response.ok || (json.value && json.value.error)) {
    const error = json.value ?? {};
    const err = new Error(`${method} ${route}: ${error.error ?? response.status}: ${error.message ?? text.slice(0, 500)}`);
    err.webdriverError = error.error;
    throw err;
  }
  return json.value;
}

/**
 * Errors a wait polls past: an element replaced since it was found (a page that reloaded, an
 * editor that mounted again) and a page still unloading.
 */
function passing(err) {
  return err.webdriverError === 'stale element reference' || err.webdriverError === 'no such frame';
}

/** Opens the app (`application`) in a new session: this starts the process and its window. */
export async function newSession(driver, application = APP) {
  const value = await command(driver.url, 'POST', '/session', {
    capabilities: {
      alwaysMatch: { browserName: 'wry', 'tauri:options': { application } },
    },
  });
  const base = `${driver.url}/session/${value.sessionId}`;
  const session = {
    id: value.sessionId,
    call: (method, route, body) => command(base, method, route, body),
    async find(css) {
      const found = await session.call('POST', '/element', { using: 'css selector', value: css });
      return elementId(found);
    },
    async findAll(css) {
      const found = await session.call('POST', '/elements', { using: 'css selector', value: css });
      return found.map(elementId);
    },
    /**
     * Waits until `css` matches an element and returns it. A page that is reloading answers
     * `no such frame` for a moment (WebKit's driver, while the old page unloads): that is
     * "not yet", as no match is.
     */
    async waitFor(css, timeoutMs = 30_000, pollMs = 50) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        try {
          const found = await session.findAll(css);
          if (found.length > 0) return found[0];
        } catch (err) {
          if (!passing(err)) throw err;
        }
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${css}`);
        await sleep(pollMs);
      }
    },
    /**
     * Waits until the first element matching `css` has text matching `pattern` and returns that
     * text. The element is found again at each try: a page that reloads or an editor that
     * mounts again replaces it, and the one found a moment ago is then stale.
     */
    async waitForText(css, pattern, timeoutMs = 30_000, pollMs = 50) {
      const deadline = Date.now() + timeoutMs;
      let last = '(no element)';
      for (;;) {
        try {
          const [element] = await session.findAll(css);
          if (element !== undefined) {
            last = await session.text(element);
            if (pattern.test(last)) return last;
          }
        } catch (err) {
          if (!passing(err)) throw err;
          last = `(${err.webdriverError})`;
        }
        if (Date.now() > deadline) {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${css} to match ${pattern}; last: ${last.slice(0, 200)}`);
        }
        await sleep(pollMs);
      }
    },
    click: (element) => session.call('POST', `/element/${element}/click`, {}),
    type: (element, text) => session.call('POST', `/element/${element}/value`, { text }),
    text: (element) => session.call('GET', `/element/${element}/text`),
    attribute: (element, name) => session.call('GET', `/element/${element}/attribute/${name}`),
    execute: (script, args = []) => session.call('POST', '/execute/sync', { script, args }),
    title: () => session.call('GET', '/title'),
    /** A PNG of the window, as a Buffer. */
    async screenshot() {
      return Buffer.from(await session.call('GET', '/screenshot'), 'base64');
    },
    async close() {
      try {
        await session.call('DELETE', '');
      } catch {
        // the app may already be gone
      }
    },
  };
  return session;
}

/**
 * Page-side timings of the window open in `session`, in ms: `navigationStart` (epoch ms when
 * the page began to load), `catalogAnswered` (since then, when the first `catalog_list` IPC
 * answer arrived, from resource timing: null where the webview does not record IPC requests,
 * as WebKitGTK does not) and `interactive` (since then, the UI's own mark
 * `window.__KEIRI_INTERACTIVE__` if it sets one, else null), plus `now`.
 */
export function pageTimings(session) {
  return session.execute(`
    const entry = performance.getEntriesByType('resource').find((e) => e.name.includes('catalog_list'));
    const mark = typeof window.__KEIRI_INTERACTIVE__ === 'number' ? window.__KEIRI_INTERACTIVE__ : null;
    return {
      navigationStart: performance.timeOrigin,
      catalogAnswered: entry ? entry.responseEnd : null,
      interactive: mark,
      now: performance.now(),
    };
  `);
}
