import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// The browser transport carries `keiri serve`'s per-launch token: read from the page URL once,
// kept in sessionStorage, removed from the address bar, sent on every call.
vi.mock('@tauri-apps/api/core', () => ({ invoke: vi.fn(), Channel: class {} }));

import { TOKEN_STORAGE_KEY, browserToken, call, callStream, resetBrowserToken } from './transport';

function mockFetch() {
  const fetchMock = vi.fn(async (_url: string, _init: RequestInit) => {
    return new Response('{"result":{}}\n', { status: 200, headers: { 'content-type': 'application/json' } });
  });
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

type FetchCall = [string, RequestInit];

/** The URL and headers of the `n`th fetch call. */
function sent(fetchMock: ReturnType<typeof mockFetch>, n: number): { url: string; headers: Record<string, string> } {
  const [url, init] = fetchMock.mock.calls[n] as unknown as FetchCall;
  return { url, headers: init.headers as Record<string, string> };
}

beforeEach(() => {
  window.sessionStorage.clear();
  resetBrowserToken();
});

afterEach(() => {
  vi.unstubAllGlobals();
  window.history.replaceState(null, '', '/');
});

describe('the keiri serve token', () => {
  it('is read from the URL, kept for the tab, taken off the address bar and sent on every call', async () => {
    window.history.replaceState(null, '', '/?token=abc123&lang=en#design');
    const fetchMock = mockFetch();
    await call('catalog_list', {});
    expect(window.location.search).toBe('?lang=en');
    expect(window.location.hash).toBe('#design');
    expect(window.sessionStorage.getItem(TOKEN_STORAGE_KEY)).toBe('abc123');
    const first = sent(fetchMock, 0);
    expect(first.url).toBe('/api/catalog_list');
    expect(first.headers).toEqual({ 'content-type': 'application/json', 'x-keiri-token': 'abc123' });

    await callStream('plan_generate', { instruction: 'x' }, () => undefined);
    expect(sent(fetchMock, 1).headers['x-keiri-token']).toBe('abc123');
  });

  it('survives a reload of the tab from sessionStorage', () => {
    window.sessionStorage.setItem(TOKEN_STORAGE_KEY, 'kept');
    expect(browserToken()).toBe('kept');
  });

  it('is simply absent when the page was opened without one', async () => {
    const fetchMock = mockFetch();
    await call('catalog_list', {});
    expect(sent(fetchMock, 0).headers).toEqual({ 'content-type': 'application/json' });
  });
});
