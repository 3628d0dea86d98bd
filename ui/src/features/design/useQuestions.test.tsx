// The questions hook against a mocked `keiri serve`: an answer the plan can take is written
// into it (asked first, then answered, in that order); one it cannot take waits for a new
// generation; the open list joins the plan's and the planner's questions.

import { act, cleanup, renderHook, waitFor } from '@testing-library/react';
import { useRef, useState } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Finding, Requirement, RequirementsAnswerRequest, RequirementsAnswerResponse } from '../../api/types';
import { useQuestions } from './useQuestions';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const PLAN = 'apiVersion: keiri/v1\nid: sales\n';

function req(id: string): Requirement {
  return { id, type: 'text', label: id, description: '', required: true, target: { var: id } };
}

const FINDING: Finding = { code: 'output.unused', severity: 'warning', node_id: null, path: '/vars', message: 'unused', hint: null, line: null, column: null };

/** `requirements_answer` as the plan `open` asks it: answered ones are written in as `var: value`. */
function serve(open: Requirement[], status = 200) {
  const calls: RequirementsAnswerRequest[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      expect(url).toBe('/api/requirements_answer');
      const body = JSON.parse(String(init.body)) as RequirementsAnswerRequest;
      calls.push(body);
      if (status !== 200) return new Response(JSON.stringify({ code: 'PLAN_PARSE', message: 'bad yaml' }), { status });
      const given = body.answers ?? {};
      const answered = Object.entries(given).map(([id, value]) => `${id}: ${String(value)}\n`);
      const response: RequirementsAnswerResponse = {
        yaml: body.yaml + answered.join(''),
        valid: true,
        findings: answered.length > 0 ? [FINDING] : [],
        requirements: open.filter((requirement) => !(requirement.id in given)),
      };
      return new Response(JSON.stringify(response), { status: 200 });
    }),
  );
  return calls;
}

/** The hook with the plan's questions held in real state, as App holds them. */
function renderQuestions(planRequirements: Requirement[]) {
  const editor = { current: { setText: vi.fn() } };
  const showFindings = vi.fn();
  const rendered = renderHook(() => {
    const [plan, setPlan] = useState(planRequirements);
    const textRef = useRef(PLAN);
    return useQuestions({ lang: 'ja', textRef, editor, planRequirements: plan, setPlanRequirements: setPlan, showFindings });
  });
  return { ...rendered, editor, showFindings };
}

describe('useQuestions', () => {
  it('writes an answer the plan can take into the plan, asking the plan first', async () => {
    const calls = serve([req('month'), req('sheet')]);
    const { result, editor, showFindings } = renderQuestions([req('month'), req('sheet')]);

    await act(() => result.current.answer(req('month'), '2024-04'));

    expect(calls.map((call) => call.answers)).toEqual([{}, { month: '2024-04' }]);
    expect(calls.every((call) => call.yaml === PLAN && call.lang === 'ja')).toBe(true);
    expect(editor.current.setText).toHaveBeenCalledWith(`${PLAN}month: 2024-04\n`, 0);
    expect(showFindings).toHaveBeenCalledWith([FINDING]);
    expect(result.current.open.map((requirement) => requirement.id)).toEqual(['sheet']);
    expect(result.current.answers).toEqual({ month: '2024-04' });
    expect(result.current.waiting).toBe(0);
    expect(result.current.busy).toBe(false);
  });

  it('keeps an answer the plan has no place for until a new generation, and stops asking it', async () => {
    const calls = serve([req('month')]);
    const { result, editor } = renderQuestions([req('month')]);
    act(() => result.current.restart([req('month'), req('template')], {}));
    expect(result.current.open.map((requirement) => requirement.id)).toEqual(['month', 'template']);

    await act(() => result.current.answer(req('template'), 'a.xlsx'));

    // Only the plan was asked; nothing was written into it.
    expect(calls.map((call) => call.answers)).toEqual([{}]);
    expect(editor.current.setText).not.toHaveBeenCalled();
    expect(result.current.waiting).toBe(1);
    expect(result.current.answers).toEqual({ template: 'a.xlsx' });
    expect(result.current.open.map((requirement) => requirement.id)).toEqual(['month']);
    // Answering it again does not count it twice.
    await act(() => result.current.answer(req('template'), 'b.xlsx'));
    expect(result.current.waiting).toBe(1);

    // The next generation used the answers: nothing waits any more.
    act(() => result.current.restart([], { template: 'b.xlsx' }));
    expect(result.current.waiting).toBe(0);
  });

  it('lists the plan’s questions first, then the planner’s it does not already ask', () => {
    serve([]);
    const { result } = renderQuestions([req('a'), req('b')]);
    act(() => result.current.restart([req('b'), req('c')], {}));
    expect(result.current.open.map((requirement) => requirement.id)).toEqual(['a', 'b', 'c']);
    expect(result.current.known.map((requirement) => requirement.id)).toEqual(['a', 'b', 'b', 'c']);
  });

  it('shows the API error of a failed answer and is no longer busy', async () => {
    serve([req('month')], 400);
    const { result, editor } = renderQuestions([req('month')]);
    await act(() => result.current.answer(req('month'), 'x'));
    expect(result.current.error).toEqual({ code: 'PLAN_PARSE', message: 'bad yaml' });
    expect(result.current.busy).toBe(false);
    expect(editor.current.setText).not.toHaveBeenCalled();
  });

  it('refuses a file answer over the upload limit without sending it', async () => {
    const calls = serve([]);
    const { result } = renderQuestions([]);
    const big = new File(['x'], 'big.xlsx');
    Object.defineProperty(big, 'size', { value: 50 * 1024 * 1024 + 1 });
    let path: string | null = 'unset';
    await act(async () => {
      path = await result.current.chooseFile(big);
    });
    expect(path).toBeNull();
    expect(calls).toEqual([]);
    await waitFor(() => expect(result.current.error?.code).toBe('FILE_TOO_LARGE'));
  });
});
