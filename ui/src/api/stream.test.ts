import { afterEach, describe, expect, it, vi } from 'vitest';

// Streamed calls: NDJSON over fetch in the browser, a Tauri channel in the desktop shell.
const invokeMock = vi.hoisted(() => vi.fn());
const channels = vi.hoisted(() => [] as { onmessage: (frame: unknown) => void }[]);
vi.mock('@tauri-apps/api/core', () => ({
  invoke: invokeMock,
  Channel: class {
    onmessage: (frame: unknown) => void = () => undefined;
    constructor() {
      channels.push(this);
    }
  },
}));

import { ApiError, CANCELLED, INVALID_RESPONSE, TRANSPORT_ERROR, callStream } from './transport';

/** A fetch whose body arrives in the given chunks (split anywhere, even inside a line). */
function mockStream(chunks: string[], status = 200) {
  const fetchMock = vi.fn(async (_url: string, init: RequestInit) => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        controller.close();
      },
    });
    init.signal?.throwIfAborted();
    return new Response(body, { status, headers: { 'content-type': 'application/x-ndjson' } });
  });
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
  channels.length = 0;
  delete (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__;
});

describe('streamed calls over HTTP', () => {
  it('posts to /api/<fn>/stream, passes each event in order and resolves with the result', async () => {
    const fetchMock = mockStream([
      '{"event":{"stage":"retrieving"}}\n{"eve',
      'nt":{"stage":"composing"}}\n',
      '{"result":{"yaml":"id: p"}}\n',
    ]);
    const events: unknown[] = [];
    const result = await callStream('plan_generate', { instruction: 'x' }, (e) => events.push(e));
    expect(result).toEqual({ yaml: 'id: p' });
    expect(events).toEqual([{ stage: 'retrieving' }, { stage: 'composing' }]);
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/plan_generate/stream');
    expect(JSON.parse(String(init.body))).toEqual({ instruction: 'x' });
  });

  it('rejects with the code of an error frame', async () => {
    mockStream(['{"event":{"stage":"skeleton"}}\n', '{"error":{"code":"LLM_FAILED","message":"timeout"}}\n']);
    const error = await rejection(callStream('plan_generate', { instruction: 'x' }, () => undefined));
    expect(error.code).toBe('LLM_FAILED');
    expect(error.message).toBe('timeout');
  });

  it.each([
    ['a stream that ends without a result', ['{"event":{}}\n']],
    ['a line that is not JSON', ['nope\n']],
    ['a frame of an unknown kind', ['{"other":1}\n']],
  ])('%s is INVALID_RESPONSE', async (_name, chunks) => {
    mockStream(chunks);
    expect((await rejection(callStream('plan_generate', { instruction: 'x' }, () => undefined))).code).toBe(INVALID_RESPONSE);
  });

  it('an error status before streaming keeps the API error', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('{"code":"NOT_FOUND","message":"no"}', { status: 404 })));
    expect((await rejection(callStream('plan_generate', { instruction: 'x' }, () => undefined))).code).toBe('NOT_FOUND');
  });

  it('aborting is CANCELLED, and a network failure TRANSPORT_ERROR', async () => {
    mockStream(['{"result":1}\n']);
    const controller = new AbortController();
    controller.abort();
    expect((await rejection(callStream('plan_generate', { instruction: 'x' }, () => undefined, controller.signal))).code).toBe(CANCELLED);
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => {
        throw new TypeError('Failed to fetch');
      }),
    );
    expect((await rejection(callStream('plan_generate', { instruction: 'x' }, () => undefined))).code).toBe(TRANSPORT_ERROR);
  });
});

describe('streamed calls in the desktop shell', () => {
  it('invokes call_stream with a channel and settles on its last frame', async () => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    invokeMock.mockImplementation(async (command: string) => {
      if (command === 'call_stream') {
        const channel = channels[0]!;
        channel.onmessage({ event: { stage: 'wiring' } });
        channel.onmessage({ result: { ok: true } });
      }
      return null;
    });
    const events: unknown[] = [];
    await expect(callStream('plan_generate', { instruction: 'x' }, (e) => events.push(e))).resolves.toEqual({ ok: true });
    expect(events).toEqual([{ stage: 'wiring' }]);
    const [command, args] = invokeMock.mock.calls[0] as [string, Record<string, unknown>];
    expect(command).toBe('call_stream');
    expect(args.function).toBe('plan_generate');
    expect(args.request).toEqual({ instruction: 'x' });
    expect(typeof args.streamId).toBe('string');
  });

  it('aborting rejects with CANCELLED and asks the shell to cancel that stream', async () => {
    (window as unknown as Record<string, unknown>).__TAURI_INTERNALS__ = {};
    const controller = new AbortController();
    invokeMock.mockImplementation(async (command: string) => {
      if (command === 'call_stream') controller.abort();
      return null;
    });
    const error = await rejection(callStream('plan_generate', { instruction: 'x' }, () => undefined, controller.signal));
    expect(error.code).toBe(CANCELLED);
    const cancel = invokeMock.mock.calls.find(([command]) => command === 'cancel_stream') as [string, { streamId: string }];
    const start = invokeMock.mock.calls[0] as [string, { streamId: string }];
    expect(cancel[1].streamId).toBe(start[1].streamId);
  });
});
