import { describe, expect, it } from 'vitest';
import type { BlockSummary, Port } from '../../api/types';
import { blockTitle, filterBlocks, freshNodeId, groupByCategory, insertNode, wireFrom } from './catalog';

function port(name: string, type: string, required: boolean, extra: Partial<Port> = {}): Port {
  return { name, type, required, description: '', description_en: '', enum: null, default: null, ...extra };
}

function block(id: string, category: string, over: Partial<BlockSummary> = {}): BlockSummary {
  return {
    id,
    version: '1.0.0',
    category,
    title_ja: '',
    title_en: '',
    description_ja: '',
    description_en: '',
    tags: [],
    inputs: [],
    outputs: [],
    source: `block_specs/${category}/${id}.yaml`,
    ...over,
  };
}

const BLOCKS: BlockSummary[] = [
  block('csv.read', 'input', {
    title_ja: 'CSVファイルを読み込む',
    title_en: 'Read a CSV file',
    description_ja: '仕訳CSVや請求書一覧を取り込みます',
    description_en: 'Imports journal CSVs and invoice lists',
    tags: ['tagonly'],
    inputs: [port('path', 'string', true), port('encoding', 'string', false, { default: 'auto' })],
  }),
  block('transforms.filter_rows', 'transforms', {
    title_ja: '条件で行を絞り込む',
    title_en: 'Filter rows by a condition',
    description_ja: '金額が10万円以上の請求書などを抽出',
    description_en: 'Keeps the rows that match a condition',
    inputs: [
      port('rows', 'array', true),
      port('condition', 'string', true),
      port('mode', 'string', true, { enum: ['keep', 'drop'] }),
    ],
  }),
  block('matching.duplicate_invoices', 'matching', {
    title_ja: '重複請求書の検出',
    title_en: 'Find duplicate invoices',
    description_ja: '同じ請求書が二重に計上されていないか調べます',
    description_en: 'Finds invoices booked twice',
  }),
];

// check(query, ids expected to remain, in catalog order)
function check(query: string, expected: string[]) {
  expect(filterBlocks(BLOCKS, query).map((b) => b.id)).toEqual(expected);
}

describe('filterBlocks', () => {
  const cases: [string, string[]][] = [
    ['', ['csv.read', 'transforms.filter_rows', 'matching.duplicate_invoices']],
    ['   ', ['csv.read', 'transforms.filter_rows', 'matching.duplicate_invoices']],
    ['csv.read', ['csv.read']],
    ['CSV', ['csv.read']],
    // Full-width letters fold to ASCII.
    ['ｃｓｖ', ['csv.read']],
    ['絞り込む', ['transforms.filter_rows']],
    ['duplicate', ['matching.duplicate_invoices']],
    ['請求書', ['csv.read', 'transforms.filter_rows', 'matching.duplicate_invoices']],
    ['invoice', ['csv.read', 'matching.duplicate_invoices']],
    // Every term must match (AND), in any field.
    ['請求書 重複', ['matching.duplicate_invoices']],
    ['condition rows', ['transforms.filter_rows']],
    // Tags and categories are not searched, as documented for catalog_list's query.
    ['tagonly', []],
    ['matching', ['matching.duplicate_invoices']],
    ['nothing-like-this', []],
  ];
  it.each(cases)('%j', (query, expected) => check(query, expected));
});

describe('groupByCategory', () => {
  it('sorts categories and blocks', () => {
    const groups = groupByCategory([...BLOCKS, block('csv.aaa', 'input')]);
    expect(groups.map(([category, list]) => [category, list.map((b) => b.id)])).toEqual([
      ['input', ['csv.aaa', 'csv.read']],
      ['matching', ['matching.duplicate_invoices']],
      ['transforms', ['transforms.filter_rows']],
    ]);
  });
});

describe('blockTitle', () => {
  it('falls back to the other language, then to the id', () => {
    expect(blockTitle(BLOCKS[0] as BlockSummary, 'en')).toBe('Read a CSV file');
    expect(blockTitle(block('x.y', 'ai', { title_ja: '日本語だけ' }), 'en')).toBe('日本語だけ');
    expect(blockTitle(block('x.y', 'ai'), 'ja')).toBe('x.y');
  });
});

describe('freshNodeId', () => {
  const cases: [string, string, string][] = [
    ['csv.read', 'graph: []\n', 'csv_read'],
    ['csv.read', 'graph:\n  - id: csv_read\n', 'csv_read_2'],
    ['csv.read', 'graph:\n  - id: csv_read\n  - id: "csv_read_2"\n', 'csv_read_3'],
    ['...', '', 'node'],
  ];
  it.each(cases)('%s in %j → %s', (id, doc, expected) => {
    expect(freshNodeId(id, doc)).toBe(expected);
  });
});

describe('insertNode', () => {
  const csv = BLOCKS[0] as BlockSummary;
  const filter = BLOCKS[1] as BlockSummary;
  // check(block, doc before, doc after, the line the cursor lands on)
  const cases: [string, BlockSummary, string, string, string][] = [
    [
      'appends to an existing graph before the next top-level key',
      csv,
      'id: p\ngraph:\n  - id: a\n    block: x\nui:\n  layout: []\n',
      'id: p\ngraph:\n  - id: a\n    block: x\n  - id: csv_read\n    block: csv.read\n    in:\n      path: null\nui:\n  layout: []\n',
      '  - id: csv_read',
    ],
    [
      'copies column-0 list items',
      csv,
      'graph:\n- id: a\n  block: x',
      'graph:\n- id: a\n  block: x\n- id: csv_read\n  block: csv.read\n  in:\n    path: null\n',
      '- id: csv_read',
    ],
    [
      'replaces an empty flow list',
      filter,
      'id: p\ngraph: []\n',
      'id: p\ngraph:\n  - id: transforms_filter_rows\n    block: transforms.filter_rows\n    in:\n      rows: null\n      condition: null\n      mode: null\n',
      '  - id: transforms_filter_rows',
    ],
    [
      'adds graph: when missing',
      block('ai.x', 'ai'),
      'id: p',
      'id: p\ngraph:\n  - id: ai_x\n    block: ai.x\n    in: {}\n',
      '  - id: ai_x',
    ],
    [
      'keeps comments and blank lines inside the graph',
      csv,
      'graph:\n  # first\n  - id: a\n\n  # trailing comment\nvars: {}\n',
      'graph:\n  # first\n  - id: a\n  - id: csv_read\n    block: csv.read\n    in:\n      path: null\n\n  # trailing comment\nvars: {}\n',
      '  - id: csv_read',
    ],
  ];
  it.each(cases)('%s', (_name, b, before, after, cursorLine) => {
    const { text, cursor } = insertNode(b, before);
    expect(text).toBe(after);
    expect(text.slice(cursor).split('\n')[0]).toBe(cursorLine);
  });
});

describe('wireFrom and insertNode with wiring', () => {
  const read = block('csv.read', 'input', {
    inputs: [port('path', 'string', true)],
    outputs: [port('header', 'array', false), port('rows', 'array', false), port('row_count', 'integer', false)],
  });
  const filter = BLOCKS[1] as BlockSummary;
  const all = [read, filter];

  it('reads the selected node’s table by the alias its out: gives it', () => {
    const doc = 'id: p\ngraph:\n  - id: read\n    block: csv.read\n    in: {path: a.csv}\n    out: {rows: invoices}\n';
    const wiring = wireFrom(doc, 'read', all);
    expect(wiring).toEqual({ text: doc, reference: '${read.invoices}' });
    expect(insertNode(filter, doc, wiring).text).toBe(
      doc + '  - id: transforms_filter_rows\n    block: transforms.filter_rows\n    in:\n      rows: "${read.invoices}"\n      condition: null\n      mode: null\n',
    );
  });

  it('gives the selected node an out: under its block: line when it has none', () => {
    const doc = 'graph:\n  - id: read\n    block: csv.read  # the invoices\n    in:\n      path: a.csv\n';
    const wiring = wireFrom(doc, 'read', all);
    expect(wiring).toEqual({
      text: 'graph:\n  - id: read\n    block: csv.read  # the invoices\n    out: {rows: rows}\n    in:\n      path: a.csv\n',
      reference: '${read.rows}',
    });
  });

  it('wires nothing it cannot wire safely', () => {
    // No such node; a block without a table output; a flow-style node; an out: without the
    // table; text that does not parse.
    expect(wireFrom('graph:\n  - id: a\n    block: csv.read\n', 'b', all)).toBeNull();
    expect(wireFrom('graph:\n  - id: a\n    block: unknown.block\n', 'a', all)).toBeNull();
    expect(wireFrom('graph:\n  - {id: a, block: csv.read}\n', 'a', all)).toBeNull();
    expect(wireFrom('graph:\n  - id: a\n    block: csv.read\n    out: {row_count: n}\n', 'a', all)).toBeNull();
    expect(wireFrom('graph:\n  - id: a\n    block: [\n', 'a', all)).toBeNull();
  });

  it('leaves the upstream node alone when the new block reads no table', () => {
    const doc = 'graph:\n  - id: read\n    block: csv.read\n';
    const wiring = wireFrom(doc, 'read', all);
    expect(wiring).not.toBeNull();
    expect(insertNode(read, doc, wiring).text).toBe(doc + '  - id: csv_read\n    block: csv.read\n    in:\n      path: null\n');
  });
});
