// The registration hook against a mocked `keiri serve`: the name step proposes the plan's id,
// a new name becomes the plan's id before it is sent with the stamp the step showed, and a
// refusal's findings are shown only while the text is the one that was sent.

import { act, cleanup, renderHook, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Finding, PlanRegisterRequest } from '../../api/types';
import { useRegistration } from './useRegistration';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const PLAN = 'apiVersion: keiri/v1\nid: sales\n';
const FINDING: Finding = { code: 'block.unknown', severity: 'error', node_id: 'read', path: '/graph/0', message: 'no such block', hint: null, line: 3, column: 1 };

type Answer = { status: number; body: unknown };

/** `plan_register` answering `answer`; `during` runs while the request is on its way. */
function serve(answer: Answer, during: () => void = () => undefined) {
  const calls: PlanRegisterRequest[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init: RequestInit) => {
      expect(url).toBe('/api/plan_register');
      calls.push(JSON.parse(String(init.body)) as PlanRegisterRequest);
      during();
      return new Response(JSON.stringify(answer.body), { status: answer.status });
    }),
  );
  return calls;
}

const SAVED: Answer = { status: 200, body: { plan_id: 'sales', path: '/ws/designs/sales_202405011230.yaml', file_name: 'sales_202405011230.yaml' } };
const REFUSED: Answer = { status: 422, body: { code: 'PLAN_INVALID', message: 'invalid', details: { findings: [FINDING] } } };

/**
 * The hook over plan text `text`; the editor's setText stands for an edit: like the editor's
 * onChange (`usePlanText`), it moves the text and bumps the edit sequence at once.
 */
function renderRegistration(text: string, instruction = '') {
  const textRef = { current: text };
  const sequence = { current: 0 };
  const editor = {
    current: {
      setText: vi.fn((yaml: string) => {
        textRef.current = yaml;
        sequence.current += 1;
      }),
    },
  };
  const onRefused = vi.fn();
  const edit = () => {
    sequence.current += 1;
  };
  const rendered = renderHook(() => useRegistration({ lang: 'ja', instruction, textRef, sequence, editor, onRefused }));
  return { ...rendered, editor, onRefused, edit };
}

describe('useRegistration', () => {
  it('asks for a name first, proposing the plan’s id, and saves on the second press', async () => {
    const calls = serve(SAVED);
    const { result, editor } = renderRegistration(PLAN);

    act(() => result.current.open());
    expect(result.current.step?.name).toBe('sales');
    expect(result.current.step?.stamp).toMatch(/^\d{12}$/);
    expect(calls).toEqual([]);

    const stamp = result.current.step?.stamp;
    // Pressed again while asking, it confirms (not awaited: the shortcut and the button do the same).
    act(() => result.current.open());
    await waitFor(() => expect(result.current.notice).not.toBeNull());
    expect(calls).toEqual([{ yaml: PLAN, lang: 'ja', stamp }]);
    // The name was the plan's id already: the text is sent as it is.
    expect(editor.current.setText).not.toHaveBeenCalled();
    expect(result.current.step).toBeNull();
    expect(result.current.registering).toBe(false);
    expect(result.current.notice).toEqual({ kind: 'saved', fileName: 'sales_202405011230.yaml', path: '/ws/designs/sales_202405011230.yaml' });
  });

  it('proposes a name from the instruction when the plan has the planner’s default id', () => {
    serve(SAVED);
    const { result } = renderRegistration('id: generated_plan\n', '売上を集計する。');
    act(() => result.current.open());
    expect(result.current.step?.name).toBe('売上を集計する');
  });

  it('does not open for an empty plan', () => {
    serve(SAVED);
    const { result } = renderRegistration('  \n');
    act(() => result.current.open());
    expect(result.current.step).toBeNull();
  });

  it('makes a new name the plan’s id, in the editor and in what is sent', async () => {
    const calls = serve(SAVED);
    const { result, editor } = renderRegistration(PLAN);
    act(() => result.current.open());
    act(() => result.current.rename('月次 売上'));
    expect(result.current.step?.name).toBe('月次 売上');

    await act(() => result.current.confirm('月次 売上'));
    const renamed = 'apiVersion: keiri/v1\nid: 月次_売上\n';
    expect(editor.current.setText).toHaveBeenCalledWith(renamed);
    expect(calls.map((call) => call.yaml)).toEqual([renamed]);
  });

  it('shows a refusal’s findings when the text is still the one sent', async () => {
    serve(REFUSED);
    const { result, onRefused } = renderRegistration(PLAN);
    act(() => result.current.open());
    await act(() => result.current.confirm('sales'));
    expect(result.current.notice).toEqual({ kind: 'error', code: 'PLAN_INVALID', message: 'invalid' });
    expect(result.current.step).toBeNull();
    expect(onRefused).toHaveBeenCalledWith([FINDING]);
  });

  it('drops a refusal’s findings when the text was edited while it was on its way', async () => {
    let edit = () => {};
    serve(REFUSED, () => edit());
    const rendered = renderRegistration(PLAN);
    edit = rendered.edit;
    act(() => rendered.result.current.open());
    await act(() => rendered.result.current.confirm('sales'));
    expect(rendered.result.current.notice?.kind).toBe('error');
    expect(rendered.onRefused).not.toHaveBeenCalled();
  });

  it('clears the notice, and cancelling closes the step without saving', async () => {
    const calls = serve(SAVED);
    const { result } = renderRegistration(PLAN);
    act(() => result.current.open());
    act(() => result.current.open());
    await waitFor(() => expect(result.current.notice?.kind).toBe('saved'));
    act(() => result.current.clearNotice());
    expect(result.current.notice).toBeNull();

    act(() => result.current.open());
    act(() => result.current.cancel());
    expect(result.current.step).toBeNull();
    expect(calls).toHaveLength(1);
  });
});
