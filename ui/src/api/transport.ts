// The one place that knows how a Keiri API function is reached.
//
// Inside the desktop shell (Tauri injects `window.__TAURI_INTERNALS__`) a function is a Tauri
// command: the one `call` command, `invoke('call', { function, request })`; in a browser served by `keiri serve` it is
// `POST /api/<name>` with the request as the JSON body. Both paths resolve to the response DTO
// or reject with an `ApiError` carrying the API's stable `code`, so the rest of the UI never
// knows which transport it runs on and branches on codes, never on message text.

import { Channel, invoke } from '@tauri-apps/api/core';
import type { ApiFunction, StreamingFunction } from './functions';
import type { ApiFunctions } from './generated';

/** What the API function `F` takes, as keiri-api's schema says (generated.ts). */
export type ApiRequest<F extends ApiFunction> = ApiFunctions[F]['request'];
/** What the API function `F` answers, as keiri-api's schema says (generated.ts). */
export type ApiResponse<F extends ApiFunction> = ApiFunctions[F]['response'];

/**
 * Codes the client itself produces, next to the server's (`PLAN_INVALID`, `NOT_FOUND`, …):
 * the server could not be reached, or answered something that is not the API's shape.
 */
export const TRANSPORT_ERROR = 'TRANSPORT_ERROR';
export const INVALID_RESPONSE = 'INVALID_RESPONSE';
/** The caller aborted a streamed call (the server's code for the same thing). */
export const CANCELLED = 'CANCELLED';

/** An error crossing the API boundary: `{code, message, details?}` (docs/api.md). */
export class ApiError extends Error {
  readonly code: string;
  readonly details: unknown;

  constructor(code: string, message: string, details?: unknown) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.details = details;
  }
}

/** `err` as an `ApiError`: one already, or an `INTERNAL` error carrying its text. */
export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError('INTERNAL', String(err));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Reads an API error out of whatever a transport rejected with or returned as an error body.
 * Returns null when the value does not have the `{code: string, message: string}` shape, so
 * the caller can say which transport-level failure it was instead.
 */
export function parseApiError(value: unknown): ApiError | null {
  if (!isRecord(value)) return null;
  const { code, message, details } = value;
  if (typeof code !== 'string' || code === '') return null;
  return new ApiError(code, typeof message === 'string' ? message : code, details);
}

/** True inside the Tauri webview, where commands replace HTTP. */
export function isTauri(): boolean {
  return typeof window !== 'undefined' && '__TAURI_INTERNALS__' in window;
}

/** Where the page keeps `keiri serve`'s per-launch token for the life of the tab. */
export const TOKEN_STORAGE_KEY = 'keiri.serverToken';

let serverToken: string | null | undefined;

/**
 * The per-launch token `keiri serve` printed in the URL it asked to open (`?token=…`), which
 * every API call must carry as `X-Keiri-Token`. Read from the address once, kept in
 * sessionStorage (so a reload of the tab keeps working) and removed from the address bar, so it
 * does not end up in bookmarks, history or a screenshot. Null when the page was opened
 * without one (the server then refuses API calls with `TOKEN_INVALID`).
 */
export function browserToken(): string | null {
  if (serverToken !== undefined) return serverToken;
  serverToken = null;
  if (typeof window === 'undefined') return serverToken;
  try {
    const url = new URL(window.location.href);
    const fromUrl = url.searchParams.get('token');
    if (fromUrl) {
      serverToken = fromUrl;
      window.sessionStorage.setItem(TOKEN_STORAGE_KEY, fromUrl);
      url.searchParams.delete('token');
      window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
    } else {
      serverToken = window.sessionStorage.getItem(TOKEN_STORAGE_KEY);
    }
  } catch {
    // No sessionStorage (privacy mode) or a read-only history: keep what the URL gave.
  }
  return serverToken;
}

/** Forgets the token read so far (tests change the page URL between cases). */
export function resetBrowserToken(): void {
  serverToken = undefined;
}

function httpHeaders(): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = browserToken();
  if (token) headers['x-keiri-token'] = token;
  return headers;
}

// Take the token off the address bar as soon as the page loads, not at the first call.
if (typeof window !== 'undefined' && !isTauri()) browserToken();

async function callTauri<Res>(fn: ApiFunction, request: unknown): Promise<Res> {
  try {
    return await invoke<Res>('call', { function: fn, request });
  } catch (err) {
    // A command's `Err(ApiError)` arrives as the serialised object; anything else (a
    // missing command, a deserialisation failure of the arguments) arrives as a string.
    throw parseApiError(err) ?? new ApiError(TRANSPORT_ERROR, String(err));
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function callHttp<Res>(fn: ApiFunction, request: unknown): Promise<Res> {
  let response: Response;
  try {
    response = await fetch(`/api/${fn}`, {
      method: 'POST',
      headers: httpHeaders(),
      body: JSON.stringify(request ?? {}),
    });
  } catch (err) {
    throw new ApiError(TRANSPORT_ERROR, err instanceof Error ? err.message : String(err));
  }
  const body = await readJson(response);
  if (!response.ok) {
    throw (
      parseApiError(body) ??
      new ApiError(INVALID_RESPONSE, `HTTP ${response.status} ${response.statusText}`.trim(), {
        status: response.status,
      })
    );
  }
  if (body === undefined) {
    throw new ApiError(INVALID_RESPONSE, `HTTP ${response.status}: the body is not JSON`, {
      status: response.status,
    });
  }
  return body as Res;
}

/** Calls the API function `fn` with `request` over whichever transport this page runs on. */
export function call<F extends ApiFunction>(fn: F, request: ApiRequest<F>): Promise<ApiResponse<F>> {
  return isTauri() ? callTauri<ApiResponse<F>>(fn, request) : callHttp<ApiResponse<F>>(fn, request);
}

/**
 * One message of a streamed call, on both transports (docs/api.md): any number of events,
 * then exactly one result or error.
 */
type Frame = { event: unknown } | { result: unknown } | { error: unknown };

/** Receives a streamed call's frames in order and settles once the last one arrives. */
class FrameSink<Res> {
  private settled = false;
  readonly done: Promise<Res>;
  private resolve!: (value: Res) => void;
  private reject!: (error: ApiError) => void;

  constructor(private readonly onEvent: (event: unknown) => void) {
    this.done = new Promise<Res>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // An error frame can settle the promise before the caller awaits it (the reader loop is
    // still draining the body); mark it handled so the page reports no unhandled rejection.
    // The caller still receives the rejection through `done`.
    this.done.catch(() => undefined);
  }

  push(frame: unknown): void {
    if (this.settled) return;
    if (!isRecord(frame)) {
      this.fail(new ApiError(INVALID_RESPONSE, 'a streamed frame is not an object'));
    } else if ('event' in frame) {
      this.onEvent(frame.event);
    } else if ('result' in frame) {
      this.settled = true;
      this.resolve(frame.result as Res);
    } else if ('error' in frame) {
      this.fail(parseApiError(frame.error) ?? new ApiError(INVALID_RESPONSE, 'a streamed error has no code'));
    } else {
      this.fail(new ApiError(INVALID_RESPONSE, 'a streamed frame has no event, result or error'));
    }
  }

  fail(error: ApiError): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(error);
  }

  get isSettled(): boolean {
    return this.settled;
  }
}

function cancelledError(): ApiError {
  return new ApiError(CANCELLED, 'cancelled');
}

let streamSequence = 0;

async function callStreamTauri<Res>(
  fn: ApiFunction,
  request: unknown,
  onEvent: (event: unknown) => void,
  signal?: AbortSignal,
): Promise<Res> {
  const sink = new FrameSink<Res>(onEvent);
  streamSequence += 1;
  const streamId = `${Date.now().toString(36)}-${streamSequence}`;
  const channel = new Channel<Frame>();
  channel.onmessage = (frame) => sink.push(frame);
  const abort = () => {
    sink.fail(cancelledError());
    // The shell cancels the call; its last frame then finds the sink settled.
    void invoke('cancel_stream', { streamId }).catch(() => undefined);
  };
  if (signal?.aborted) throw cancelledError();
  signal?.addEventListener('abort', abort, { once: true });
  try {
    await invoke('call_stream', { function: fn, request, streamId, onEvent: channel });
  } catch (err) {
    sink.fail(parseApiError(err) ?? new ApiError(TRANSPORT_ERROR, String(err)));
  } finally {
    signal?.removeEventListener('abort', abort);
  }
  return sink.done;
}

async function callStreamHttp<Res>(
  fn: ApiFunction,
  request: unknown,
  onEvent: (event: unknown) => void,
  signal?: AbortSignal,
): Promise<Res> {
  const sink = new FrameSink<Res>(onEvent);
  let response: Response;
  try {
    response = await fetch(`/api/${fn}/stream`, {
      method: 'POST',
      headers: httpHeaders(),
      body: JSON.stringify(request ?? {}),
      signal,
    });
  } catch (err) {
    if (signal?.aborted) throw cancelledError();
    throw new ApiError(TRANSPORT_ERROR, err instanceof Error ? err.message : String(err));
  }
  if (!response.ok || response.body === null) {
    const body = await readJson(response);
    throw (
      parseApiError(body) ??
      new ApiError(INVALID_RESPONSE, `HTTP ${response.status} ${response.statusText}`.trim(), {
        status: response.status,
      })
    );
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const take = (line: string) => {
    if (line.trim() === '') return;
    let frame: unknown;
    try {
      frame = JSON.parse(line) as unknown;
    } catch {
      sink.fail(new ApiError(INVALID_RESPONSE, 'a streamed line is not JSON'));
      return;
    }
    sink.push(frame);
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffered += decoder.decode(value, { stream: true });
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        take(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    }
    take(buffered + decoder.decode());
  } catch (err) {
    sink.fail(
      signal?.aborted ? cancelledError() : new ApiError(TRANSPORT_ERROR, err instanceof Error ? err.message : String(err)),
    );
  }
  if (!sink.isSettled) {
    sink.fail(signal?.aborted ? cancelledError() : new ApiError(INVALID_RESPONSE, 'the stream ended without a result'));
  }
  return sink.done;
}

/**
 * Calls the streaming API function `fn` (`plan_generate`, `chat_send`): `onEvent` gets each
 * event as it happens, the promise settles with the response or rejects with an `ApiError`.
 * Aborting `signal` cancels the call on the server too and rejects with code `CANCELLED`.
 * The schema does not describe the events, so they arrive untyped; each wrapper names theirs.
 */
export function callStream<F extends StreamingFunction>(
  fn: F,
  request: ApiRequest<F>,
  onEvent: (event: unknown) => void,
  signal?: AbortSignal,
): Promise<ApiResponse<F>> {
  return isTauri()
    ? callStreamTauri<ApiResponse<F>>(fn, request, onEvent, signal)
    : callStreamHttp<ApiResponse<F>>(fn, request, onEvent, signal);
}
