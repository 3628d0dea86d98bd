// The spreadsheet-style view of a workbook patch diff: A1 helpers and the per-sheet cell grid
// model the dry-run panel draws. Pure functions, tested without a DOM.

import type { CellValue, OpKind, PatchDiffItem, PatchRequestInput, PatchResponse, PatchValue, SheetContext } from '../../api/types';

/** Excel's limits. */
export const MAX_ROW = 1_048_576;
export const MAX_COL = 16_384;

/** The column letters of a 1-based column number (1 → A, 27 → AA); '' when out of range. */
export function columnName(col: number): string {
  if (!Number.isInteger(col) || col < 1 || col > MAX_COL) return '';
  let n = col;
  let name = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    name = String.fromCharCode(65 + rem) + name;
    n = Math.floor((n - 1) / 26);
  }
  return name;
}

/** The 1-based number of column letters (case-insensitive); null when not a column. */
export function columnNumber(name: string): number | null {
  if (!/^[A-Za-z]{1,3}$/.test(name)) return null;
  let n = 0;
  for (const ch of name.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n <= MAX_COL ? n : null;
}

export interface CellPosition {
  row: number;
  col: number;
}

/** Parses `B2`, `$B$2` or `b2` (a sheet prefix is not accepted); null when not a cell. */
export function parseCell(a1: string): CellPosition | null {
  const match = /^\$?([A-Za-z]{1,3})\$?([1-9][0-9]{0,6})$/.exec(a1.trim());
  if (match === null) return null;
  const col = columnNumber(match[1] ?? '');
  const row = Number(match[2]);
  if (col === null || row > MAX_ROW) return null;
  return { row, col };
}

/** The A1 name of a cell. */
export function cellName(position: CellPosition): string {
  return `${columnName(position.col)}${position.row}`;
}

/** How a value shows in a cell or a tooltip: formulas as written, booleans as Excel does. */
export function formatCellValue(value: CellValue | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return String(value);
}

/**
 * A formula's computed value as a person reads it: numbers with thousands separators (the cell's
 * own number format is not known here), text and truth values as they are.
 */
export function formatComputed(value: CellValue | null | undefined): string {
  if (typeof value === 'number') return value.toLocaleString('ja-JP', { maximumFractionDigits: 10 });
  return formatCellValue(value);
}

export function formatPatchValue(value: PatchValue | null | undefined): string {
  return value === null || value === undefined ? '' : formatCellValue(value.value);
}

function isEmpty(value: PatchValue | null | undefined): boolean {
  return value === null || value === undefined || value.value === null || value.value === '';
}

function sameValue(a: PatchValue | null | undefined, b: PatchValue | null | undefined): boolean {
  if (isEmpty(a) && isEmpty(b)) return true;
  return (a?.kind ?? null) === (b?.kind ?? null) && (a?.value ?? null) === (b?.value ?? null);
}

/** What happened to a cell: written into an empty cell, cleared, changed, or skipped. */
export type CellChange = 'added' | 'removed' | 'changed' | 'unchanged' | 'skipped';

export interface GridCell {
  a1: string;
  row: number;
  col: number;
  /** The cell before the first op that touched it, and after the last. */
  before: PatchValue | null;
  after: PatchValue | null;
  change: CellChange;
  /** The ops that touched the cell, in order. */
  ops: { index: number; op: OpKind; status: 'applied' | 'skipped' }[];
  /** When `before` is a formula: the value the workbook cached for it (from the context). */
  beforeCached?: CellValue | null;
  /** When `after` is a formula: what it comes to in the patched workbook (the check's engine). */
  afterComputed?: CellValue | null;
}

/** A cell no op touched, drawn as the workbook holds it: its value, and its formula if any. */
export interface NeighbourCell {
  a1: string;
  /** The value (for a formula, the value the workbook's writer cached; null when none). */
  value: CellValue | null;
  formula: string | null;
}

export interface SheetGrid {
  sheet: string;
  /** `add_sheet` or `copy_sheet` / `delete_sheet` in this patch. */
  sheetChange: 'added' | 'deleted' | null;
  /** The window drawn: consecutive rows and columns around the changed cells. */
  rows: number[];
  cols: number[];
  /** Changed (or skipped) cells by A1 name. */
  cells: Map<string, GridCell>;
  /** The untouched cells of the window that hold something, by A1 name (header labels,
   * neighbouring amounts, formulas with their cached values). */
  neighbours: Map<string, NeighbourCell>;
  /** Cells outside the drawn window (listed instead of drawn). */
  overflow: GridCell[];
}

export interface GridOptions {
  /** Unchanged rows and columns shown around the changes. */
  context: number;
  maxRows: number;
  maxCols: number;
}

/** The server reads the same window around the changes (keiri-api `GRID_CONTEXT`, `GRID_MAX_ROWS`, `GRID_MAX_COLS`). */
export const DEFAULT_GRID: GridOptions = { context: 1, maxRows: 40, maxCols: 16 };

function changeOf(cell: Omit<GridCell, 'change'>): CellChange {
  if (cell.ops.every((op) => op.status === 'skipped')) return 'skipped';
  if (sameValue(cell.before, cell.after)) return 'unchanged';
  if (isEmpty(cell.before)) return 'added';
  if (isEmpty(cell.after)) return 'removed';
  return 'changed';
}

function range(from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i += 1) out.push(i);
  return out;
}

/**
 * One grid per sheet the diff touches, in the order sheets first appear. Several ops on one
 * cell merge into one cell (first before, last applied after). The window spans the changed
 * cells plus `context` rows and columns, capped at `maxRows` × `maxCols` from the first change;
 * what does not fit is in `overflow`. `workbook` is the server's reading of the cells around
 * the changes (the same window: keiri-api `grid_context`): the untouched ones become
 * `neighbours`, and a changed cell whose `before` is a formula gets the value cached for it.
 */
export function buildSheetGrids(
  diff: readonly PatchDiffItem[],
  workbook: readonly SheetContext[] = [],
  options: GridOptions = DEFAULT_GRID,
): SheetGrid[] {
  const sheets = new Map<string, { sheetChange: SheetGrid['sheetChange']; cells: Map<string, Omit<GridCell, 'change'>> }>();
  const sheetOf = (name: string) => {
    let entry = sheets.get(name);
    if (entry === undefined) {
      entry = { sheetChange: null, cells: new Map() };
      sheets.set(name, entry);
    }
    return entry;
  };
  for (const item of diff) {
    // A style or dimension change is listed apart (designChanges): it is not a cell's value.
    if (isDesignChange(item)) continue;
    const entry = sheetOf(item.sheet);
    if (item.cell === null) {
      if (item.status === 'applied' && (item.op === 'add_sheet' || item.op === 'copy_sheet')) entry.sheetChange = 'added';
      if (item.status === 'applied' && item.op === 'delete_sheet') entry.sheetChange = 'deleted';
      continue;
    }
    const position = parseCell(item.cell);
    if (position === null) continue;
    const a1 = cellName(position);
    const op = { index: item.op_index, op: item.op, status: item.status };
    const existing = entry.cells.get(a1);
    if (existing === undefined) {
      entry.cells.set(a1, {
        a1,
        ...position,
        before: item.before,
        after: item.status === 'applied' ? item.after : item.before,
        ops: [op],
        afterComputed: item.status === 'applied' ? (item.computed ?? null) : null,
      });
    } else {
      existing.ops.push(op);
      if (item.status === 'applied') {
        existing.after = item.after;
        existing.afterComputed = item.computed ?? null;
      }
    }
  }
  return [...sheets.entries()].map(([sheet, entry]) => {
    const known = new Map<string, NeighbourCell>();
    for (const cell of workbook.filter((context) => context.sheet === sheet).flatMap((context) => context.cells)) {
      const position = parseCell(cell.cell);
      if (position !== null) known.set(cellName(position), { a1: cellName(position), value: cell.value, formula: cell.formula });
    }
    const cells = [...entry.cells.values()].map((cell): GridCell => {
      const cached = cell.before?.kind === 'formula' ? known.get(cell.a1)?.value : undefined;
      return { ...cell, change: changeOf(cell), ...(cached !== undefined ? { beforeCached: cached } : {}) };
    });
    if (cells.length === 0) return { sheet, sheetChange: entry.sheetChange, rows: [], cols: [], cells: new Map(), neighbours: new Map(), overflow: [] };
    const minRow = Math.max(1, Math.min(...cells.map((c) => c.row)) - options.context);
    const minCol = Math.max(1, Math.min(...cells.map((c) => c.col)) - options.context);
    const maxRow = Math.min(MAX_ROW, Math.max(...cells.map((c) => c.row)) + options.context, minRow + options.maxRows - 1);
    const maxCol = Math.min(MAX_COL, Math.max(...cells.map((c) => c.col)) + options.context, minCol + options.maxCols - 1);
    const inside = new Map<string, GridCell>();
    const overflow: GridCell[] = [];
    for (const cell of cells) {
      if (cell.row <= maxRow && cell.col <= maxCol) inside.set(cell.a1, cell);
      else overflow.push(cell);
    }
    overflow.sort((a, b) => a.row - b.row || a.col - b.col);
    const neighbours = new Map<string, NeighbourCell>();
    for (const [a1, cell] of known) {
      const position = parseCell(a1);
      if (position === null || inside.has(a1) || entry.cells.has(a1)) continue;
      if (position.row < minRow || position.row > maxRow || position.col < minCol || position.col > maxCol) continue;
      if ((cell.value === null || cell.value === '') && cell.formula === null) continue;
      neighbours.set(a1, cell);
    }
    return {
      sheet,
      sheetChange: entry.sheetChange,
      rows: range(minRow, maxRow),
      cols: range(minCol, maxCol),
      cells: inside,
      neighbours,
      overflow,
    };
  });
}

/**
 * The diff items of an `excel.patch_workbook` output as a run passes them on (to
 * `ui.diff_viewer`): each is `{sheet, cell, before, after}` with plain values, plus `detail`,
 * keiri-xlsx's own item. The detail is used when present; a plain item (from an older run or
 * another block) is read as a value or formula write that was applied.
 */
export function diffItemsOf(raw: readonly unknown[]): PatchDiffItem[] {
  const out: PatchDiffItem[] = [];
  for (const entry of raw) {
    if (typeof entry !== 'object' || entry === null) continue;
    const item = entry as Record<string, unknown>;
    const detail = item.detail as Partial<PatchDiffItem> | undefined;
    if (typeof detail === 'object' && detail !== null && typeof detail.op === 'string' && typeof detail.sheet === 'string') {
      out.push({
        op: detail.op,
        op_index: typeof detail.op_index === 'number' ? detail.op_index : out.length,
        sheet: detail.sheet,
        cell: typeof detail.cell === 'string' ? detail.cell : null,
        before: detail.before ?? null,
        after: detail.after ?? null,
        status: detail.status === 'skipped' ? 'skipped' : 'applied',
      });
      continue;
    }
    if (typeof item.sheet !== 'string') continue;
    const plain = (value: unknown): PatchValue | null => {
      if (value === null || value === undefined) return null;
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return null;
      return { kind: typeof value === 'string' && value.startsWith('=') ? 'formula' : 'value', value };
    };
    const after = plain(item.after);
    out.push({
      op: after?.kind === 'formula' ? 'set_formula' : 'set_value',
      op_index: out.length,
      sheet: item.sheet,
      cell: typeof item.cell === 'string' ? item.cell : null,
      before: plain(item.before),
      after,
      status: 'applied',
    });
  }
  return out;
}

/** Whether a diff item is a styling or structure change (a summary, not a cell value). */
export function isDesignChange(item: PatchDiffItem): boolean {
  const kind = item.after?.kind ?? item.before?.kind;
  return kind === 'style' || kind === 'dimension';
}

/** One styling or structure change of a patch, as the preview lists it. */
export interface DesignChange {
  sheet: string;
  /** The cell or range it applies to; null for a whole-sheet change (column widths). */
  range: string | null;
  op: PatchDiffItem['op'];
  /** keiri-xlsx's summary, e.g. `bold=true`, `width=12`, `merged=A1:C1`. */
  summary: string;
  status: PatchDiffItem['status'];
}

/** The styling and structure changes of a diff, in op order. */
export function designChanges(diff: readonly PatchDiffItem[]): DesignChange[] {
  return diff.filter(isDesignChange).map((item) => {
    const value = item.after?.value ?? item.before?.value ?? '';
    return { sheet: item.sheet, range: item.cell, op: item.op, summary: String(value), status: item.status };
  });
}

/** The diff items whose op did not change anything (a `*_if` whose cell did not match). */
export function skippedItems(diff: readonly PatchDiffItem[]): PatchDiffItem[] {
  return diff.filter((item) => item.status === 'skipped');
}

/** The file name part of a path (either separator). */
export function baseName(path: string): string {
  const parts = path.split(/[\\/]/u);
  return parts[parts.length - 1] ?? path;
}

/**
 * The request that undoes an applied patch: the inverse ops, applied to the file the patch
 * saved and written back over it (the original workbook was never changed, so that file is
 * the one to restore). It asks for inverse ops again, so the undo can itself be undone.
 */
export function undoRequest(applied: PatchResponse): PatchRequestInput {
  return {
    xlsx_path: applied.out_path,
    ops: applied.inverse_ops,
    out_name: baseName(applied.out_path),
    on_conflict: 'overwrite',
    return_inverse_ops: true,
  };
}
