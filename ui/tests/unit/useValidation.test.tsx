// The validation hook against a mocked `keiri serve`: an invalid plan is asked for its
// questions after its findings arrive, a valid one is not, and a response for a text that was
// edited meanwhile is dropped.

import { act, cleanup, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Finding, PlanValidateResponse, Requirement } from '../../src/api/types';
import { useValidation } from '../../src/hooks/useValidation';

beforeEach(() => {
  // The debounced validation never fires on its own: each test validates when it says so.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

const PLAN = 'apiVersion: keiri/v1\nid: sales\n';
const ERROR: Finding = { code: 'unknown_var', severity: 'error', node_id: 'read', path: '/graph/0', message: 'no var', hint: null, line: 3, column: 1 };
const MONTH: Requirement = { id: 'month', type: 'text', label: '月', description: '', required: true, target: { var: 'month' } };

/** `plan_validate` answering `validated`, `requirements_answer` asking for the month. */
function serve(validated: PlanValidateResponse, during: () => void = () => undefined) {
  const calls: string[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      calls.push(url);
      during();
      const body = url === '/api/plan_validate' ? validated : { yaml: PLAN, valid: false, findings: [], requirements: [MONTH] };
      return new Response(JSON.stringify(body), { status: 200 });
    }),
  );
  return calls;
}

describe('useValidation', () => {
  it('shows an invalid plan’s findings and counts, then the questions it raises', async () => {
    const calls = serve({ valid: false, error_count: 1, warning_count: 0, findings: [ERROR] });
    const { result } = renderHook(() => useValidation(PLAN, 'ja'));
    await act(() => result.current.validate(PLAN, 'ja'));
    expect(calls).toEqual(['/api/plan_validate', '/api/requirements_answer']);
    expect(result.current.findingsState).toEqual({ kind: 'done', findings: [ERROR] });
    expect(result.current.errorCount).toBe(1);
    expect(result.current.status.tone).toBe('error');
    expect(result.current.planRequirements).toEqual([MONTH]);
  });

  it('asks a valid plan no questions', async () => {
    const calls = serve({ valid: true, error_count: 0, warning_count: 0, findings: [] });
    const { result } = renderHook(() => useValidation(PLAN, 'ja'));
    await act(() => result.current.validate(PLAN, 'ja'));
    expect(calls).toEqual(['/api/plan_validate']);
    expect(result.current.status.tone).toBe('ok');
    expect(result.current.planRequirements).toEqual([]);
  });

  it('drops the findings of a text that was edited while they were on their way', async () => {
    let invalidate = () => {};
    serve({ valid: false, error_count: 1, warning_count: 0, findings: [ERROR] }, () => invalidate());
    const { result } = renderHook(() => useValidation(PLAN, 'ja'));
    invalidate = result.current.invalidate;
    const before = result.current.revision();
    await act(() => result.current.validate(PLAN, 'ja'));
    expect(result.current.revision()).toBeGreaterThan(before + 1);
    expect(result.current.findingsState).toEqual({ kind: 'pending' });
    expect(result.current.errorCount).toBe(0);
  });

  it('does not send an empty plan', async () => {
    const calls = serve({ valid: true, error_count: 0, warning_count: 0, findings: [] });
    const { result } = renderHook(() => useValidation('', 'ja'));
    await act(() => result.current.validate('  ', 'ja'));
    expect(calls).toEqual([]);
    expect(result.current.findingsState).toEqual({ kind: 'empty-doc' });
    expect(result.current.status.tone).toBe('idle');
  });
});
