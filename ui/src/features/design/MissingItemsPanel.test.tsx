import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Finding, Requirement } from '../../api/types';
import { MissingItemsPanel } from './MissingItemsPanel';
import { node, planGraph } from './planGraphs';

afterEach(cleanup);

// The server's graph of a plan whose `read` node reads `${vars.src}`, which vars lacks, and
// whose `ok` node asks the person to confirm.
const GRAPH = planGraph(
  [node('/graph/0', 'read', 'csv.read'), node('/graph/1', 'ok', 'ui.confirmation')],
  [],
  [{ name: 'src', defined: false, node_ids: ['read'] }],
);

const REQUIREMENTS: Requirement[] = [
  { id: 'src', type: 'file', label: '請求書CSV', label_en: 'Invoice CSV', description: '', required: true, target: { var: 'src', node_id: 'read', input: 'path' } },
  { id: 'month', type: 'text', label: '対象月', label_en: 'Month', description: '', required: false, hint: 'YYYY-MM', target: {} },
];

const FINDINGS: Finding[] = [
  { code: 'block.unknown', severity: 'error', node_id: 'bad', path: '/graph/2/block', message: 'ブロック csv.reed はカタログにありません', hint: '候補: csv.read', line: 9, column: 12 },
];

function setup(lang: 'ja' | 'en' = 'ja') {
  const handlers = { onAsk: vi.fn(), onOpenNode: vi.fn(), onPinBlock: vi.fn() };
  render(<MissingItemsPanel lang={lang} graph={GRAPH} findings={FINDINGS} requirements={REQUIREMENTS} {...handlers} />);
  return handlers;
}

describe('MissingItemsPanel', () => {
  it('lists unresolved vars, questions, person steps and findings', () => {
    setup();
    const items = screen.getAllByTestId('missing-item');
    expect(items.map((i) => i.dataset.kind)).toEqual(['var', 'question', 'ui-step', 'finding']);
    expect(items[0]?.textContent).toContain('変数 src が vars にありません');
    expect(items[1]?.textContent).toContain('対象月');
    expect(items[1]?.textContent).toContain('YYYY-MM');
    expect(items[2]?.textContent).toContain('ok');
    expect(items[3]?.dataset.code).toBe('block.unknown');
    expect(screen.getByTestId('missing-count').textContent).toBe('4');
  });

  it('runs the fix actions', () => {
    const handlers = setup('en');
    const [variable, question, step, finding] = screen.getAllByTestId('missing-item') as HTMLElement[];
    fireEvent.click(within(variable as HTMLElement).getByTestId('missing-ask'));
    expect(handlers.onAsk).toHaveBeenCalledWith('src');
    fireEvent.click(within(variable as HTMLElement).getByTestId('missing-open'));
    expect(handlers.onOpenNode).toHaveBeenCalledWith('read');
    fireEvent.click(within(question as HTMLElement).getByTestId('missing-ask'));
    expect(handlers.onAsk).toHaveBeenLastCalledWith('month');
    fireEvent.click(within(step as HTMLElement).getByTestId('missing-pin'));
    expect(handlers.onPinBlock).toHaveBeenCalledWith('ui.confirmation');
    const pin = within(finding as HTMLElement).getByTestId('missing-pin');
    expect(pin.textContent).toBe('Pin csv.read');
    fireEvent.click(pin);
    expect(handlers.onPinBlock).toHaveBeenLastCalledWith('csv.read');
    fireEvent.click(within(finding as HTMLElement).getByTestId('missing-open'));
    expect(handlers.onOpenNode).toHaveBeenLastCalledWith('bad');
  });

  it('says when nothing is missing', () => {
    render(
      <MissingItemsPanel
        lang="ja"
        graph={planGraph([node('/graph/0', 'a', 'csv.read')])}
        findings={[]}
        requirements={[]}
        onAsk={() => {}}
        onOpenNode={() => {}}
        onPinBlock={() => {}}
      />,
    );
    expect(screen.getByTestId('missing-empty').textContent).toContain('不足している項目はありません');
  });
});
