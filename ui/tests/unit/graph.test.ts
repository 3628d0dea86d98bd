import { describe, expect, it } from 'vitest';
import type { ShownFinding } from '../../src/api/types';
import {
  absoluteCenter,
  blockCategory,
  categoryColour,
  extractReferences,
  findingsByNode,
  layoutGraph,
  nodeById,
  nodeIdAtLine,
  nodeIdLine,
  parseNodeReference,
  parsePlanGraph,
  type PlanGraph,
} from '../../src/graph';
import { SAMPLE_PLAN } from './samplePlan';

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

function graphOf(text: string): PlanGraph {
  const result = parsePlanGraph(text);
  if (!result.ok) throw new Error(result.message);
  return result.graph;
}

function finding(over: Partial<ShownFinding>): ShownFinding {
  return { code: 'x', severity: 'error', node_id: null, path: '', message: 'm', hint: null, line: null, column: null, ...over };
}

describe('references', () => {
  it.each([
    ['read.rows', { node: 'read', alias: 'rows' }],
    [' read . rows.0.amount ', { node: 'read', alias: 'rows' }],
    ['vars.x', null],
    ['env.HOME', null],
    ['config.a.b', null],
    ['read', null],
    ['read.', null],
    ['.rows', null],
  ])('parses %j', (raw, want) => {
    expect(parseNodeReference(raw)).toEqual(want);
  });

  it('finds references in whole strings, inside text and nested values', () => {
    const found = extractReferences({
      a: '${one.x}',
      b: ['prefix ${two.y} and ${vars.z} and ${three.w.deep}', { c: '${four.v}' }],
      d: 'unclosed ${five.u',
      e: 42,
    });
    expect(found.map((r) => `${r.node}.${r.alias}`)).toEqual(['one.x', 'two.y', 'three.w', 'four.v']);
  });
});

describe('parsePlanGraph', () => {
  it('builds nodes and edges of the sample plan', () => {
    const graph = graphOf(SAMPLE_PLAN);
    expect(graph.planId).toBe('invoice_review');
    expect(graph.nodes.map((n) => [n.id, n.category, n.kind])).toEqual([
      ['read_invoices', 'csv', 'block'],
      ['large_invoices', 'transforms', 'block'],
      ['save_large', 'csv', 'block'],
    ]);
    expect(graph.edges.map((e) => [e.source, e.target, e.label, e.kind])).toEqual([
      ['/graph/0', '/graph/1', 'invoices', 'data'],
      ['/graph/1', '/graph/2', 'large', 'data'],
    ]);
  });

  it('puts loop bodies inside their loop and connects across the border', () => {
    const graph = graphOf(LOOP_PLAN);
    const byId = (id: string) => nodeById(graph, id);
    expect(byId('check')?.parent).toBe('/graph/1');
    expect(byId('check')?.key).toBe('/graph/1/body/plan/graph/0');
    expect(byId('each')?.kind).toBe('loop');
    expect(byId('each')?.category).toBe('loop');
    expect(byId('sub')?.callPlanId).toBe('monthly');
    expect(byId('note')?.when).toBe('${check.issues} != null');
    const edges = graph.edges.map((e) => `${e.source} -> ${e.target} [${e.label}] ${e.kind}`);
    expect(edges).toEqual([
      '/graph/0 -> /graph/1 [rows] loop',
      '/graph/0 -> /graph/1/body/plan/graph/0 [rows] data',
      '/graph/1/body/plan/graph/0 -> /graph/1/body/plan/graph/1 [issues] when',
      '/graph/0 -> /graph/2 [rows] call',
    ]);
  });

  it('merges several aliases between the same nodes into one edge', () => {
    const graph = graphOf('id: p\ngraph:\n  - id: a\n    block: x.y\n  - id: b\n    block: x.z\n    in: {p: "${a.one}", q: "${a.two}", r: "${a.one}"}\n');
    expect(graph.edges).toHaveLength(1);
    expect(graph.edges[0]?.label).toBe('one, two');
  });

  it('ignores references to unknown nodes and to the node itself', () => {
    const graph = graphOf('id: p\ngraph:\n  - id: a\n    block: x.y\n    in: {p: "${a.one}", q: "${ghost.x}"}\n');
    expect(graph.edges).toEqual([]);
  });

  it('reports broken YAML with its line instead of a graph', () => {
    const result = parsePlanGraph('id: p\ngraph:\n  - id: a\n    in: {p: [1, 2}\n');
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.line).toBe(4);
      expect(result.message).not.toBe('');
    }
    expect(parsePlanGraph('- just\n- a list\n').ok).toBe(false);
  });

  it('draws whatever an invalid but readable plan has', () => {
    const graph = graphOf('id: p\ngraph:\n  - block: no.id\n  - 12\n  - id: t\n    type: teleport\n');
    expect(graph.nodes.map((n) => [n.key, n.id, n.kind, n.category])).toEqual([
      ['/graph/0', '', 'block', 'no'],
      ['/graph/2', 't', 'unknown', 'unknown'],
    ]);
    expect(graphOf('').nodes).toEqual([]);
  });

  it('uses catalog categories when known', () => {
    const categories = new Map([['csv.read', 'input']]);
    const result = parsePlanGraph(SAMPLE_PLAN, categories);
    expect(result.ok && result.graph.nodes.map((n) => n.category)).toEqual(['input', 'transforms', 'csv']);
    expect(blockCategory('plain')).toBe('plain');
  });
});

describe('findingsByNode', () => {
  it('assigns a finding to the deepest node on its path, else by node id', () => {
    const graph = graphOf(LOOP_PLAN);
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
    const nodes = Array.from({ length: 11 }, (_, i) => `  - id: n${i}\n    block: a.b\n`).join('');
    const graph = graphOf(`id: p\ngraph:\n${nodes}`);
    const map = findingsByNode(graph, [finding({ path: '/graph/10/in' })]);
    expect([...map.keys()]).toEqual(['/graph/10']);
  });
});

describe('layoutGraph', () => {
  it('ranks dependent nodes below their sources', () => {
    const graph = graphOf(SAMPLE_PLAN);
    const boxes = layoutGraph(graph);
    const y = (key: string) => boxes.get(key)?.y ?? NaN;
    expect(y('/graph/0')).toBeLessThan(y('/graph/1'));
    expect(y('/graph/1')).toBeLessThan(y('/graph/2'));
  });

  it('sizes a loop around its body and places body nodes inside it', () => {
    const graph = graphOf(LOOP_PLAN);
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
    const graph = graphOf(LOOP_PLAN);
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
