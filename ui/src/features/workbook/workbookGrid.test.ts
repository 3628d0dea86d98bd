import { describe, expect, it } from 'vitest';
import type { PatchDiffItem, PatchValue } from '../../api/types';
import {
  baseName,
  buildSheetGrids,
  cellName,
  columnName,
  columnNumber,
  designChanges,
  diffItemsOf,
  formatCellValue,
  formatPatchValue,
  parseCell,
  skippedItems,
  undoRequest,
} from './workbookGrid';

const value = (v: PatchValue['value']): PatchValue => ({ kind: 'value', value: v });
const formula = (f: string): PatchValue => ({ kind: 'formula', value: f });

function item(over: Partial<PatchDiffItem>): PatchDiffItem {
  return { op: 'set_value', op_index: 0, sheet: 'Sheet1', cell: 'A1', before: null, after: value(1), status: 'applied', ...over };
}

describe('A1 helpers', () => {
  it.each([
    [1, 'A'],
    [26, 'Z'],
    [27, 'AA'],
    [52, 'AZ'],
    [53, 'BA'],
    [702, 'ZZ'],
    [703, 'AAA'],
    [16384, 'XFD'],
  ])('column %i is %s and back', (n, name) => {
    expect(columnName(n)).toBe(name);
    expect(columnNumber(name)).toBe(n);
    expect(columnNumber(name.toLowerCase())).toBe(n);
  });

  it('rejects what is not a column', () => {
    expect(columnName(0)).toBe('');
    expect(columnName(16385)).toBe('');
    expect(columnName(1.5)).toBe('');
    expect(columnNumber('XFE')).toBeNull();
    expect(columnNumber('AAAA')).toBeNull();
    expect(columnNumber('A1')).toBeNull();
    expect(columnNumber('')).toBeNull();
  });

  it('round-trips every column', () => {
    for (let n = 1; n <= 16384; n += 1) expect(columnNumber(columnName(n))).toBe(n);
  });

  it.each([
    ['B2', { row: 2, col: 2 }],
    ['$C$10', { row: 10, col: 3 }],
    ['aa1', { row: 1, col: 27 }],
    [' D4 ', { row: 4, col: 4 }],
    ['XFD1048576', { row: 1048576, col: 16384 }],
  ])('parses %s', (a1, want) => {
    expect(parseCell(a1)).toEqual(want);
    expect(cellName(want)).toBe(a1.trim().replace(/\$/g, '').toUpperCase());
  });

  it.each(['A0', 'A1048577', 'XFE1', '1A', 'A', 'Sheet1!A1', 'A1:B2', ''])('refuses %j', (a1) => {
    expect(parseCell(a1)).toBeNull();
  });
});

describe('formatting', () => {
  it('shows values as Excel does', () => {
    expect(formatCellValue(null)).toBe('');
    expect(formatCellValue(true)).toBe('TRUE');
    expect(formatCellValue(false)).toBe('FALSE');
    expect(formatCellValue(1234.5)).toBe('1234.5');
    expect(formatCellValue('確認済')).toBe('確認済');
    expect(formatPatchValue(formula('=SUM(A1:A3)'))).toBe('=SUM(A1:A3)');
    expect(formatPatchValue(null)).toBe('');
  });
});

describe('buildSheetGrids', () => {
  it('draws a window around the changed cells with one row and column of context', () => {
    const [grid] = buildSheetGrids([
      item({ cell: 'C3', before: value(1), after: value(2) }),
      item({ cell: 'D5', op: 'set_formula', before: null, after: formula('=C3*2'), op_index: 1 }),
    ]);
    expect(grid?.sheet).toBe('Sheet1');
    expect(grid?.rows).toEqual([2, 3, 4, 5, 6]);
    expect(grid?.cols).toEqual([2, 3, 4, 5]);
    expect(grid?.cells.get('C3')).toMatchObject({ change: 'changed', before: value(1), after: value(2) });
    expect(grid?.cells.get('D5')).toMatchObject({ change: 'added', after: formula('=C3*2') });
    expect(grid?.overflow).toEqual([]);
  });

  it('does not go above row 1 or left of column A', () => {
    const [grid] = buildSheetGrids([item({ cell: 'A1' })]);
    expect(grid?.rows).toEqual([1, 2]);
    expect(grid?.cols).toEqual([1, 2]);
  });

  it('classifies cleared, unchanged and skipped cells', () => {
    const [grid] = buildSheetGrids([
      item({ cell: 'A1', before: value('x'), after: value(null) }),
      item({ cell: 'A2', before: value(3), after: value(3) }),
      item({ cell: 'A3', op: 'set_value_if', before: value(1), after: value(9), status: 'skipped' }),
      item({ cell: 'A4', before: value(''), after: null }),
    ]);
    expect(grid?.cells.get('A1')?.change).toBe('removed');
    expect(grid?.cells.get('A2')?.change).toBe('unchanged');
    expect(grid?.cells.get('A3')?.change).toBe('skipped');
    expect(grid?.cells.get('A3')?.after).toEqual(value(1));
    expect(grid?.cells.get('A4')?.change).toBe('unchanged');
  });

  it('merges several ops on one cell: first before, last applied after', () => {
    const [grid] = buildSheetGrids([
      item({ cell: 'b2', before: value(1), after: value(2), op_index: 0 }),
      item({ cell: 'B2', before: value(2), after: value(3), op_index: 1 }),
      item({ cell: '$B$2', op: 'set_value_if', before: value(3), after: value(4), op_index: 2, status: 'skipped' }),
    ]);
    const cell = grid?.cells.get('B2');
    expect(cell?.before).toEqual(value(1));
    expect(cell?.after).toEqual(value(3));
    expect(cell?.ops.map((o) => [o.index, o.status])).toEqual([
      [0, 'applied'],
      [1, 'applied'],
      [2, 'skipped'],
    ]);
    expect(cell?.change).toBe('changed');
  });

  it('groups by sheet in first-seen order and records sheet changes', () => {
    const grids = buildSheetGrids([
      item({ sheet: '集計', cell: 'A1' }),
      item({ sheet: '新規', cell: null, op: 'add_sheet', before: null, after: { kind: 'sheet', value: '新規' } }),
      item({ sheet: '新規', cell: 'B1', op_index: 2 }),
      item({ sheet: '集計', cell: 'A2' }),
      item({ sheet: '古い', cell: null, op: 'delete_sheet', before: { kind: 'sheet', value: '古い' }, after: null }),
    ]);
    expect(grids.map((g) => [g.sheet, g.sheetChange, g.cells.size])).toEqual([
      ['集計', null, 2],
      ['新規', 'added', 1],
      ['古い', 'deleted', 0],
    ]);
    expect(grids[2]?.rows).toEqual([]);
  });

  it('shows a copied sheet as added, with the cells written into the copy', () => {
    const grids = buildSheetGrids([
      item({ sheet: '2025.3', cell: null, op: 'copy_sheet', before: null, after: { kind: 'sheet', value: '2025.3' } }),
      item({ sheet: '2025.3', cell: 'D2', op: 'set_value', op_index: 1 }),
      item({ sheet: '2025.3', cell: 'A11', op: 'append_rows', op_index: 3 }),
    ]);
    expect(grids.map((g) => [g.sheet, g.sheetChange, g.cells.size])).toEqual([['2025.3', 'added', 2]]);
  });

  it('caps the window and lists the rest as overflow', () => {
    const grids = buildSheetGrids(
      [item({ cell: 'A1' }), item({ cell: 'A500' }), item({ cell: 'Z2' }), item({ cell: 'B3' })],
      [],
      { context: 1, maxRows: 10, maxCols: 5 },
    );
    const grid = grids[0];
    expect(grid?.rows).toHaveLength(10);
    expect(grid?.cols).toEqual([1, 2, 3, 4, 5]);
    expect([...(grid?.cells.keys() ?? [])]).toEqual(['A1', 'B3']);
    expect(grid?.overflow.map((c) => c.a1)).toEqual(['Z2', 'A500']);
  });

  it('draws the untouched cells of the window as the workbook holds them, formulas with their cached values', () => {
    const [grid] = buildSheetGrids(
      [item({ cell: 'B3', before: value(400), after: value(450) }), item({ cell: 'C4', before: { kind: 'formula', value: '=B4*2' }, after: value(0) })],
      [
        {
          sheet: 'Sheet1',
          cells: [
            { cell: 'A2', value: '売上', formula: null },
            { cell: 'B2', value: 1000, formula: null },
            { cell: 'B3', value: 400, formula: null },
            { cell: 'B4', value: 600, formula: '=B2-B3' },
            { cell: 'C4', value: 1200, formula: '=B4*2' },
            // Outside the drawn window (A2:D5): not drawn.
            { cell: 'F20', value: 7, formula: null },
          ],
        },
        { sheet: 'Other', cells: [{ cell: 'A2', value: 'other sheet', formula: null }] },
      ],
    );
    expect([...(grid?.neighbours.values() ?? [])]).toEqual([
      { a1: 'A2', value: '売上', formula: null },
      { a1: 'B2', value: 1000, formula: null },
      { a1: 'B4', value: 600, formula: '=B2-B3' },
    ]);
    expect(grid?.cells.get('C4')?.beforeCached).toBe(1200);
    expect(grid?.cells.get('B3')?.beforeCached).toBeUndefined();
  });

  it('ignores cells that are not A1 names', () => {
    expect(buildSheetGrids([item({ cell: 'nonsense' })])[0]?.cells.size).toBe(0);
  });
});

describe('styling and structure changes', () => {
  const style = (summary: string): PatchValue => ({ kind: 'style', value: summary });
  it('are listed apart, never drawn as a cell value', () => {
    const diff = [
      item({ cell: 'B2', before: value(1), after: value(2) }),
      item({ op: 'set_bold', op_index: 1, cell: 'A1:C1', before: null, after: style('bold=true') }),
      item({ op: 'set_fill_color', op_index: 2, cell: 'B2', before: null, after: style('fill=#FFFF00') }),
      item({ op: 'set_dimensions', op_index: 3, cell: null, before: null, after: { kind: 'dimension', value: 'columns=A, width=12' } }),
    ];
    const [grid] = buildSheetGrids(diff);
    expect([...(grid?.cells.keys() ?? [])]).toEqual(['B2']);
    expect(grid?.cells.get('B2')).toMatchObject({ before: value(1), after: value(2) });
    expect(designChanges(diff)).toEqual([
      { sheet: 'Sheet1', range: 'A1:C1', op: 'set_bold', summary: 'bold=true', status: 'applied' },
      { sheet: 'Sheet1', range: 'B2', op: 'set_fill_color', summary: 'fill=#FFFF00', status: 'applied' },
      { sheet: 'Sheet1', range: null, op: 'set_dimensions', summary: 'columns=A, width=12', status: 'applied' },
    ]);
  });
});

describe('diffItemsOf (a run output passed to ui.diff_viewer)', () => {
  it('takes keiri-xlsx detail when present and reads plain items as applied writes', () => {
    const detailed = item({ op: 'set_formula', op_index: 4, cell: 'D2', before: null, after: formula('=B2-C2') });
    expect(
      diffItemsOf([
        { sheet: 'Sheet1', cell: 'D2', before: null, after: '=B2-C2', detail: detailed },
        { sheet: '試算表', cell: 'C2', before: 1, after: 480000 },
        { sheet: '試算表', cell: 'E2', before: 'x', after: '=A1' },
        'not an item',
        { cell: 'A1' },
      ]),
    ).toEqual([
      detailed,
      { op: 'set_value', op_index: 1, sheet: '試算表', cell: 'C2', before: value(1), after: value(480000), status: 'applied' },
      { op: 'set_formula', op_index: 2, sheet: '試算表', cell: 'E2', before: value('x'), after: formula('=A1'), status: 'applied' },
    ]);
  });
});

describe('undo', () => {
  it('lists skipped items', () => {
    const diff = [item({}), item({ status: 'skipped', cell: 'A2' })];
    expect(skippedItems(diff).map((d) => d.cell)).toEqual(['A2']);
  });

  it('applies the inverse ops over the saved file', () => {
    const request = undoRequest({
      out_path: '/ws/out/book_patched.xlsx',
      patch_diff: [],
      warnings: [],
      error: null,
      inverse_ops: [{ op: 'set_value', sheet: 'S', cell: 'A1', value: null }],
      formula_issues: [],
    });
    expect(request).toEqual({
      xlsx_path: '/ws/out/book_patched.xlsx',
      ops: [{ op: 'set_value', sheet: 'S', cell: 'A1', value: null }],
      out_name: 'book_patched.xlsx',
      on_conflict: 'overwrite',
      return_inverse_ops: true,
    });
    expect(baseName('C:\\ws\\book.xlsx')).toBe('book.xlsx');
  });
});
