// End-to-end: the settings dialog in headless Chromium against `keiri serve` on a machine
// without an OS keychain (`KEIRI_KEYCHAIN=off`, so the test never touches a real keychain).
//
// Journey 1 (no keychain): the dialog says nothing is configured → an OpenAI-compatible server
// and a key are saved → the keychain refuses, and the dialog offers to keep the key for this
// session → kept → 接続テスト reports the server's refusal of a wrong key (LLM_UNAUTHORIZED) →
// the right key, kept for the session → 接続テスト succeeds → reopening the dialog still shows
// the session key, a chat turn sends it, and no file in the workspace or settings holds it.
//
// Journey 2 (environment): a server named by the environment is shown as the provider in
// effect with its source — never 「未設定」 — and 接続テスト reaches it without any key.
//
// The fake LLM servers are written here: the first answers only requests that carry the right
// key (and records the Authorization header), the second needs no key.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import * as support from './support.mjs';

const { completion, launchChromium, openPage, requirePrerequisites, screenshot, startFakeLlm, startServe } = support;

const WRONG_KEY = 'sk-e2e-wrong-0000';
const RIGHT_KEY = 'sk-e2e-right-7f3a9c';

/** An OpenAI-compatible server that answers only `Bearer <key>`; records every request. */
function startKeyedLlm(key) {
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
        // Recorded as null.
      }
      requests.push({ url: req.url, authorization: req.headers.authorization ?? null, body });
      if (req.headers.authorization !== `Bearer ${key}`) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion({ content: 'OK' }, 'stop')));
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        requests,
        url: `http://127.0.0.1:${server.address().port}/v1`,
        close: () => {
          server.closeAllConnections();
          server.close();
        },
      }),
    );
  });
}

/** Every file under `dir`. */
function filesUnder(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) out.push(...filesUnder(file));
    else out.push(file);
  }
  return out;
}

/** The screen check of the other journeys (developer language, clipped controls), when present. */
async function check(page, screen) {
  if (typeof support.checkScreen === 'function') await support.checkScreen(page, screen);
  else await screenshot(page, `screens/${screen}.png`);
}

async function openSettings(page) {
  await page.getByTestId('open-settings').click();
  await page.getByTestId('settings-provider').waitFor();
}

async function runConnectionTest(page) {
  // A click shows 「テスト中…」 and removes the previous result (React flushes a click's update
  // before the event returns), so the result waited for is this test's.
  await page.getByTestId('settings-test').click();
  const result = page.getByTestId('settings-test-result');
  await result.waitFor();
  return {
    ok: await result.getAttribute('data-ok'),
    code: await result.getAttribute('data-code'),
    text: (await result.textContent()) ?? '',
  };
}

describe('settings without an OS keychain', () => {
  let workspace;
  let llm;
  let serve;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => support.scanStep(page, 'settings', t));
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-studio-e2e-settings-'));
    llm = await startKeyedLlm(RIGHT_KEY);
    // No LLM variable at all: only the dialog configures the model.
    serve = await startServe(workspace, { env: { KEIRI_KEYCHAIN: 'off' } });
    browser = await launchChromium();
    page = await openPage(browser, serve.url, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    llm?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('says no model is configured, and what would leave the computer', async () => {
    await openSettings(page);
    const effective = page.getByTestId('settings-effective-provider');
    assert.equal(await effective.getAttribute('data-source'), 'none');
    assert.match((await effective.textContent()) ?? '', /未設定/);
    const embedding = page.getByTestId('settings-privacy-embedding');
    assert.equal(await embedding.getAttribute('data-cloud'), 'false');
    assert.equal(await embedding.textContent(), '候補検索の埋め込みはこのPCの中で計算され、外部には送信されません。');
    assert.match((await page.getByTestId('settings-privacy').textContent()) ?? '', /添付資料から抜き出した文章/);
  });

  it('offers the session when the keychain refuses a key, and the key then works', async () => {
    await page.getByTestId('settings-provider').selectOption('compatible');
    await page.getByTestId('settings-base-url').fill(llm.url);
    await page.getByTestId('settings-model').fill('fake-model');
    await page.getByTestId('settings-api-key').fill(WRONG_KEY);
    await page.getByTestId('settings-save').click();

    // The keychain is refused: the dialog says so and offers the session.
    const offer = page.getByTestId('settings-keep-for-session');
    await offer.waitFor();
    assert.match((await page.getByTestId('settings-status').textContent()) ?? '', /キーチェーンを利用できない/);
    await page.getByTestId('settings-keychain-unavailable').waitFor();
    await check(page, 'settings-keychain-refused');
    await offer.click();
    const badge = page.getByTestId('settings-api-key-saved');
    await badge.waitFor();
    assert.equal(await badge.textContent(), 'このセッションのみ');
    assert.equal(await page.getByTestId('settings-status').textContent(), '設定を保存しました');

    // In effect: the server from this dialog, the key from this session.
    const provider = page.getByTestId('settings-effective-provider');
    assert.equal(await provider.getAttribute('data-source'), 'settings');
    assert.equal(await provider.textContent(), 'OpenAI互換サーバー（この設定画面）');
    assert.equal(await page.getByTestId('settings-effective-key').getAttribute('data-source'), 'session');

    // The wrong key: the server refuses it, and the test says so in Japanese.
    const refused = await runConnectionTest(page);
    assert.equal(refused.ok, 'false');
    assert.equal(refused.code, 'LLM_UNAUTHORIZED');
    assert.equal(refused.text, 'APIキーが認められませんでした。キーが正しいか確認してください');
    assert.equal(llm.requests.at(-1).authorization, `Bearer ${WRONG_KEY}`);

    // The right key, kept for the session straight away (the dialog knows there is no keychain).
    await page.getByTestId('settings-api-key-replace').click();
    await page.getByTestId('settings-api-key').fill(RIGHT_KEY);
    assert.equal(await page.getByTestId('settings-key-session').isChecked(), true);
    await page.getByTestId('settings-save').click();
    await page.locator('[data-testid="settings-status"][data-tone="ok"]').waitFor();
    assert.equal(await page.getByTestId('settings-api-key-saved').textContent(), 'このセッションのみ');

    const connected = await runConnectionTest(page);
    assert.equal(connected.ok, 'true', connected.text);
    assert.match(connected.text, /^接続できました（OpenAI互換サーバー・モデル fake-model、\d+ ミリ秒）$/);
    assert.equal(llm.requests.at(-1).authorization, `Bearer ${RIGHT_KEY}`);
    await check(page, 'settings-session-key');
    assert.doesNotMatch(await page.content(), new RegExp(RIGHT_KEY));
  });

  it('keeps the session key for the rest of the session, in memory only', async () => {
    await page.getByTestId('settings-cancel').click();
    await page.getByTestId('settings-dialog').waitFor({ state: 'detached' });
    await openSettings(page);
    assert.equal(await page.getByTestId('settings-api-key-saved').textContent(), 'このセッションのみ');
    assert.equal(await page.getByTestId('settings-effective-key').getAttribute('data-source'), 'session');
    await page.getByTestId('settings-cancel').click();

    // Another model call of this process (a chat turn) sends the same key.
    const count = llm.requests.length;
    const response = await serve.api('chat_send', { message: 'こんにちは' });
    const body = await response.json();
    assert.equal(response.status, 200, JSON.stringify(body));
    assert.ok(llm.requests.length > count, 'the chat called the model');
    for (const request of llm.requests.slice(count)) assert.equal(request.authorization, `Bearer ${RIGHT_KEY}`);

    // Nothing on disk holds the key: not the settings, not the logs, not the chat session.
    for (const file of filesUnder(workspace)) {
      assert.ok(!readFileSync(file).includes(RIGHT_KEY), `${path.relative(workspace, file)} holds the key`);
    }
    assert.deepEqual(pageErrors, []);
  });
});

describe('settings while the environment configures a server that needs no key', () => {
  let workspace;
  let llm;
  let serve;
  let browser;
  let page;
  // The ja-mode scan: no developer language after any step.
  afterEach(async (t) => support.scanStep(page, 'settings', t));
  const pageErrors = [];

  before(async () => {
    requirePrerequisites();
    workspace = mkdtempSync(path.join(tmpdir(), 'keiri-studio-e2e-settings-env-'));
    llm = await startFakeLlm([{ body: completion({ content: 'OK' }, 'stop') }]);
    serve = await startServe(workspace, { llmBaseUrl: llm.url, env: { KEIRI_KEYCHAIN: 'off' } });
    browser = await launchChromium();
    page = await openPage(browser, serve.url, pageErrors);
  });

  after(async () => {
    await browser?.close();
    await serve?.stop();
    llm?.close();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('shows the server in effect and where it came from, and reaches it without a key', async () => {
    await openSettings(page);
    const select = page.getByTestId('settings-provider');
    assert.equal(await select.inputValue(), 'none');
    const chosen = await select.evaluate((el) => el.selectedOptions[0]?.textContent ?? '');
    assert.equal(chosen, '環境変数の設定を使う（OpenAI互換サーバー）');
    assert.doesNotMatch((await page.getByTestId('settings-dialog').textContent()) ?? '', /設定しない/);
    const provider = page.getByTestId('settings-effective-provider');
    assert.equal(await provider.getAttribute('data-source'), 'environment');
    assert.equal(await provider.textContent(), 'OpenAI互換サーバー（環境変数）');
    assert.equal(await page.getByTestId('settings-effective-url').textContent(), `${llm.url}（環境変数）`);
    assert.equal(await page.getByTestId('settings-effective-key').textContent(), '使用しない');
    assert.match((await page.getByTestId('settings-privacy').textContent()) ?? '', /接続先はこのPCの中のサーバーです/);

    const result = await runConnectionTest(page);
    assert.equal(result.ok, 'true', result.text);
    assert.equal(llm.requests.length, 1);
    await check(page, 'settings-environment');
    assert.deepEqual(pageErrors, []);
  });
});
