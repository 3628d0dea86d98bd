import { describe, expect, it } from 'vitest';
import type { Requirement, ShownFinding } from '../../api/types';
import { blockIdsIn, missingItems } from './missingItems';
import { edge, node, planGraph } from './planGraphs';

function finding(over: Partial<ShownFinding>): ShownFinding {
  return { code: 'x', severity: 'error', node_id: null, path: '', message: 'm', hint: null, line: null, column: null, ...over };
}

function requirement(id: string, over: Partial<Requirement> = {}): Requirement {
  return { id, type: 'text', label: `${id} ラベル`, description: '', required: true, target: {}, ...over };
}

/**
 * What the server sends for this plan:
 *
 *     id: p
 *     vars: {month: "2025-03", empty: "", nothing: null}
 *     graph:
 *       - id: read
 *         block: csv.read
 *         in: {path: "data/${vars.month}/${vars.src}.csv", encoding: "${vars.empty}"}
 *         out: {rows: rows}
 *       - id: each
 *         type: loop
 *         foreach: {input: "${read.rows}", var: row}
 *         body:
 *           plan:
 *             id: inner
 *             vars: {local: 1}
 *             graph:
 *               - id: use
 *                 block: transforms.compute_columns
 *                 in: {rows: "${vars.row}", n: "${vars.index}", k: "${vars.local}", z: "${vars.nothing}", w: "${vars.src}"}
 *               - id: check
 *                 block: ui.review
 *       - id: confirm
 *         block: ui.confirmation
 *         in: {message: ok}
 *       - block: ui.notify
 */
const GRAPH = planGraph(
  [
    node('/graph/0', 'read', 'csv.read'),
    node('/graph/1', 'each', null, { kind: 'loop' }),
    node('/graph/1/body/plan/graph/0', 'use', 'transforms.compute_columns', { parent: '/graph/1' }),
    node('/graph/1/body/plan/graph/1', 'check', 'ui.review', { parent: '/graph/1' }),
    node('/graph/2', 'confirm', 'ui.confirmation'),
    node('/graph/3', '', 'ui.notify'),
  ],
  [edge('/graph/0', '/graph/1', ['rows'], 'loop')],
  [
    { name: 'src', defined: false, node_ids: ['read', 'use'] },
    { name: 'empty', defined: true, node_ids: ['read'] },
    { name: 'nothing', defined: true, node_ids: ['use'] },
  ],
);

describe('missingItems', () => {
  it('orders vars, questions (required first), person steps, then findings (errors first)', () => {
    const requirements = [
      requirement('opt', { required: false }),
      requirement('src', { target: { var: 'src', node_id: 'read', input: 'path' } }),
      requirement('schema', { target: { node_id: 'use', input: 'columns' } }),
    ];
    const findings = [
      finding({ code: 'ref.undefined_var', node_id: 'read', path: '/graph/0/in/path' }),
      finding({ code: 'output.unused', severity: 'warning', node_id: 'read', path: '/graph/0/out/rows' }),
      finding({ code: 'input.missing_required', node_id: 'use', path: '/graph/1/body/plan/graph/0/in/columns' }),
      finding({ code: 'block.unknown', node_id: 'ghost', path: '/graph/3/block', hint: '候補: csv.read, csv.write' }),
      finding({ code: 'graph.cycle', node_id: null, path: '/graph' }),
    ];
    const items = missingItems(GRAPH, findings, requirements);
    expect(items.map((i) => i.key)).toEqual([
      'var:src',
      'var:empty',
      'var:nothing',
      'question:schema',
      'question:opt',
      'ui:check',
      'ui:confirm',
      'finding:2:input.missing_required:/graph/1/body/plan/graph/0/in/columns',
      'finding:3:block.unknown:/graph/3/block',
      'finding:4:graph.cycle:/graph',
      'finding:1:output.unused:/graph/0/out/rows',
    ]);
    expect(items[0]?.actions).toEqual([
      { kind: 'ask', requirementId: 'src' },
      { kind: 'open', nodeId: 'read' },
    ]);
    expect(items[1]?.actions).toEqual([{ kind: 'open', nodeId: 'read' }]);
    expect(items[3]?.actions).toEqual([
      { kind: 'ask', requirementId: 'schema' },
      { kind: 'open', nodeId: 'use' },
    ]);
    expect(items[5]?.actions).toEqual([
      { kind: 'open', nodeId: 'check' },
      { kind: 'pin', blockId: 'ui.review' },
    ]);
    expect(items[6]?.actions).toEqual([
      { kind: 'open', nodeId: 'confirm' },
      { kind: 'pin', blockId: 'ui.confirmation' },
    ]);
    expect(items[7]?.actions).toEqual([
      { kind: 'ask', requirementId: 'schema' },
      { kind: 'open', nodeId: 'use' },
    ]);
    expect(items[8]?.actions).toEqual([
      { kind: 'pin', blockId: 'csv.read' },
      { kind: 'pin', blockId: 'csv.write' },
      { kind: 'open', nodeId: 'ghost' },
    ]);
    expect(items[9]?.actions).toEqual([]);
  });

  it('lists each unvalued var with the nodes that use it, whether vars names it or not', () => {
    const vars = missingItems(GRAPH, [], []).filter((i) => i.kind === 'var');
    expect(vars).toEqual([
      { kind: 'var', key: 'var:src', name: 'src', defined: false, nodeIds: ['read', 'use'], actions: [{ kind: 'open', nodeId: 'read' }] },
      { kind: 'var', key: 'var:empty', name: 'empty', defined: true, nodeIds: ['read'], actions: [{ kind: 'open', nodeId: 'read' }] },
      { kind: 'var', key: 'var:nothing', name: 'nothing', defined: true, nodeIds: ['use'], actions: [{ kind: 'open', nodeId: 'use' }] },
    ]);
    // A var only nodes without an id use has nothing to open; a question about it is asked from it.
    const orphan = planGraph([], [], [{ name: 'to', defined: true, node_ids: [] }]);
    expect(missingItems(orphan, [], [requirement('mail', { target: { var: 'to' } })])).toEqual([
      { kind: 'var', key: 'var:to', name: 'to', defined: true, nodeIds: [], actions: [{ kind: 'ask', requirementId: 'mail' }] },
    ]);
  });

  it('lists only the findings while the text is not a plan or not validated yet', () => {
    const findings = [finding({ code: 'yaml.parse', path: '', line: 3 })];
    for (const graph of [null, undefined]) {
      expect(missingItems(graph, findings, []).map((i) => i.key)).toEqual(['finding:0:yaml.parse:']);
    }
  });

  it('is empty for a complete plan', () => {
    expect(missingItems(planGraph([node('/graph/0', 'a', 'csv.read')]), [], [])).toEqual([]);
  });

  it('reads block ids out of hints', () => {
    expect(blockIdsIn('did you mean: transforms.join, csv.read')).toEqual(['transforms.join', 'csv.read']);
    expect(blockIdsIn('use a block id from the catalog')).toEqual([]);
    expect(blockIdsIn(null)).toEqual([]);
  });
});
