import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ShownFinding } from '../../src/api/types';
import { GraphView } from '../../src/components/GraphView';
import { SAMPLE_PLAN } from './samplePlan';

// React Flow measures with ResizeObserver and DOMMatrix, which jsdom lacks.
beforeAll(() => {
  class ResizeObserverStub {
    observe() {}
    unobserve() {}
    disconnect() {}
  }
  vi.stubGlobal('ResizeObserver', ResizeObserverStub);
  class DOMMatrixReadOnlyStub {
    m22: number;
    constructor(transform?: string) {
      const scale = transform?.match(/scale\(([1-9.])\)/)?.[1];
      this.m22 = scale !== undefined ? Number(scale) : 1;
    }
  }
  vi.stubGlobal('DOMMatrixReadOnly', DOMMatrixReadOnlyStub);
});

afterEach(cleanup);

function finding(over: Partial<ShownFinding>): ShownFinding {
  return { code: 'x', severity: 'error', node_id: null, path: '', message: 'm', hint: null, line: null, column: null, ...over };
}

const LOOP = `id: p
graph:
  - id: read
    block: csv.read
    in: {path: a.csv}
    out: {rows: rows}
  - id: each
    type: loop
    foreach: {input: "\${read.rows}"}
    body:
      plan:
        id: inner
        graph:
          - id: inner_node
            block: transforms.filter_rows
            in: {rows: "\${read.rows}"}
`;

function nodes() {
  return screen.getAllByTestId('graph-node');
}

describe('GraphView', () => {
  it('draws one node per plan node, coloured by category, with the selection marked', () => {
    render(<GraphView lang="ja" yaml={SAMPLE_PLAN} findings={[]} selectedNodeId="large_invoices" onSelectNode={() => {}} />);
    expect(nodes().map((n) => [n.dataset.nodeId, n.dataset.category, n.dataset.selected])).toEqual([
      ['read_invoices', 'csv', 'false'],
      ['large_invoices', 'transforms', 'true'],
      ['save_large', 'csv', 'false'],
    ]);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('ok');
  });

  it('uses catalog categories when the catalog is given', () => {
    const blocks = [{ id: 'csv.read', category: 'input' }].map((b) => ({
      ...b,
      version: '1',
      title_ja: '',
      title_en: '',
      description_ja: '',
      description_en: '',
      tags: [],
      inputs: [],
      outputs: [],
      source: '',
    }));
    render(<GraphView lang="en" yaml={SAMPLE_PLAN} findings={[]} selectedNodeId={null} onSelectNode={() => {}} blocks={blocks} />);
    expect(nodes()[0]?.dataset.category).toBe('input');
    expect(nodes()[0]?.textContent).toContain('Input');
  });

  it('names each node by its block’s Japanese title, the block id under it and every name on hover', () => {
    const spec = (id: string, category: string, title_ja: string, title_en: string, description_ja = '') => ({
      id,
      category,
      version: '1',
      title_ja,
      title_en,
      description_ja,
      description_en: '',
      tags: [],
      inputs: [],
      outputs: [],
      source: '',
    });
    const blocks = [
      spec('csv.read', 'input', 'CSVファイルを読み込む', 'Read a CSV file'),
      // No title: the first sentence of the description names it.
      spec('transforms.filter_rows', 'transforms', '', '', '条件に合う行だけを残します。式は安全な部分集合です。'),
      // csv.write is not in this catalog: the node id stands in.
    ];
    render(<GraphView lang="ja" yaml={SAMPLE_PLAN} findings={[]} selectedNodeId={null} onSelectNode={() => {}} blocks={blocks} />);
    const titles = nodes().map((n) => n.querySelector('[data-testid="graph-node-title"]')?.textContent);
    expect(titles).toEqual(['CSVファイルを読み込む', '条件に合う行だけを残します。', 'save_large']);
    const subtitles = nodes().map((n) => n.querySelector('[data-testid="graph-node-subtitle"]')?.textContent);
    expect(subtitles).toEqual(['csv.read', 'transforms.filter_rows', 'csv.write']);
    expect(nodes()[0]?.title).toBe('CSVファイルを読み込む\nノード ID: read_invoices\nブロック: csv.read');
    expect(nodes()[2]?.title).toBe('save_large\nブロック: csv.write');
  });

  it('uses the English title in English', () => {
    const blocks = [{ id: 'csv.read', category: 'input', title_ja: 'CSVファイルを読み込む', title_en: 'Read a CSV file' }].map((b) => ({
      ...b,
      version: '1',
      description_ja: '',
      description_en: '',
      tags: [],
      inputs: [],
      outputs: [],
      source: '',
    }));
    render(<GraphView lang="en" yaml={SAMPLE_PLAN} findings={[]} selectedNodeId={null} onSelectNode={() => {}} blocks={blocks} />);
    expect(nodes()[0]?.querySelector('[data-testid="graph-node-title"]')?.textContent).toBe('Read a CSV file');
  });

  it('reports the chosen node id', () => {
    const onSelect = vi.fn();
    render(<GraphView lang="ja" yaml={SAMPLE_PLAN} findings={[]} selectedNodeId={null} onSelectNode={onSelect} />);
    fireEvent.click(nodes()[2] as HTMLElement);
    expect(onSelect).toHaveBeenCalledWith('save_large');
  });

  it('shows a node’s error count and first message on it', () => {
    const findings = [
      finding({ path: '/graph/1/in/condition', severity: 'warning', message: '条件が曖昧です' }),
      finding({ path: '/graph/1/block', message: 'ブロックがありません' }),
      finding({ path: '/graph/1/in/rows', message: '二つ目' }),
    ];
    render(<GraphView lang="ja" yaml={SAMPLE_PLAN} findings={findings} selectedNodeId={null} onSelectNode={() => {}} />);
    const node = nodes()[1] as HTMLElement;
    expect(node.dataset.errors).toBe('2');
    expect(node.dataset.warnings).toBe('1');
    expect(node.querySelector('[data-testid="graph-node-badge"]')?.textContent).toBe('エラー 2');
    expect(node.querySelector('[data-testid="graph-node-issue"]')?.textContent).toBe('ブロックがありません');
    expect(nodes()[0]?.dataset.errors).toBe('0');
  });

  it('draws a loop as a group around its body nodes', () => {
    render(<GraphView lang="ja" yaml={LOOP} findings={[]} selectedNodeId="inner_node" onSelectNode={() => {}} />);
    const group = screen.getByTestId('graph-group');
    expect(group.dataset.nodeId).toBe('each');
    expect(group.dataset.kind).toBe('loop');
    const inner = nodes().find((n) => n.dataset.nodeId === 'inner_node');
    expect(inner?.dataset.selected).toBe('true');
    // React Flow nests a child's wrapper after its parent's and offsets it relative to it.
    const wrapper = document.querySelector('.react-flow__node[data-id="/graph/1/body/plan/graph/0"]');
    expect(wrapper).not.toBeNull();
  });

  it('keeps the last good graph while the YAML is broken, and says so', () => {
    const { rerender } = render(
      <GraphView lang="ja" yaml={SAMPLE_PLAN} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />,
    );
    rerender(<GraphView lang="ja" yaml={`${SAMPLE_PLAN}  - id: [broken\n`} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('stale');
    expect(screen.getByTestId('graph-notice').textContent).toContain('最後に読めたグラフ');
    expect(nodes()).toHaveLength(3);
    rerender(<GraphView lang="ja" yaml={SAMPLE_PLAN.replace('save_large', 'save_all')} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('ok');
    expect(screen.queryByTestId('graph-notice')).toBeNull();
    expect(nodes()[2]?.dataset.nodeId).toBe('save_all');
  });

  it('says when there is no graph yet', () => {
    const { rerender } = render(<GraphView lang="en" yaml="graph: [" findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('broken');
    expect(screen.getByTestId('graph-notice').textContent).toContain('cannot be read');
    rerender(<GraphView lang="en" yaml="id: p\n" findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-empty')).toBeTruthy();
  });
});
