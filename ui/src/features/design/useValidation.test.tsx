// The validation hook against a mocked `keiri serve`, wired to the plan draft as App wires it
// (the editor's text and edit sequence from `usePlanText`): an invalid plan is asked for its
// questions after its findings arrive, a valid one is not, a response for a text that was
// edited meanwhile is dropped, and a validation for a text the editor no longer holds is not
// sent at all.

import { act, cleanup, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Finding, PlanValidateResponse, Requirement } from '../../api/types';
import { usePlanText } from './usePlanText';
import { VALIDATE_DEBOUNCE_MS, useValidation } from './useValidation';

beforeEach(() => {
  // The debounced validation never fires on its own: each test validates, or moves the clock,
  // when it says so.
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.unstubAllGlobals();
  // usePlanText keeps the draft in storage; the next test starts from an empty editor.
  window.localStorage.clear();
});

const PLAN = 'apiVersion: keiri/v1\nid: sales\n';
const ANSWERED = 'apiVersion: keiri/v1\nid: sales\nvars:\n  month: 2024-04\n';
const ERROR: Finding = { code: 'ref.undefined_var', severity: 'error', node_id: 'read', path: '/graph/0', message: 'no var', hint: null, line: 3, column: 1 };
const MONTH: Requirement = { id: 'month', type: 'text', label: '月', description: '', required: true, target: { var: 'month' } };
const INVALID: PlanValidateResponse = { valid: false, error_count: 1, warning_count: 0, findings: [ERROR], graph: null };
const VALID: PlanValidateResponse = { valid: true, error_count: 0, warning_count: 0, findings: [], graph: null };

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

/** The draft and its validation as App holds them, with the editor holding `text`. */
function renderValidation(text: string) {
  const rendered = renderHook(() => {
    const plan = usePlanText();
    const validation = useValidation({ text: plan.text, lang: 'ja', textRef: plan.textRef, sequence: plan.sequence });
    return { plan, validation };
  });
  act(() => rendered.result.current.plan.change(text));
  return rendered;
}

describe('useValidation', () => {
  it('shows an invalid plan’s findings, counts and graph text, then the questions it raises', async () => {
    const calls = serve(INVALID);
    const { result } = renderValidation(PLAN);
    await act(() => result.current.validation.validate(PLAN, 'ja'));
    expect(calls).toEqual(['/api/plan_validate', '/api/requirements_answer']);
    const validation = result.current.validation;
    expect(validation.findingsState).toEqual({ kind: 'done', findings: [ERROR] });
    expect(validation.errorCount).toBe(1);
    expect(validation.status.tone).toBe('error');
    expect(validation.summary).toEqual(INVALID);
    expect(validation.summaryText).toBe(PLAN);
    expect(validation.planRequirements).toEqual([MONTH]);
  });

  it('asks a valid plan no questions', async () => {
    const calls = serve(VALID);
    const { result } = renderValidation(PLAN);
    await act(() => result.current.validation.validate(PLAN, 'ja'));
    expect(calls).toEqual(['/api/plan_validate']);
    expect(result.current.validation.status.tone).toBe('ok');
    expect(result.current.validation.planRequirements).toEqual([]);
  });

  it('drops the findings of a text that was edited while they were on their way', async () => {
    let edit = () => {};
    const calls = serve(INVALID, () => edit());
    const { result } = renderValidation(PLAN);
    edit = () => result.current.plan.change(ANSWERED);
    await act(() => result.current.validation.validate(PLAN, 'ja'));
    // Sent, but its answer describes a text the editor no longer holds.
    expect(calls).toEqual(['/api/plan_validate']);
    expect(result.current.validation.findingsState).toEqual({ kind: 'pending' });
    expect(result.current.validation.errorCount).toBe(0);
    expect(result.current.validation.summaryText).toBeNull();
  });

  it('sends no validation for a text the editor no longer holds, and changes nothing', async () => {
    // The race of the sample-run journey: the plan's questions are shown, an answer puts the
    // answered plan in the editor, and the debounce timer set for the older text fires before
    // React commits the render that would clear it.
    const calls = serve(INVALID);
    const { result } = renderValidation(PLAN);
    await act(() => result.current.validation.validate(PLAN, 'ja'));
    expect(result.current.validation.planRequirements).toEqual([MONTH]);
    calls.length = 0;

    await act(async () => {
      result.current.plan.change(ANSWERED);
      result.current.validation.setPlanRequirements([]);
      result.current.validation.showFindings([]);
      // Still inside the same batch: the timer set for PLAN has not been cleared yet.
      vi.advanceTimersByTime(VALIDATE_DEBOUNCE_MS);
      // Let a request, had one been sent, answer.
      await Promise.resolve();
    });
    await act(async () => {
      for (let i = 0; i < 10; i += 1) await Promise.resolve();
    });

    expect(calls).toEqual([]);
    const validation = result.current.validation;
    expect(validation.planRequirements).toEqual([]);
    expect(validation.findingsState).toEqual({ kind: 'done', findings: [] });
    expect(validation.status.tone).not.toBe('busy');
    expect(validation.summaryText).toBe(PLAN);
    // The answered text's own validation is still to come, once its timer fires.
    await act(async () => {
      vi.advanceTimersByTime(VALIDATE_DEBOUNCE_MS);
      for (let i = 0; i < 10; i += 1) await Promise.resolve();
    });
    expect(calls[0]).toBe('/api/plan_validate');
  });

  it('does not send an empty plan', async () => {
    const calls = serve(VALID);
    const { result } = renderValidation('  ');
    await act(() => result.current.validation.validate('  ', 'ja'));
    expect(calls).toEqual([]);
    expect(result.current.validation.findingsState).toEqual({ kind: 'empty-doc' });
    expect(result.current.validation.status.tone).toBe('idle');
  });
});
