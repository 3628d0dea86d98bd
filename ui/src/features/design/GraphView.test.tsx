import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ShownFinding } from '../../api/types';
import { GraphView } from './GraphView';
import { EMPTY_PLAN_GRAPH } from './graph';
import { SAMPLE_GRAPH, edge, node, planGraph } from './planGraphs';

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

// A loop over `read`'s rows whose body node `inner_node` reads them too.
const LOOP = planGraph(
  [
    node('/graph/0', 'read', 'csv.read'),
    node('/graph/1', 'each', null, { kind: 'loop' }),
    node('/graph/1/body/plan/graph/0', 'inner_node', 'transforms.filter_rows', { parent: '/graph/1' }),
  ],
  [edge('/graph/0', '/graph/1', ['rows'], 'loop'), edge('/graph/0', '/graph/1/body/plan/graph/0', ['rows'])],
);

/** SAMPLE_GRAPH after its last node was renamed `save_all`. */
const RENAMED = {
  ...SAMPLE_GRAPH,
  nodes: SAMPLE_GRAPH.nodes.map((n) => (n.id === 'save_large' ? { ...n, id: 'save_all' } : n)),
};

function nodes() {
  return screen.getAllByTestId('graph-node');
}

describe('GraphView', () => {
  it('draws one node per plan node, coloured by category, with the selection marked', () => {
    render(<GraphView lang="ja" graph={SAMPLE_GRAPH} findings={[]} selectedNodeId="large_invoices" onSelectNode={() => {}} />);
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
    render(<GraphView lang="en" graph={SAMPLE_GRAPH} findings={[]} selectedNodeId={null} onSelectNode={() => {}} blocks={blocks} />);
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
    render(<GraphView lang="ja" graph={SAMPLE_GRAPH} findings={[]} selectedNodeId={null} onSelectNode={() => {}} blocks={blocks} />);
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
    render(<GraphView lang="en" graph={SAMPLE_GRAPH} findings={[]} selectedNodeId={null} onSelectNode={() => {}} blocks={blocks} />);
    expect(nodes()[0]?.querySelector('[data-testid="graph-node-title"]')?.textContent).toBe('Read a CSV file');
  });

  it('reports the chosen node id', () => {
    const onSelect = vi.fn();
    render(<GraphView lang="ja" graph={SAMPLE_GRAPH} findings={[]} selectedNodeId={null} onSelectNode={onSelect} />);
    fireEvent.click(nodes()[2] as HTMLElement);
    expect(onSelect).toHaveBeenCalledWith('save_large');
  });

  it('shows a node’s error count and first message on it', () => {
    const findings = [
      finding({ path: '/graph/1/in/condition', severity: 'warning', message: '条件が曖昧です' }),
      finding({ path: '/graph/1/block', message: 'ブロックがありません' }),
      finding({ path: '/graph/1/in/rows', message: '二つ目' }),
    ];
    render(<GraphView lang="ja" graph={SAMPLE_GRAPH} findings={findings} selectedNodeId={null} onSelectNode={() => {}} />);
    const node = nodes()[1] as HTMLElement;
    expect(node.dataset.errors).toBe('2');
    expect(node.dataset.warnings).toBe('1');
    expect(node.querySelector('[data-testid="graph-node-badge"]')?.textContent).toBe('エラー 2');
    expect(node.querySelector('[data-testid="graph-node-issue"]')?.textContent).toBe('ブロックがありません');
    expect(nodes()[0]?.dataset.errors).toBe('0');
  });

  it('draws a loop as a group around its body nodes', () => {
    render(<GraphView lang="ja" graph={LOOP} findings={[]} selectedNodeId="inner_node" onSelectNode={() => {}} />);
    const group = screen.getByTestId('graph-group');
    expect(group.dataset.nodeId).toBe('each');
    expect(group.dataset.kind).toBe('loop');
    const inner = nodes().find((n) => n.dataset.nodeId === 'inner_node');
    expect(inner?.dataset.selected).toBe('true');
    // React Flow nests a child's wrapper after its parent's and offsets it relative to it.
    const wrapper = document.querySelector('.react-flow__node[data-id="/graph/1/body/plan/graph/0"]');
    expect(wrapper).not.toBeNull();
  });

  it('keeps the last good graph while the text is not a plan, and says where it breaks', () => {
    const { rerender } = render(
      <GraphView lang="ja" graph={SAMPLE_GRAPH} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />,
    );
    const broken = [
      finding({ code: 'ref.unknown_node', line: 3 }),
      finding({ code: 'yaml.parse', line: 27, message: 'did not find expected node content' }),
    ];
    rerender(<GraphView lang="ja" graph={null} findings={broken} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('stale');
    const notice = screen.getByTestId('graph-notice');
    expect(notice.textContent).toBe('YAML に誤りがあります（27 行目）。最後に読めたグラフを表示しています');
    expect(notice.title).toBe('did not find expected node content');
    expect(nodes()).toHaveLength(3);
    rerender(<GraphView lang="ja" graph={RENAMED} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('ok');
    expect(screen.queryByTestId('graph-notice')).toBeNull();
    expect(nodes()[2]?.dataset.nodeId).toBe('save_all');
  });

  it('keeps the last graph without a notice while no validation answers', () => {
    const { rerender } = render(<GraphView lang="ja" graph={undefined} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('ok');
    expect(screen.queryByTestId('graph-node')).toBeNull();
    expect(screen.queryByTestId('graph-empty')).toBeNull();
    rerender(<GraphView lang="ja" graph={SAMPLE_GRAPH} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    rerender(<GraphView lang="ja" graph={undefined} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('ok');
    expect(screen.queryByTestId('graph-notice')).toBeNull();
    expect(nodes().map((n) => n.dataset.nodeId)).toEqual(['read_invoices', 'large_invoices', 'save_large']);
  });

  it('says when there is no graph yet', () => {
    const shape = [finding({ code: 'plan.shape', line: 1, message: 'the plan is not a mapping' })];
    const { rerender } = render(<GraphView lang="en" graph={null} findings={shape} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('broken');
    expect(screen.getByTestId('graph-notice').textContent).toBe('The YAML cannot be read, so there is no graph (line 1)');
    expect(screen.queryByTestId('graph-node')).toBeNull();
    rerender(<GraphView lang="en" graph={EMPTY_PLAN_GRAPH} findings={[]} selectedNodeId={null} onSelectNode={() => {}} />);
    expect(screen.getByTestId('graph-view').dataset.state).toBe('ok');
    expect(screen.getByTestId('graph-empty')).toBeTruthy();
  });

  it('shows the sample run’s state on the top-level nodes', () => {
    const runStates = new Map([
      ['read', 'done' as const],
      ['each', 'running' as const],
      ['inner_node', 'failed' as const],
    ]);
    render(<GraphView lang="en" graph={LOOP} findings={[]} selectedNodeId={null} onSelectNode={() => {}} runStates={runStates} />);
    const states = [...nodes(), screen.getByTestId('graph-group')].map((n) => [n.dataset.nodeId, n.dataset.runState]);
    expect(states).toEqual([
      ['read', 'done'],
      ['inner_node', undefined],
      ['each', 'running'],
    ]);
  });
});
