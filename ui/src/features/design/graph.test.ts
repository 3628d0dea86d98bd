import { describe, expect, it } from 'vitest';
import type { ShownFinding } from '../../api/types';
import {
  EMPTY_PLAN_GRAPH,
  absoluteCenter,
  blockCategory,
  categoryColour,
  findingsByNode,
  layoutGraph,
  nodeById,
  nodeIdAtLine,
  nodeIdLine,
  topLevelNodeIds,
  viewGraph,
} from './graph';
import { SAMPLE_PLAN } from './samplePlan';
import { SAMPLE_GRAPH, edge, node, planGraph } from './planGraphs';

const LOOP_PLAN = `id: loops
vars:
  books: [a.xlsx]
graph:
  - id: read
    block: csv.read
    in: {path: in.csv}
    out: {rows: rows}
  - id: each
    type: loop
    foreach: {input: "\${read.rows}", var: row}
    body:
      plan:
        id: inner
        graph:
          - id: check
            block: control.data_quality
            in: {rows: "\${read.rows}", rules: "\${vars.rules}"}
            out: {issues: issues}
          - id: note
            block: report.markdown
            when: {expr: "\${check.issues} != null"}
            in: {title: "件数レポート"}
  - id: sub
    type: subflow
    call: {plan_id: monthly, inputs: {rows: "\${read.rows}"}}
`;

/** What the server sends for LOOP_PLAN. */
const LOOP_GRAPH = planGraph(
  [
    node('/graph/0', 'read', 'csv.read'),
    node('/graph/1', 'each', null, { kind: 'loop' }),
    node('/graph/1/body/plan/graph/0', 'check', 'control.data_quality', { parent: '/graph/1' }),
    node('/graph/1/body/plan/graph/1', 'note', 'report.markdown', { parent: '/graph/1', when: '${check.issues} != null' }),
    node('/graph/2', 'sub', null, { kind: 'subflow', call_plan_id: 'monthly' }),
  ],
  [
    edge('/graph/0', '/graph/1', ['rows'], 'loop'),
    edge('/graph/0', '/graph/1/body/plan/graph/0', ['rows']),
    edge('/graph/1/body/plan/graph/0', '/graph/1/body/plan/graph/1', ['issues'], 'when'),
    edge('/graph/0', '/graph/2', ['rows'], 'call'),
  ],
  [{ name: 'rules', defined: false, node_ids: ['check'] }],
);

function finding(over: Partial<ShownFinding>): ShownFinding {
  return { code: 'x', severity: 'error', node_id: null, path: '', message: 'm', hint: null, line: null, column: null, ...over };
}

describe('viewGraph', () => {
  it('takes the server’s nodes and edges of the sample plan', () => {
    const graph = viewGraph(SAMPLE_GRAPH);
    expect(graph.nodes.map((n) => [n.key, n.id, n.category, n.kind, n.parent])).toEqual([
      ['/graph/0', 'read_invoices', 'csv', 'block', null],
      ['/graph/1', 'large_invoices', 'transforms', 'block', null],
      ['/graph/2', 'save_large', 'csv', 'block', null],
    ]);
    expect(graph.edges).toEqual([
      { key: '/graph/0->/graph/1', source: '/graph/0', target: '/graph/1', label: 'invoices', kind: 'data' },
      { key: '/graph/1->/graph/2', source: '/graph/1', target: '/graph/2', label: 'large', kind: 'data' },
    ]);
  });

  it('keeps loop bodies inside their loop, a subflow’s plan and a condition', () => {
    const graph = viewGraph(LOOP_GRAPH);
    const byId = (id: string) => nodeById(graph, id);
    expect(byId('check')?.parent).toBe('/graph/1');
    expect(byId('check')?.key).toBe('/graph/1/body/plan/graph/0');
    expect(byId('each')?.kind).toBe('loop');
    expect(byId('each')?.category).toBe('loop');
    expect(byId('sub')?.category).toBe('subflow');
    expect(byId('sub')?.callPlanId).toBe('monthly');
    expect(byId('note')?.when).toBe('${check.issues} != null');
    expect(byId('read')?.when).toBeNull();
    const edges = graph.edges.map((e) => `${e.key} [${e.label}] ${e.kind}`);
    expect(edges).toEqual([
      '/graph/0->/graph/1 [rows] loop',
      '/graph/0->/graph/1/body/plan/graph/0 [rows] data',
      '/graph/1/body/plan/graph/0->/graph/1/body/plan/graph/1 [issues] when',
      '/graph/0->/graph/2 [rows] call',
    ]);
  });

  it('labels an edge with every alias the target reads', () => {
    const graph = viewGraph(planGraph([node('/graph/0', 'a', 'x.y'), node('/graph/1', 'b', 'x.z')], [edge('/graph/0', '/graph/1', ['one', 'two'])]));
    expect(graph.edges.map((e) => e.label)).toEqual(['one, two']);
  });

  it('draws whatever an invalid but readable plan has', () => {
    const graph = viewGraph(planGraph([node('/graph/0', '', 'no.id'), node('/graph/2', 't', null, { kind: 'unknown' })]));
    expect(graph.nodes.map((n) => [n.key, n.id, n.kind, n.category])).toEqual([
      ['/graph/0', '', 'block', 'no'],
      ['/graph/2', 't', 'unknown', 'unknown'],
    ]);
    expect(viewGraph(EMPTY_PLAN_GRAPH)).toEqual({ nodes: [], edges: [] });
  });

  it('uses catalog categories when known', () => {
    const categories = new Map([['csv.read', 'input']]);
    expect(viewGraph(SAMPLE_GRAPH, categories).nodes.map((n) => n.category)).toEqual(['input', 'transforms', 'csv']);
    expect(blockCategory('plain')).toBe('plain');
  });
});

describe('topLevelNodeIds', () => {
  it('reads the top-level node ids of the text, not the loop bodies’', () => {
    expect(topLevelNodeIds(LOOP_PLAN)).toEqual(['read', 'each', 'sub']);
    expect(topLevelNodeIds(SAMPLE_PLAN)).toEqual(['read_invoices', 'large_invoices', 'save_large']);
  });

  it('skips nodes without an id and takes a number id as text', () => {
    expect(topLevelNodeIds('id: p\ngraph:\n  - block: no.id\n  - 12\n  - id: 7\n  - id: ""\n  - id: t\n')).toEqual(['7', 't']);
  });

  it('has none for text that is not a plan', () => {
    expect(topLevelNodeIds('')).toEqual([]);
    expect(topLevelNodeIds('id: p\ngraph:\n  - id: a\n    in: {p: [1, 2}\n')).toEqual([]);
    expect(topLevelNodeIds('- just\n- a list\n')).toEqual([]);
    expect(topLevelNodeIds('id: p\ngraph: {a: 1}\n')).toEqual([]);
  });
});

describe('findingsByNode', () => {
  it('assigns a finding to the deepest node on its path, else by node id', () => {
    const graph = viewGraph(LOOP_GRAPH);
    const map = findingsByNode(graph, [
      finding({ path: '/graph/1/body/plan/graph/0/in/rules', severity: 'error', message: 'undefined var' }),
      finding({ path: '/graph/1/foreach', severity: 'warning', message: 'loop warn' }),
      finding({ path: '/graph/1', severity: 'error', message: 'loop error' }),
      finding({ path: '', node_id: 'sub', severity: 'warning' }),
      finding({ path: '/vars', node_id: null }),
    ]);
    expect(map.get('/graph/1/body/plan/graph/0')).toMatchObject({ errors: 1, warnings: 0 });
    const loop = map.get('/graph/1');
    expect(loop).toMatchObject({ errors: 1, warnings: 1 });
    expect(loop?.first.message).toBe('loop error');
    expect(map.get('/graph/2')).toMatchObject({ errors: 0, warnings: 1 });
    expect(map.size).toBe(3);
  });

  it('does not confuse /graph/1 with /graph/10', () => {
    const graph = viewGraph(planGraph(Array.from({ length: 11 }, (_, i) => node(`/graph/${i}`, `n${i}`, 'a.b'))));
    const map = findingsByNode(graph, [finding({ path: '/graph/10/in' })]);
    expect([...map.keys()]).toEqual(['/graph/10']);
  });
});

describe('layoutGraph', () => {
  it('ranks dependent nodes below their sources', () => {
    const graph = viewGraph(SAMPLE_GRAPH);
    const boxes = layoutGraph(graph);
    const y = (key: string) => boxes.get(key)?.y ?? NaN;
    expect(y('/graph/0')).toBeLessThan(y('/graph/1'));
    expect(y('/graph/1')).toBeLessThan(y('/graph/2'));
  });

  it('sizes a loop around its body and places body nodes inside it', () => {
    const graph = viewGraph(LOOP_GRAPH);
    const boxes = layoutGraph(graph);
    const loop = boxes.get('/graph/1');
    const check = boxes.get('/graph/1/body/plan/graph/0');
    const note = boxes.get('/graph/1/body/plan/graph/1');
    expect(loop && check && note).toBeTruthy();
    if (!loop || !check || !note) return;
    for (const child of [check, note]) {
      expect(child.x).toBeGreaterThanOrEqual(0);
      expect(child.y).toBeGreaterThan(0);
      expect(child.x + child.width).toBeLessThanOrEqual(loop.width);
      expect(child.y + child.height).toBeLessThanOrEqual(loop.height);
    }
    expect(check.y).toBeLessThan(note.y);
    // The read node feeds the loop, so it sits above it.
    expect((boxes.get('/graph/0')?.y ?? 0) + 72).toBeLessThanOrEqual(loop.y);
    const centre = absoluteCenter(graph, boxes, '/graph/1/body/plan/graph/0');
    expect(centre).toEqual({ x: loop.x + check.x + check.width / 2, y: loop.y + check.y + check.height / 2 });
  });

  it('is deterministic', () => {
    const graph = viewGraph(LOOP_GRAPH);
    expect([...layoutGraph(graph)]).toEqual([...layoutGraph(graph)]);
  });
});

describe('categoryColour', () => {
  it('is stable and distinct for the main categories', () => {
    expect(categoryColour('someday')).toBe(categoryColour('someday'));
    const main = ['input', 'transforms', 'matching', 'ai', 'control', 'output', 'integration', 'ui'];
    expect(new Set(main.map(categoryColour)).size).toBe(main.length);
  });
});

describe('nodes in the text', () => {
  const lines = LOOP_PLAN.split('\n');
  const lineOf = (needle: string) => lines.findIndex((l) => l.includes(needle)) + 1;

  it.each([
    ['id: loops', null],
    ['books: [a.xlsx]', null],
    ['- id: read', 'read'],
    ['block: csv.read', 'read'],
    ['out: {rows: rows}', 'read'],
    ['- id: each', 'each'],
    ['foreach:', 'each'],
    ['id: inner', 'each'],
    ['- id: check', 'check'],
    ['rules:', 'check'],
    ['when: {expr:', 'note'],
    ['plan_id: monthly', 'sub'],
  ])('the line with %j belongs to %j', (needle, want) => {
    expect(nodeIdAtLine(lines, lineOf(needle))).toBe(want);
  });

  it('handles items at the key column, ids after other keys and nested lists', () => {
    const text = [
      'graph:',
      '- block: excel.patch_workbook',
      '  id: "patch"',
      '  in:',
      '    operations:',
      '      - {op: set_value, sheet: S, cell: A1, value: 1}',
      '      - op: add_sheet',
      '        sheet: T',
      '- {id: flow, block: a.b}',
      'vars:',
      '  x: 1',
    ];
    expect(nodeIdAtLine(text, 2)).toBe('patch');
    expect(nodeIdAtLine(text, 6)).toBe('patch');
    expect(nodeIdAtLine(text, 8)).toBe('patch');
    expect(nodeIdAtLine(text, 9)).toBe('flow');
    expect(nodeIdAtLine(text, 11)).toBeNull();
    expect(nodeIdAtLine(text, 0)).toBeNull();
    expect(nodeIdAtLine(text, 99)).toBeNull();
    expect(nodeIdLine(text, 'patch')).toBe(3);
    expect(nodeIdLine(text, 'flow')).toBeNull();
  });

  it('finds the line naming a node, not the plan id or a body plan id', () => {
    const text = ['id: same', 'graph:', '  - id: same', '    block: a.b'];
    expect(nodeIdLine(text, 'same')).toBe(3);
    expect(nodeIdLine(lines, 'check')).toBe(lineOf('- id: check'));
    expect(nodeIdLine(lines, 'inner')).toBeNull();
    expect(nodeIdLine(lines, 'ghost')).toBeNull();
  });
});
