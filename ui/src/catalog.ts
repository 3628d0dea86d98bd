// Catalog helpers: the search filter, grouping by category and the node skeleton a block
// inserts into the editor. Pure functions, tested without a DOM.

import type { BlockSummary, Lang, Port } from './api/types';

// NFKC folds full-width letters and digits (ＣＳＶ → CSV) and half-width katakana, which
// Japanese users type interchangeably; lower-casing makes the search case-insensitive.
function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/**
 * The blocks whose id, Japanese or English title or Japanese or English description contain
 * every whitespace-separated term of `query` (case- and width-insensitive). An empty query
 * keeps every block. The order of `blocks` is kept.
 */
export function filterBlocks(blocks: readonly BlockSummary[], query: string): BlockSummary[] {
  const terms = fold(query).split(/\s+/u).filter((term) => term !== '');
  if (terms.length === 0) return [...blocks];
  return blocks.filter((block) => {
    const haystack = fold(
      [block.id, block.title_ja, block.title_en, block.description_ja, block.description_en].join('\n'),
    );
    return terms.every((term) => haystack.includes(term));
  });
}

/** Blocks grouped by category, categories and blocks sorted by name. */
export function groupByCategory(blocks: readonly BlockSummary[]): [string, BlockSummary[]][] {
  const groups = new Map<string, BlockSummary[]>();
  for (const block of blocks) {
    const list = groups.get(block.category) ?? [];
    list.push(block);
    groups.set(block.category, list);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([category, list]) => [category, [...list].sort((a, b) => a.id.localeCompare(b.id))]);
}

/** The title to show in `lang`, falling back to the other language and then to the id. */
export function blockTitle(block: BlockSummary, lang: Lang): string {
  const [first, second] = lang === 'ja' ? [block.title_ja, block.title_en] : [block.title_en, block.title_ja];
  return first || second || block.id;
}

/**
 * What a graph node is called: the block's title in `lang` (then the other language), else the
 * first sentence of its description, else null so the caller shows the node id. A spec with
 * only an id gets no made-up title.
 */
export function nodeTitle(block: BlockSummary | undefined, lang: Lang): string | null {
  if (block === undefined) return null;
  const [first, second] = lang === 'ja' ? [block.title_ja, block.title_en] : [block.title_en, block.title_ja];
  const title = (first || second || '').trim();
  if (title !== '') return title;
  const sentence = (blockDescription(block, lang).split(/(?<=[。.])\s*/u)[0] ?? '').trim();
  return sentence !== '' ? sentence : null;
}

export function blockDescription(block: BlockSummary, lang: Lang): string {
  const [first, second] =
    lang === 'ja' ? [block.description_ja, block.description_en] : [block.description_en, block.description_ja];
  return (first || second || '').trim();
}

export function portDescription(port: Port, lang: Lang): string {
  const [first, second] = lang === 'ja' ? [port.description, port.description_en] : [port.description_en, port.description];
  return (first || second || '').trim();
}

// A YAML flow scalar for a default or placeholder value. JSON is valid YAML for every value
// JSON can express, which is all a block default can be.
function yamlValue(value: unknown): string {
  return JSON.stringify(value) ?? '""';
}

function placeholder(port: Port): unknown {
  if (port.default !== null && port.default !== undefined) return port.default;
  if (Array.isArray(port.enum) && port.enum.length > 0) return port.enum[0];
  const first = port.type.split('|')[0]?.trim() ?? 'string';
  switch (first) {
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return '';
  }
}

/** A node id for `blockId` that no `id:` line of `doc` uses yet (`csv_read`, `csv_read_2`, …). */
export function freshNodeId(blockId: string, doc: string): string {
  const base = blockId.replace(/[^A-Za-z0-9_]+/gu, '_').replace(/^_+|_+$/gu, '') || 'node';
  const used = new Set([...doc.matchAll(/^\s*-?\s*id:\s*["']?([^"'\s#]+)/gmu)].map((m) => m[1]));
  if (!used.has(base)) return base;
  let n = 2;
  while (used.has(`${base}_${n}`)) n += 1;
  return `${base}_${n}`;
}

function nodeLines(block: BlockSummary, id: string, indent: string): string[] {
  const required = block.inputs.filter((port) => port.required);
  const lines = [`${indent}- id: ${id}`, `${indent}  block: ${block.id}`];
  if (required.length === 0) {
    lines.push(`${indent}  in: {}`);
  } else {
    lines.push(`${indent}  in:`);
    for (const port of required) lines.push(`${indent}    ${port.name}: ${yamlValue(placeholder(port))}`);
  }
  return lines;
}

/** A document with a node inserted, and the offset of the new node's first line. */
export interface Insertion {
  text: string;
  cursor: number;
}

function joinAt(lines: string[], at: number): Insertion {
  const text = [...lines, ''].join('\n');
  const cursor = lines.slice(0, at).reduce((sum, line) => sum + line.length + 1, 0);
  return { text, cursor };
}

/**
 * `doc` with a node for `block` added at the end of its `graph:` list, the block's required
 * inputs filled with defaults or typed placeholders. The node copies the indentation of the
 * existing items; a document without `graph:` gains one. This is text editing, not a YAML
 * round-trip, so comments and formatting the person wrote stay untouched.
 */
export function insertNode(block: BlockSummary, doc: string): Insertion {
  const id = freshNodeId(block.id, doc);
  const lines = doc.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const graphIndex = lines.findIndex((line) => /^graph:\s*(\[\s*\])?\s*(#.*)?$/u.test(line));
  if (graphIndex < 0) {
    const at = lines.length + 1;
    return joinAt([...lines, 'graph:', ...nodeLines(block, id, '  ')], at);
  }
  if (/^graph:\s*\[/u.test(lines[graphIndex] ?? '')) {
    lines.splice(graphIndex, 1, 'graph:', ...nodeLines(block, id, '  '));
    return joinAt(lines, graphIndex + 1);
  }
  let itemIndent: string | null = null;
  let last = graphIndex;
  for (let j = graphIndex + 1; j < lines.length; j += 1) {
    const line = lines[j] ?? '';
    const content = line.trimStart();
    if (content === '' || content.startsWith('#')) continue;
    const indent = line.slice(0, line.length - content.length);
    // A top-level key ends the graph; a list item may sit at column 0 under `graph:`.
    if (indent === '' && !content.startsWith('-')) break;
    if (itemIndent === null && content.startsWith('-')) itemIndent = indent;
    last = j;
  }
  lines.splice(last + 1, 0, ...nodeLines(block, id, itemIndent ?? '  '));
  return joinAt(lines, last + 1);
}
