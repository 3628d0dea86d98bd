// A table a person answers about in a run (ui.table_review's rows, the details of a
// confirmation or an approval) as they read it: nested objects spread into columns, headers and
// codes in words from the labels the block sent (crates/keiri-run/src/codes.rs), amounts with
// separators, no JSON in a cell.

import type { Lang } from '../../api/types';

export type Row = Record<string, unknown>;

interface Both {
  ja: string;
  en: string;
}

/** What the block sent beside the rows (`labels`); any part may be missing. */
export interface QuestionLabels {
  columns: Record<string, Both>;
  values: Record<string, Record<string, Both>>;
  amounts: string[];
}

/** A column of the shown table: its path in the row (`["row", "po_no"]` for a nested value). */
export interface Column {
  key: string;
  path: string[];
  /** Only a top-level column can be edited (the answer names the row's own field). */
  topLevel: boolean;
}

function isRecord(value: unknown): value is Row {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function both(value: unknown): Both | null {
  return isRecord(value) && typeof value.ja === 'string' && typeof value.en === 'string' ? { ja: value.ja, en: value.en } : null;
}

/** The labels a question carries, checked; missing or malformed parts are empty. */
export function readLabels(value: unknown): QuestionLabels {
  const labels: QuestionLabels = { columns: {}, values: {}, amounts: [] };
  if (!isRecord(value)) return labels;
  if (isRecord(value.columns)) {
    for (const [column, label] of Object.entries(value.columns)) {
      const checked = both(label);
      if (checked !== null) labels.columns[column] = checked;
    }
  }
  if (isRecord(value.values)) {
    for (const [column, codes] of Object.entries(value.values)) {
      if (!isRecord(codes)) continue;
      const out: Record<string, Both> = {};
      for (const [code, label] of Object.entries(codes)) {
        const checked = both(label);
        if (checked !== null) out[code] = checked;
      }
      labels.values[column] = out;
    }
  }
  if (Array.isArray(value.amounts)) labels.amounts = value.amounts.filter((a): a is string => typeof a === 'string');
  return labels;
}

/**
 * The columns to show: the given ones (or every row's, in first-appearance order), a column
 * holding objects replaced by one column per key inside them.
 */
export function tableColumns(rows: readonly Row[], given: unknown): Column[] {
  const names: string[] = [];
  if (Array.isArray(given) && given.length > 0) names.push(...given.map(String));
  else for (const row of rows) for (const key of Object.keys(row)) if (!names.includes(key)) names.push(key);
  const columns: Column[] = [];
  for (const name of names) {
    const inner: string[] = [];
    for (const row of rows) {
      const value = row[name];
      if (isRecord(value)) for (const key of Object.keys(value)) if (!inner.includes(key)) inner.push(key);
    }
    if (inner.length === 0) columns.push({ key: name, path: [name], topLevel: true });
    else for (const key of inner) columns.push({ key: `${name}.${key}`, path: [name, key], topLevel: false });
  }
  return columns;
}

export function valueAt(row: Row, column: Column): unknown {
  let value: unknown = row;
  for (const part of column.path) value = isRecord(value) ? value[part] : undefined;
  return value;
}

/** A column's header: the catalog's name for it, else its own (a nested one with its parent). */
export function columnHeader(column: Column, labels: QuestionLabels, lang: Lang): string {
  const name = column.path[column.path.length - 1] ?? column.key;
  return labels.columns[name]?.[lang] ?? (column.topLevel ? column.key : name);
}

/** A yen amount as people write it: 268,400 (negative -5,500). */
export function formatAmount(value: number): string {
  return value.toLocaleString('ja-JP', { maximumFractionDigits: 4 });
}

/** A cell as a person reads it. */
export function cellDisplay(value: unknown, column: Column, labels: QuestionLabels, lang: Lang): string {
  if (value === null || value === undefined) return '';
  const name = column.path[column.path.length - 1] ?? column.key;
  if (typeof value === 'string') return labels.values[name]?.[value]?.[lang] ?? value;
  if (typeof value === 'number') return labels.amounts.includes(name) ? formatAmount(value) : String(value);
  if (typeof value === 'boolean') return lang === 'ja' ? (value ? 'はい' : 'いいえ') : value ? 'yes' : 'no';
  if (Array.isArray(value)) {
    const scalars = value.every((item) => item === null || typeof item !== 'object');
    if (scalars) return value.map((item) => (item === null ? '' : String(item))).join(lang === 'ja' ? '、' : ', ');
    return lang === 'ja' ? `${value.length} 件` : `${value.length} items`;
  }
  return JSON.stringify(value);
}
