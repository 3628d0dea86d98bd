// The one place that knows how a Keiri API function is reached.
//
// Inside the desktop shell (Tauri injects `window.__TAURI_INTERNALS__`) a function is a Tauri
// command called with `invoke(name, { request })`; in a browser served by `keiri serve` it is
// `POST /api/<name>` with the request as the JSON body. Both paths resolve to the response DTO
// or reject with an `ApiError` carrying the API's stable `code`, so the rest of the UI never
// knows which transport it runs on and branches on codes, never on message text.

import { invoke } from '@tauri-apps/api/core';
import type { ApiFunction } from './types';

/**
 * Codes the client itself produces, next to the server's (`PLAN_INVALID`, `NOT_FOUND`, …):
 * the server could not be reached, or answered something that is not the API's shape.
 */
export const TRANSPORT_ERROR = 'TRANSPORT_ERROR';
export const INVALID_RESPONSE = 'INVALID_RESPONSE';

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

async function callTauri<Res>(fn: ApiFunction, request: unknown): Promise<Res> {
  try {
    return await invoke<Res>(fn, { request });
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
      headers: { 'content-type': 'application/json' },
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
export function call<Res>(fn: ApiFunction, request: unknown): Promise<Res> {
  return isTauri() ? callTauri<Res>(fn, request) : callHttp<Res>(fn, request);
}
