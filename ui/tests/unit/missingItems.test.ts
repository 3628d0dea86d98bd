import { describe, expect, it } from 'vitest';
import type { Requirement, ShownFinding } from '../../src/api/types';
import { blockIdsIn, missingItems, unresolvedVars, varReferences } from '../../src/missingItems';

function finding(over: Partial<ShownFinding>): ShownFinding {
  return { code: 'x', severity: 'error', node_id: null, path: '', message: 'm', hint: null, line: null, column: null, ...over };
}

function requirement(id: string, over: Partial<Requirement> = {}): Requirement {
  return { id, type: 'text', label: `${id} ラベル`, description: '', required: true, target: {}, ...over };
}

const PLAN = `id: p
vars:
  month: "2025-03"
  empty: ""
  nothing: null
graph:
  - id: read
    block: csv.read
    in: {path: "data/\${vars.month}/\${vars.src}.csv", encoding: "\${vars.empty}"}
    out: {rows: rows}
  - id: each
    type: loop
    foreach: {input: "\${read.rows}", var: row}
    body:
      plan:
        id: inner
        vars: {local: 1}
        graph:
          - id: use
            block: transforms.compute_columns
            in: {rows: "\${vars.row}", n: "\${vars.index}", k: "\${vars.local}", z: "\${vars.nothing}", w: "\${vars.src}"}
  - id: confirm
    block: ui.confirmation
    in: {message: ok}
`;

describe('vars', () => {
  it('finds var references anywhere in a value', () => {
    expect(varReferences({ a: '${vars.x}', b: ['${ vars.y.deep } and ${vars.x}', '${read.rows}', '${env.HOME}'] })).toEqual([
      'x',
      'y',
      'x',
    ]);
  });

  it('lists vars that are undefined or empty, with the nodes that use them, honouring loop scopes', () => {
    expect(unresolvedVars(PLAN)).toEqual([
      { name: 'src', defined: false, nodeIds: ['read', 'use'] },
      { name: 'empty', defined: true, nodeIds: ['read'] },
      { name: 'nothing', defined: true, nodeIds: ['use'] },
    ]);
  });

  it('gives nothing for unreadable YAML', () => {
    expect(unresolvedVars('graph: [\n')).toEqual([]);
    expect(unresolvedVars('- a\n')).toEqual([]);
  });

  it('counts the default loop variable and the while iteration as defined', () => {
    const text = `graph:
  - id: l
    type: loop
    foreach: {input: [1]}
    body: {plan: {id: b, graph: [{id: n, block: a.b, in: {x: "\${vars.item}", y: "\${vars.iteration}"}}]}}
  - id: w
    type: loop
    while: {condition: {expr: "true"}, max_iterations: 2}
    body: {plan: {id: c, graph: [{id: m, block: a.b, in: {x: "\${vars.iteration}"}}]}}
`;
    expect(unresolvedVars(text)).toEqual([{ name: 'iteration', defined: false, nodeIds: ['n'] }]);
  });
});

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
    const items = missingItems(PLAN, findings, requirements);
    expect(items.map((i) => i.key)).toEqual([
      'var:src',
      'var:empty',
      'var:nothing',
      'question:schema',
      'question:opt',
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
      { kind: 'open', nodeId: 'confirm' },
      { kind: 'pin', blockId: 'ui.confirmation' },
    ]);
    expect(items[6]?.actions).toEqual([
      { kind: 'ask', requirementId: 'schema' },
      { kind: 'open', nodeId: 'use' },
    ]);
    expect(items[7]?.actions).toEqual([
      { kind: 'pin', blockId: 'csv.read' },
      { kind: 'pin', blockId: 'csv.write' },
      { kind: 'open', nodeId: 'ghost' },
    ]);
    expect(items[8]?.actions).toEqual([]);
  });

  it('is empty for a complete plan', () => {
    expect(missingItems('id: p\ngraph:\n  - id: a\n    block: csv.read\n    in: {path: a.csv}\n', [], [])).toEqual([]);
  });

  it('reads block ids out of hints', () => {
    expect(blockIdsIn('did you mean: transforms.join, csv.read')).toEqual(['transforms.join', 'csv.read']);
    expect(blockIdsIn('use a block id from the catalog')).toEqual([]);
    expect(blockIdsIn(null)).toEqual([]);
  });
});
