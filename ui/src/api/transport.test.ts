import { afterEach, describe, expect, it, vi } from 'vitest';

// The Tauri path is checked with a mocked `invoke`; the browser path with a mocked fetch.
const invokeMock = vi.hoisted(() => vi.fn());
vi.mock('@tauri-apps/api/core', () => ({ invoke: invokeMock }));

import { ApiError, INVALID_RESPONSE, TRANSPORT_ERROR, catalogList, planRegister, planValidate } from '.';
import { parseApiError } from './transport';

type FetchCall = [string, RequestInit];

function mockFetch(status: number, body: string, statusText = '') {
  const fetchMock = vi.fn(async () => new Response(body, { status, statusText }));
  vi.stubGlobal('fetch', fetchMock);
  return fetchMock;
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  }
  throw new Error('expected the call to fail');
}

afterEach(() => {
  vi.unstubAllGlobals();
  invokeMock.mockReset();
  delete (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__;
});

describe('browser transport', () => {
  it('posts the request as JSON to /api/<function> and returns the body', async () => {
    const response = { valid: true, error_count: 0, warning_count: 0, findings: [] };
    const fetchMock = mockFetch(200, JSON.stringify(response));
    await expect(planValidate({ yaml: 'id: x', lang: 'en' })).resolves.toEqual(response);
    expect(fetchMock).toHaveBeenCalledTimes(1);
    const [url, init] = fetchMock.mock.calls[0] as unknown as FetchCall;
    expect(url).toBe('/api/plan_validate');
    expect(init.method).toBe('POST');
    expect(new Headers(init.headers).get('content-type')).toBe('application/json');
    expect(JSON.parse(String(init.body))).toEqual({ yaml: 'id: x', lang: 'en' });
    expect(invokeMock).not.toHaveBeenCalled();
  });

  it('sends an empty object when the request has no fields', async () => {
    const fetchMock = mockFetch(200, JSON.stringify({ blocks: [], issues: [] }));
    await catalogList();
    const [url, init] = fetchMock.mock.calls[0] as unknown as FetchCall;
    expect(url).toBe('/api/catalog_list');
    expect(init.body).toBe('{}');
  });

  // Each case: HTTP status, body, expected code, message and details of the ApiError.
  const errorCases: [string, number, string, string, string, unknown][] = [
    [
      'an API error body keeps its code, message and details',
      422,
      JSON.stringify({ code: 'PLAN_INVALID', message: 'plan has 1 error', details: { findings: [{ code: 'x' }] } }),
      'PLAN_INVALID',
      'plan has 1 error',
      { findings: [{ code: 'x' }] },
    ],
    [
      'an error without details',
      409,
      JSON.stringify({ code: 'ALREADY_EXISTS', message: 'exists' }),
      'ALREADY_EXISTS',
      'exists',
      undefined,
    ],
    ['an error body that is not JSON', 502, '<html>bad gateway</html>', INVALID_RESPONSE, 'HTTP 502 Bad Gateway', { status: 502 }],
    ['an error body without a code', 500, JSON.stringify({ error: 'boom' }), INVALID_RESPONSE, 'HTTP 500', { status: 500 }],
    ['a success body that is not JSON', 200, 'not json', INVALID_RESPONSE, 'HTTP 200: the body is not JSON', { status: 200 }],
    ['an empty success body', 200, '', INVALID_RESPONSE, 'HTTP 200: the body is not JSON', { status: 200 }],
  ];

  it.each(errorCases)('%s', async (_name, status, body, code, message, details) => {
    mockFetch(status, body, status === 502 ? 'Bad Gateway' : '');
    const error = await rejection(planRegister({ yaml: 'id: x' }));
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
    expect(error.details).toEqual(details);
  });

  it('turns a network failure into TRANSPORT_ERROR', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new TypeError('Failed to fetch');
      }),
    );
    const error = await rejection(planValidate({ yaml: '' }));
    expect(error.code).toBe(TRANSPORT_ERROR);
    expect(error.message).toBe('Failed to fetch');
  });
});

describe('tauri transport', () => {
  it('invokes the one call command with {function, request} instead of fetching', async () => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    const fetchMock = mockFetch(500, '');
    invokeMock.mockResolvedValue({ plan_id: 'p', path: '/w/designs/p.yaml', file_name: 'p.yaml' });
    await expect(planRegister({ yaml: 'id: p', lang: 'ja' })).resolves.toEqual({
      plan_id: 'p',
      path: '/w/designs/p.yaml',
      file_name: 'p.yaml',
    });
    expect(invokeMock).toHaveBeenCalledWith('call', { function: 'plan_register', request: { yaml: 'id: p', lang: 'ja' } });
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('turns a rejected command into an ApiError with the same code', async () => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    invokeMock.mockRejectedValue({ code: 'PATH_DENIED', message: 'outside the workspace' });
    const error = await rejection(planValidate({ yaml: 'x' }));
    expect(error.code).toBe('PATH_DENIED');
    expect(error.message).toBe('outside the workspace');
  });

  it('turns a string rejection (unknown command) into TRANSPORT_ERROR', async () => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    invokeMock.mockRejectedValue('command plan_validate not found');
    const error = await rejection(planValidate({ yaml: 'x' }));
    expect(error.code).toBe(TRANSPORT_ERROR);
    expect(error.message).toBe('command plan_validate not found');
  });
});

describe('parseApiError', () => {
  const cases: [unknown, { code: string; message: string } | null][] = [
    [{ code: 'NOT_FOUND', message: 'no such function' }, { code: 'NOT_FOUND', message: 'no such function' }],
    [{ code: 'INTERNAL' }, { code: 'INTERNAL', message: 'INTERNAL' }],
    [{ code: '', message: 'x' }, null],
    [{ code: 42, message: 'x' }, null],
    [['PLAN_INVALID'], null],
    ['PLAN_INVALID', null],
    [null, null],
  ];
  it.each(cases)('%j', (input, expected) => {
    const error = parseApiError(input);
    if (expected === null) {
      expect(error).toBeNull();
    } else {
      expect(error).not.toBeNull();
      expect({ code: error?.code, message: error?.message }).toEqual(expected);
    }
  });
});
