// Catalog helpers: the search filter, grouping by category and the node skeleton a block
// inserts into the editor. Pure functions, tested without a DOM.

import { isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { BlockSummary, Lang, Port } from '../../api/types';

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

// A required input without a default is the person's to give: `null`, which the validator
// reports as missing and the questions panel asks for (typed, with the port's choices),
// rather than an empty value that validates and then runs wrong.
function placeholder(port: Port): unknown {
  return port.default ?? null;
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

/** The port of `ports` that carries a table: `rows` when there is one, else the first list. */
function tablePort(ports: readonly Port[], requiredOnly: boolean): Port | undefined {
  const tables = ports.filter((port) => port.type.split('|')[0]?.trim() === 'array' && (!requiredOnly || port.required));
  return tables.find((port) => port.name === 'rows') ?? tables[0];
}

function nodeLines(block: BlockSummary, id: string, indent: string, reference: string | null): string[] {
  const required = block.inputs.filter((port) => port.required);
  // The table the node reads comes from the upstream node's output when one is wired in.
  const main = reference !== null ? tablePort(block.inputs, true) : undefined;
  const lines = [`${indent}- id: ${id}`, `${indent}  block: ${block.id}`];
  if (required.length === 0) {
    lines.push(`${indent}  in: {}`);
  } else {
    lines.push(`${indent}  in:`);
    for (const port of required) {
      const value = port === main ? reference : placeholder(port);
      lines.push(`${indent}    ${port.name}: ${yamlValue(value)}`);
    }
  }
  return lines;
}

/** A new node's main input wired to an existing node's table: the reference, and the text. */
export interface Wiring {
  /** `doc`, with an `out:` added to the upstream node when its table had no alias yet. */
  text: string;
  /** `${node.alias}` of the upstream node's table output. */
  reference: string;
}

/**
 * How a node added after `nodeId` (the node selected in the editor or the graph) reads that
 * node's table: by the alias its `out:` gives the table output of its block, or — when the
 * node has no `out:` at all — by one added under its `block:` line (`out: {rows: rows}`).
 * `null` when there is nothing to wire: no such top-level node, a block without a table
 * output, a flow-style node, an `out:` that leaves the table out, or text that does not parse.
 */
export function wireFrom(doc: string, nodeId: string, blocks: readonly BlockSummary[]): Wiring | null {
  const parsed = parseDocument(doc);
  if (parsed.errors.length > 0) return null;
  const graph = parsed.get('graph', true);
  if (!isSeq(graph)) return null;
  const node = graph.items.find((item) => isMap(item) && item.get('id') === nodeId);
  if (!isMap(node) || node.flow === true) return null;
  const spec = blocks.find((b) => b.id === node.get('block'));
  const port = spec !== undefined ? tablePort(spec.outputs, false) : undefined;
  if (port === undefined) return null;
  const out = node.get('out', true);
  if (isMap(out)) {
    const alias = out.get(port.name);
    return typeof alias === 'string' && alias !== '' ? { text: doc, reference: `\${${nodeId}.${alias}}` } : null;
  }
  if (out !== undefined) return null;
  const blockPair = node.items.find((pair) => isScalar(pair.key) && pair.key.value === 'block');
  const keyRange = isScalar(blockPair?.key) ? blockPair.key.range : null;
  const valueRange = isScalar(blockPair?.value) ? blockPair.value.range : null;
  if (keyRange == null || valueRange == null) return null;
  const column = keyRange[0] - (doc.lastIndexOf('\n', keyRange[0] - 1) + 1);
  const lineEnd = doc.indexOf('\n', valueRange[1]);
  const at = lineEnd < 0 ? doc.length : lineEnd;
  const line = `\n${' '.repeat(column)}out: {${port.name}: ${port.name}}`;
  return { text: doc.slice(0, at) + line + doc.slice(at), reference: `\${${nodeId}.${port.name}}` };
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
 * inputs filled with their defaults, else `null` (asked as questions). The node copies the indentation of the
 * existing items; a document without `graph:` gains one. With `wiring` (`wireFrom`), the
 * block's table input reads the upstream node's table instead of starting empty. This is text
 * editing, not a YAML round-trip, so comments and formatting the person wrote stay untouched.
 */
export function insertNode(block: BlockSummary, original: string, wiring: Wiring | null = null): Insertion {
  // Only a block that reads a table is wired (and only then does the upstream node gain an out:).
  const wired = wiring !== null && tablePort(block.inputs, true) !== undefined ? wiring : null;
  const doc = wired?.text ?? original;
  const reference = wired?.reference ?? null;
  const id = freshNodeId(block.id, doc);
  const lines = doc.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const graphIndex = lines.findIndex((line) => /^graph:\s*(\[\s*\])?\s*(#.*)?$/u.test(line));
  if (graphIndex < 0) {
    const at = lines.length + 1;
    return joinAt([...lines, 'graph:', ...nodeLines(block, id, '  ', reference)], at);
  }
  if (/^graph:\s*\[/u.test(lines[graphIndex] ?? '')) {
    lines.splice(graphIndex, 1, 'graph:', ...nodeLines(block, id, '  ', reference));
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
  lines.splice(last + 1, 0, ...nodeLines(block, id, itemIndent ?? '  ', reference));
  return joinAt(lines, last + 1);
}
