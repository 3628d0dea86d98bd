// The settings dialog against a mocked `keiri serve`: what it loads and sends, that a saved
// API key is only ever shown as "保存済み" (or "このセッションのみ"), how refusals (a bad field,
// no keychain) read, what is in effect and from where, the connection test, and the statement
// of what leaves the computer.

import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EffectiveSettings, SettingsGetResponse } from '../../api/types';
import { SettingsDialog } from './SettingsDialog';
import { limitProblem, saveRequest } from './useSettings';

const KEY = 'sk-test-SECRET-0123456789';

const NOT_CONFIGURED: EffectiveSettings = {
  configured: false,
  provider: null,
  model: { value: 'gpt-4.1', source: 'default' },
  base_url: null,
  deployment: null,
  api_key: null,
  embedding: { value: 'auto', source: 'default' },
  cloud_embeddings: false,
  settings_overridden: false,
  variables: [],
  problem: { code: 'LLM_NOT_CONFIGURED', message: 'no LLM provider is configured' },
};

const STORED: SettingsGetResponse = {
  provider: 'openai',
  model: 'gpt-4.1',
  lang: 'ja',
  api_key_set: false,
  api_key_storage: null,
  keychain_available: true,
  path: '/home/u/.config/keiri-studio/settings.json',
  effective: NOT_CONFIGURED,
};

const TESTED = {
  ok: false,
  provider: 'openai_compatible',
  model: 'qwen',
  base_url: 'http://127.0.0.1:9/v1',
  elapsed_ms: 3,
  code: 'LLM_CONNECTION',
  message: 'サーバーに接続できませんでした。URLと、サーバーが起動しているかを確認してください',
  detail: 'cannot reach the LLM provider (attempts: 1): connection refused',
};

interface Call {
  fn: string;
  body: Record<string, unknown>;
}

/** Answers `settings_get` with `stored` and `settings_save` with `onSave`; records every call. */
function server(stored: SettingsGetResponse, onSave: (body: Record<string, unknown>) => [number, unknown]) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      const fn = url.replace('/api/', '');
      const body = JSON.parse(String(init.body)) as Record<string, unknown>;
      calls.push({ fn, body });
      const [status, answer] =
        fn === 'settings_get'
          ? [200, stored]
          : fn === 'llm_connection_test'
            ? [200, TESTED]
            : onSave(body);
      return new Response(JSON.stringify(answer), { status });
    }),
  );
  return calls;
}

function open(props: Partial<Parameters<typeof SettingsDialog>[0]> = {}) {
  const onClose = vi.fn();
  const onLangChange = vi.fn();
  render(<SettingsDialog lang="ja" open onClose={onClose} onLangChange={onLangChange} {...props} />);
  return { onClose, onLangChange };
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('SettingsDialog', () => {
  it('renders nothing while closed', () => {
    const calls = server(STORED, () => [200, STORED]);
    render(<SettingsDialog lang="ja" open={false} onClose={() => {}} onLangChange={() => {}} />);
    expect(screen.queryByTestId('settings-dialog')).toBeNull();
    expect(calls).toEqual([]);
  });

  it('loads the saved settings into the form', async () => {
    server({ ...STORED, embedding: 'bm25-only', workspace: '/books' }, () => [200, STORED]);
    open();
    const provider = (await screen.findByTestId('settings-provider')) as HTMLSelectElement;
    expect(provider.value).toBe('openai');
    expect((screen.getByTestId('settings-model') as HTMLInputElement).value).toBe('gpt-4.1');
    expect((screen.getByTestId('settings-embedding') as HTMLSelectElement).value).toBe('bm25-only');
    expect((screen.getByTestId('settings-workspace') as HTMLInputElement).value).toBe('/books');
    expect((screen.getByTestId('settings-lang') as HTMLSelectElement).value).toBe('ja');
    const key = screen.getByTestId('settings-api-key') as HTMLInputElement;
    expect(key.type).toBe('password');
    expect(screen.getByText('設定')).toBeTruthy();
  });

  it('sends a typed key once and afterwards only shows that one is saved', async () => {
    const calls = server(STORED, (body) => [200, { ...STORED, model: body.model, api_key_set: true }]);
    open();
    fireEvent.change(await screen.findByTestId('settings-api-key'), { target: { value: KEY } });
    fireEvent.change(screen.getByTestId('settings-model'), { target: { value: ' gpt-4.1-mini ' } });
    fireEvent.click(screen.getByTestId('settings-save'));

    expect(await screen.findByTestId('settings-api-key-saved')).toBeTruthy();
    expect(screen.getByTestId('settings-api-key-saved').textContent).toBe('保存済み');
    expect(screen.queryByTestId('settings-api-key')).toBeNull();
    expect(document.body.innerHTML).not.toContain(KEY);
    expect(screen.getByTestId('settings-status').textContent).toBe('設定を保存しました');
    const save = calls.find((c) => c.fn === 'settings_save');
    expect(save?.body).toMatchObject({ provider: 'openai', model: 'gpt-4.1-mini', api_key: KEY, lang: 'ja' });

    // Saving again without touching the key leaves it out: the stored key is kept.
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(calls.filter((c) => c.fn === 'settings_save')).toHaveLength(2));
    expect(calls[calls.length - 1]?.body).not.toHaveProperty('api_key');
  });

  it('deletes a saved key with an empty api_key', async () => {
    const calls = server({ ...STORED, api_key_set: true }, () => [200, STORED]);
    open();
    fireEvent.click(await screen.findByTestId('settings-api-key-delete'));
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(calls.some((c) => c.fn === 'settings_save')).toBe(true));
    expect(calls.find((c) => c.fn === 'settings_save')?.body.api_key).toBe('');
  });

  it('names the field the API refused', async () => {
    server({ ...STORED, provider: 'none' }, () => [
      400,
      { code: 'INVALID_REQUEST', message: 'base_url: …', details: { field: 'base_url' } },
    ]);
    open({ lang: 'en' });
    fireEvent.change(await screen.findByTestId('settings-provider'), { target: { value: 'compatible' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    const status = await screen.findByText(/Could not save: Enter the server URL/);
    expect(status.getAttribute('data-tone')).toBe('error');
    expect(screen.getByTestId('settings-base-url').getAttribute('aria-invalid')).toBe('true');
  });

  it('shows the saved run bounds, sends what is typed and names a bound that is not a number', async () => {
    const calls = server({ ...STORED, run_limits: { memory_mb: 8192 } }, (body) => [200, { ...STORED, run_limits: body.run_limits }]);
    open();
    const memory = (await screen.findByTestId('settings-limit-memory_mb')) as HTMLInputElement;
    expect(memory.value).toBe('8192');
    // Blank bounds show the built-in ceiling as their placeholder.
    expect(screen.getByTestId('settings-limit-join_rows').getAttribute('placeholder')).toBe('200,000,000');
    fireEvent.change(memory, { target: { value: '8GB' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await screen.findByText(/実行のメモリは MB の整数で入力してください/);
    expect(memory.getAttribute('aria-invalid')).toBe('true');
    expect(calls.filter((c) => c.fn === 'settings_save')).toHaveLength(0);
    fireEvent.change(memory, { target: { value: '4,096' } });
    fireEvent.change(screen.getByTestId('settings-limit-foreach_items'), { target: { value: '2000000' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(calls.filter((c) => c.fn === 'settings_save')).toHaveLength(1));
    expect(calls.find((c) => c.fn === 'settings_save')?.body.run_limits).toEqual({ foreach_items: 2_000_000, memory_mb: 4096 });
  });

  it('says so when the keychain is unavailable', async () => {
    server(STORED, () => [500, { code: 'KEYCHAIN_UNAVAILABLE', message: 'the OS keychain is not available: …' }]);
    open();
    fireEvent.change(await screen.findByTestId('settings-api-key'), { target: { value: KEY } });
    fireEvent.click(screen.getByTestId('settings-save'));
    expect(await screen.findByText('保存できませんでした: OSのキーチェーンを利用できません')).toBeTruthy();
  });

  it('offers to keep the key for this session when the keychain cannot be reached', async () => {
    const calls = server({ ...STORED, keychain_available: false }, () => [
      200,
      { ...STORED, keychain_available: false, api_key_set: true, api_key_storage: 'session' },
    ]);
    open();
    expect(await screen.findByTestId('settings-keychain-unavailable')).toBeTruthy();
    fireEvent.change(screen.getByTestId('settings-api-key'), { target: { value: KEY } });
    expect((screen.getByTestId('settings-key-session') as HTMLInputElement).checked).toBe(true);
    fireEvent.click(screen.getByTestId('settings-save'));
    expect((await screen.findByTestId('settings-api-key-saved')).textContent).toBe('このセッションのみ');
    expect(calls.find((c) => c.fn === 'settings_save')?.body).toMatchObject({ api_key: KEY, key_storage: 'session' });
    expect(document.body.innerHTML).not.toContain(KEY);
  });

  it('offers the session after the keychain refused a key, and saves it there', async () => {
    const calls = server(STORED, (body) =>
      body.key_storage === 'session'
        ? [200, { ...STORED, keychain_available: false, api_key_set: true, api_key_storage: 'session' }]
        : [500, { code: 'KEYCHAIN_UNAVAILABLE', message: 'the OS keychain is not available: …', details: { session_available: true } }],
    );
    open();
    fireEvent.change(await screen.findByTestId('settings-api-key'), { target: { value: KEY } });
    fireEvent.click(screen.getByTestId('settings-save'));
    // The status shows 保存中… first; the offer comes with the server's answer.
    await waitFor(() => expect(screen.getByTestId('settings-status').textContent).toContain('このセッションだけ使って保存'));
    fireEvent.click(await screen.findByTestId('settings-keep-for-session'));
    expect((await screen.findByTestId('settings-api-key-saved')).textContent).toBe('このセッションのみ');
    const saves = calls.filter((c) => c.fn === 'settings_save');
    expect(saves.map((c) => c.body.key_storage)).toEqual([undefined, 'session']);
  });

  it('shows the provider the environment configures, never "not set"', async () => {
    server(
      {
        ...STORED,
        provider: 'none',
        effective: {
          ...NOT_CONFIGURED,
          configured: true,
          problem: null,
          provider: { value: 'openai_compatible', source: 'environment' },
          model: { value: 'qwen', source: 'env_file' },
          base_url: { value: 'http://127.0.0.1:8080/v1', source: 'environment' },
          variables: ['KEIRI_LLM_BASE_URL', 'KEIRI_LLM_MODEL'],
        },
      },
      () => [200, STORED],
    );
    open();
    const provider = (await screen.findByTestId('settings-provider')) as HTMLSelectElement;
    expect(provider.selectedOptions[0]?.textContent).toBe('環境変数の設定を使う（OpenAI互換サーバー）');
    expect(screen.getByTestId('settings-effective-provider').textContent).toBe('OpenAI互換サーバー（環境変数）');
    expect(screen.getByTestId('settings-effective-model').textContent).toBe('qwen（ワークスペースの .env ファイル）');
    expect(screen.getByTestId('settings-effective-key').textContent).toBe('使用しない');
    expect(screen.getByTestId('settings-privacy').textContent).toContain('接続先はこのPCの中のサーバーです。');
    // Variable names only inside the administrators' details.
    expect(screen.getByTestId('settings-admin').textContent).toContain('KEIRI_LLM_BASE_URL');
  });

  it('reports the connection test with its message and code', async () => {
    const calls = server(STORED, () => [200, STORED]);
    open();
    fireEvent.click(await screen.findByTestId('settings-test'));
    const result = await screen.findByTestId('settings-test-result');
    expect(result.textContent).toBe(TESTED.message);
    expect(result.getAttribute('data-ok')).toBe('false');
    expect(result.getAttribute('data-code')).toBe('LLM_CONNECTION');
    expect(calls.find((c) => c.fn === 'llm_connection_test')?.body).toEqual({ lang: 'ja' });
  });

  it('says embeddings stay local unless cloud embeddings are chosen', async () => {
    server(STORED, () => [200, STORED]);
    open();
    const statement = await screen.findByTestId('settings-privacy-embedding');
    expect(statement.getAttribute('data-cloud')).toBe('false');
    expect(statement.textContent).toBe('候補検索の埋め込みはこのPCの中で計算され、外部には送信されません。');
    fireEvent.change(screen.getByTestId('settings-embedding'), { target: { value: 'openai' } });
    expect(screen.getByTestId('settings-privacy-embedding').getAttribute('data-cloud')).toBe('true');
  });

  it('reports a saved language change and closes on Escape', async () => {
    server(STORED, (body) => [200, { ...STORED, lang: body.lang }]);
    const { onLangChange, onClose } = open();
    fireEvent.change(await screen.findByTestId('settings-lang'), { target: { value: 'en' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(onLangChange).toHaveBeenCalledWith('en'));
    fireEvent.keyDown(screen.getByTestId('settings-dialog'), { key: 'Escape' });
    expect(onClose).toHaveBeenCalled();
  });
});

describe('saveRequest', () => {
  const form = {
    provider: 'azure' as const,
    model: '',
    base_url: 'http://left-over',
    azure_endpoint: ' https://r.openai.azure.com ',
    azure_deployment: 'gpt4',
    azure_api_version: '',
    embedding: 'auto' as const,
    lang: 'en' as const,
    workspace: '',
    allow_hosts: ' hooks.slack.com\n\n127.0.0.1, *.example.co.jp ',
    run_limits: { foreach_items: '', while_iterations: '', join_rows: '', memory_mb: '' },
  };

  it('sends only the fields of the chosen provider, trimmed', () => {
    expect(saveRequest(form, { kind: 'keep' })).toEqual({
      provider: 'azure',
      model: undefined,
      base_url: undefined,
      azure_endpoint: 'https://r.openai.azure.com',
      azure_deployment: 'gpt4',
      azure_api_version: undefined,
      embedding: undefined,
      lang: 'en',
      workspace: undefined,
      // One a line (or separated by commas or spaces), blanks dropped.
      allow_hosts: ['hooks.slack.com', '127.0.0.1', '*.example.co.jp'],
      // Every bound blank: the built-in ceiling.
      run_limits: {},
    });
  });

  it('sends the run bounds typed, with separators, and leaves blank ones to the built-in ceiling', () => {
    const limits = { foreach_items: '2,000,000', while_iterations: ' ', join_rows: '300000000', memory_mb: '8192' };
    expect(saveRequest({ ...form, run_limits: limits }, { kind: 'keep' }).run_limits).toEqual({
      foreach_items: 2_000_000,
      join_rows: 300_000_000,
      memory_mb: 8192,
    });
    // Not a whole number above 0: named before anything is sent.
    expect(limitProblem(limits)).toBeNull();
    expect(limitProblem({ ...limits, memory_mb: '8GB' })).toBe('memory_mb');
    expect(limitProblem({ ...limits, join_rows: '0' })).toBe('join_rows');
  });

  it('replaces, keeps or deletes the key', () => {
    expect(saveRequest(form, { kind: 'replace', key: KEY }).api_key).toBe(KEY);
    expect(saveRequest(form, { kind: 'replace', key: KEY })).not.toHaveProperty('key_storage');
    expect(saveRequest(form, { kind: 'replace', key: KEY }, 'session').key_storage).toBe('session');
    expect(saveRequest(form, { kind: 'replace', key: '  ' })).not.toHaveProperty('api_key');
    expect(saveRequest(form, { kind: 'keep' })).not.toHaveProperty('api_key');
    expect(saveRequest(form, { kind: 'delete' }).api_key).toBe('');
  });
});
