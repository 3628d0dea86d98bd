import { Text } from '@codemirror/state';
import { describe, expect, it } from 'vitest';
import type { ShownFinding } from '../../api/types';
import { findingRange, findingsToDiagnostics } from './diagnostics';

const DOC = ['id: demo', 'graph:', '  - id: read', '    block: csv.nope', '    in:', '      path: 請求書😀.csv   ', ''].join('\n');

function finding(over: Partial<ShownFinding>): ShownFinding {
  return {
    code: 'block.unknown',
    severity: 'error',
    node_id: null,
    path: '',
    message: 'unknown block',
    hint: null,
    line: null,
    column: null,
    ...over,
  };
}

// check(line, column, expected line, expected marked text)
function check(line: number | null, column: number | null, expectLine: number, expectText: string) {
  const doc = Text.of(DOC.split('\n'));
  const range = findingRange(doc, { line, column });
  expect(range.line).toBe(expectLine);
  expect(doc.sliceString(range.from, range.to)).toBe(expectText);
  expect(range.from).toBeGreaterThanOrEqual(doc.line(range.line).from);
  expect(range.to).toBeLessThanOrEqual(doc.line(range.line).to);
}

describe('findingRange', () => {
  const cases: [string, number | null, number | null, number, string][] = [
    ['line and column mark from the column to the end of the text', 4, 12, 4, 'csv.nope'],
    ['column 1 marks the whole line including indentation', 4, 1, 4, '    block: csv.nope'],
    ['a line without column marks from the first non-blank', 4, null, 4, 'block: csv.nope'],
    ['a null line falls back to line 1', null, null, 1, 'id: demo'],
    ['a null line ignores the column', null, 5, 1, 'id: demo'],
    ['line 0 is not a line; fall back to line 1', 0, 3, 1, 'id: demo'],
    ['a line past the end clamps to the last line', 99, 1, 7, ''],
    ['trailing spaces are not marked', 6, 13, 6, '請求書😀.csv'],
    // The emoji is one character for the validator but two UTF-16 units for CodeMirror.
    ['columns count characters, not UTF-16 units', 6, 17, 6, '.csv'],
    ['a column past the end marks an empty point at the end', 3, 80, 3, ''],
    ['a fractional column is ignored', 3, 2.5, 3, '- id: read'],
    ['an empty line gives an empty point', 7, 1, 7, ''],
  ];
  it.each(cases)('%s', (_name, line, column, expectLine, expectText) => {
    check(line, column, expectLine, expectText);
  });
});

describe('findingsToDiagnostics', () => {
  const doc = Text.of(DOC.split('\n'));

  it('maps severity, code, message and hint, and sorts by position', () => {
    const diagnostics = findingsToDiagnostics(
      doc,
      [
        finding({ line: 4, column: 12, message: 'no block csv.nope', hint: 'did you mean csv.read?' }),
        finding({ code: 'plan.version', severity: 'warning', line: null, message: 'version missing' }),
      ],
      'en',
    );
    expect(diagnostics).toEqual([
      { from: 0, to: 8, severity: 'warning', source: 'plan.version', message: 'version missing' },
      {
        from: doc.line(4).from + 11,
        to: doc.line(4).to,
        severity: 'error',
        source: 'block.unknown',
        message: 'no block csv.nope\nHint: did you mean csv.read?',
      },
    ]);
  });

  it('labels the hint in the chosen language', () => {
    const [diagnostic] = findingsToDiagnostics(doc, [finding({ line: 2, hint: '確認してください' })], 'ja');
    expect(diagnostic?.message).toBe('unknown block\nヒント: 確認してください');
  });

  it('gives no diagnostics for no findings', () => {
    expect(findingsToDiagnostics(doc, [], 'ja')).toEqual([]);
  });
});
