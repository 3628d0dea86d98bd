import { cleanup, render, screen } from '@testing-library/react';
import { EditorView } from '@codemirror/view';
import { act, createRef } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Finding } from '../../api/types';
import { YamlEditor } from './YamlEditor';
import type { YamlEditorHandle } from './usePlanText';
import { SAMPLE_PLAN } from './samplePlan';

afterEach(cleanup);

function editorAt(findings: Finding[] = [], onCursorNode?: (id: string | null) => void) {
  const ref = createRef<YamlEditorHandle>();
  render(
    <YamlEditor
      ref={ref}
      initialText={SAMPLE_PLAN}
      findings={findings}
      lang="ja"
      label="plan"
      onChange={() => {}}
      onCursorNode={onCursorNode}
    />,
  );
  const handle = ref.current;
  if (handle === null) throw new Error('no handle');
  return handle;
}

const lines = SAMPLE_PLAN.split('\n');
const offsetOfLine = (n: number) => lines.slice(0, n - 1).reduce((sum, l) => sum + l.length + 1, 0);

describe('YamlEditor', () => {
  it('reveals a node by selecting its id line', () => {
    const handle = editorAt();
    let found = false;
    act(() => {
      found = handle.revealNode('save_large');
    });
    expect(found).toBe(true);
    const view = EditorView.findFromDOM(screen.getByTestId('editor-content'));
    const { from, to } = view?.state.selection.main ?? { from: 0, to: 0 };
    expect(view?.state.sliceDoc(from, to)).toBe('- id: save_large');
    let missing = true;
    act(() => {
      missing = handle.revealNode('ghost');
    });
    expect(missing).toBe(false);
  });

  it('reports the node under the cursor when it changes', () => {
    const onCursorNode = vi.fn();
    const handle = editorAt([], onCursorNode);
    const readLine = lines.findIndex((l) => l.includes('block: csv.read')) + 1;
    act(() => handle.setText(SAMPLE_PLAN, offsetOfLine(readLine) + 4));
    expect(onCursorNode).toHaveBeenLastCalledWith('read_invoices');
    const calls = onCursorNode.mock.calls.length;
    act(() => handle.setText(SAMPLE_PLAN, offsetOfLine(readLine + 1) + 2));
    expect(onCursorNode.mock.calls.length).toBe(calls);
    act(() => handle.setText(SAMPLE_PLAN, 0));
    expect(onCursorNode).toHaveBeenLastCalledWith(null);
    act(() => {
      handle.revealNode('large_invoices');
    });
    expect(onCursorNode).toHaveBeenLastCalledWith('large_invoices');
  });

  it('still shows findings as lint diagnostics', () => {
    const finding: Finding = {
      code: 'block.unknown',
      severity: 'error',
      node_id: 'read_invoices',
      path: '/graph/0/block',
      message: 'unknown block',
      hint: null,
      line: 10,
      column: 12,
    };
    editorAt([finding]);
    expect(document.querySelector('.cm-lintRange-error')).not.toBeNull();
  });
});
