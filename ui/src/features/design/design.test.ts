// The Design tab's logic: requirement controls and answer checks, shortcuts (never while an
// IME composes), progress steps and their times, the attempt diff and the register target.

import { describe, expect, it } from 'vitest';
import type { GenerationProgress, Plan, Requirement } from '../../api/types';
import { planDiff } from '../generate/attempts';
import { extractionSummary, toBase64, type DocumentEntry } from './documents';
import { EMPTY_PROGRESS, addProgress, finishProgress, formatElapsed, readProgress } from '../generate/generation';
import { planIdOf, stampOf, targetFileName } from '../register/register';
import { controlFor, initialAnswerText, parseAnswer, varsPreview } from './requirements';
import { shortcutFor, shortcutLabel, type KeyLike } from '../../shared/shortcuts';

function req(patch: Partial<Requirement>): Requirement {
  return { id: 'x', type: 'text', label: 'ラベル', description: '', required: true, target: { var: 'x' }, ...patch };
}

describe('requirement controls', () => {
  const cases: [string, Partial<Requirement>, string][] = [
    ['text', { type: 'text' }, 'text'],
    ['text with options', { type: 'text', options: ['a'] }, 'select'],
    ['object text', { type: 'text', value_type: 'object' }, 'textarea'],
    ['select', { type: 'select', options: ['a', 'b'] }, 'select'],
    ['enum', { type: 'enum', options: [{ id: 1 }] }, 'select'],
    ['enum without options', { type: 'enum' }, 'text'],
    ['boolean', { type: 'boolean' }, 'boolean'],
    ['number', { type: 'number' }, 'number'],
    ['file', { type: 'file', accept: '.csv' }, 'file'],
    ['table', { type: 'table' }, 'table'],
  ];
  it.each(cases)('%s', (_name, patch, control) => {
    expect(controlFor(req(patch))).toBe(control);
  });

  it('starts from the spec default', () => {
    expect(initialAnswerText(req({ default: 'auto' }))).toBe('auto');
    expect(initialAnswerText(req({ type: 'boolean' }))).toBe('false');
    expect(initialAnswerText(req({ type: 'number', default: 3 }))).toBe('3');
  });
});

describe('answer checks', () => {
  const cases: [string, Partial<Requirement>, string, ReturnType<typeof parseAnswer>][] = [
    ['required and empty', {}, '  ', { ok: false, error: 'question.required' }],
    ['optional and empty', { required: false }, '', { ok: true, value: null }],
    ['text is trimmed', {}, ' 請求書 ', { ok: true, value: '請求書' }],
    ['regex passes', { validation: { regex: '^[0-9]{4}$' } }, '2024', { ok: true, value: '2024' }],
    ['regex fails', { validation: { regex: '^[0-9]{4}$' } }, '24', { ok: false, error: 'question.pattern', params: { pattern: '^[0-9]{4}$' } }],
    ['a broken regex is left to the server', { validation: { regex: '(' } }, 'a', { ok: true, value: 'a' }],
    ['number with separators', { type: 'number' }, '1,000.5', { ok: true, value: 1000.5 }],
    ['not a number', { type: 'number' }, '十', { ok: false, error: 'question.notNumber' }],
    ['integer', { type: 'number', value_type: 'integer' }, '1.5', { ok: false, error: 'question.notInteger' }],
    ['boolean', { type: 'boolean' }, 'true', { ok: true, value: true }],
    ['select keeps the option value', { type: 'enum', options: [1, 2] }, '2', { ok: true, value: 2 }],
    ['select outside the options', { type: 'select', options: ['a'] }, 'b', { ok: false, error: 'question.notAnOption' }],
    ['file with the right extension', { type: 'file', accept: '.xlsx,.xlsm' }, 'inputs/a.XLSM', { ok: true, value: 'inputs/a.XLSM' }],
    ['file with another extension', { type: 'file', accept: 'csv' }, 'a.pdf', { ok: false, error: 'question.wrongExtension', params: { accept: '.csv, .tsv, .txt' } }],
    // Excel's 「Unicode テキスト」 (.txt) and a tab-separated file answer a CSV question.
    ['a CSV question takes Unicode text', { type: 'file', accept: '.csv' }, 'inputs/仕訳帳.txt', { ok: true, value: 'inputs/仕訳帳.txt' }],
    ['a CSV question takes a TSV', { type: 'file', accept: '.csv' }, 'inputs/仕訳帳.TSV', { ok: true, value: 'inputs/仕訳帳.TSV' }],
    ['an Excel question does not take text', { type: 'file', accept: '.xlsx' }, 'a.txt', { ok: false, error: 'question.wrongExtension', params: { accept: '.xlsx' } }],
    ['table', { type: 'table' }, '[{"a": 1}]', { ok: true, value: [{ a: 1 }] }],
    ['table that is not rows', { type: 'table' }, '[1]', { ok: false, error: 'question.notTable' }],
    ['object text', { value_type: 'object' }, '{"k": "v"}', { ok: true, value: { k: 'v' } }],
    ['object text that is not JSON', { value_type: 'object' }, '{k}', { ok: false, error: 'question.notJson' }],
  ];
  it.each(cases)('%s', (_name, patch, raw, expected) => {
    expect(parseAnswer(req(patch), raw)).toEqual(expected);
  });

  it('previews the answers as vars, by target var', () => {
    const known = [req({ id: 'src', target: { var: 'invoice_csv' } })];
    expect(varsPreview(known, { src: 'a.csv', enc: 'cp932' })).toBe('vars:\n  invoice_csv: "a.csv"\n  enc: "cp932"');
    expect(varsPreview(known, {})).toBe('');
  });
});

function key(patch: Partial<KeyLike>): KeyLike {
  return { key: 'a', ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...patch };
}

describe('shortcuts', () => {
  const cases: [string, Partial<KeyLike>, boolean, string | null][] = [
    ['Ctrl+Enter generates', { key: 'Enter', ctrlKey: true }, false, 'generate'],
    ['Cmd+Enter on a Mac', { key: 'Enter', metaKey: true }, true, 'generate'],
    ['Ctrl+Enter on a Mac is not it', { key: 'Enter', ctrlKey: true }, true, null],
    ['Ctrl+Shift+V validates', { key: 'V', ctrlKey: true, shiftKey: true }, false, 'validate'],
    ['Ctrl+V pastes', { key: 'v', ctrlKey: true }, false, null],
    ['Ctrl+S registers', { key: 's', ctrlKey: true }, false, 'register'],
    ['plain Enter', { key: 'Enter' }, false, null],
    ['nothing while an IME composes', { key: 'Enter', ctrlKey: true, isComposing: true }, false, null],
    ['nothing for the IME key code', { key: 'Process', ctrlKey: true, keyCode: 229 }, false, null],
    ['Alt changes the meaning', { key: 's', ctrlKey: true, altKey: true }, false, null],
  ];
  it.each(cases)('%s', (_name, patch, mac, action) => {
    expect(shortcutFor(key(patch), mac)).toBe(action);
  });

  it('labels the shortcuts for button titles', () => {
    expect(shortcutLabel('generate', false)).toBe('Ctrl+Enter');
    expect(shortcutLabel('validate', false)).toBe('Ctrl+Shift+V');
    expect(shortcutLabel('register', true)).toBe('⌘S');
  });
});

describe('progress', () => {
  const events: GenerationProgress[] = [
    { stage: 'extracting', message: 'reading', elapsed_ms: 0 },
    { stage: 'retrieving', message: 'retrieving', elapsed_ms: 120 },
    { stage: 'skeleton', message: 'asking', elapsed_ms: 300 },
    { stage: 'wiring', message: 'asking', elapsed_ms: 1300 },
    { stage: 'validating', message: 'attempt 1', elapsed_ms: 2000 },
    { stage: 'repair', repair: { n: 1, of: 2 }, message: 'repair 1/2', elapsed_ms: 2100 },
    { stage: 'validating', message: 'attempt 2', elapsed_ms: 3100 },
  ];

  it('turns events into timed steps, each repair round and validation its own', () => {
    let state = EMPTY_PROGRESS;
    for (const event of events) state = addProgress(state, event, 0);
    state = finishProgress(state, 3250);
    expect(state.steps.map((step) => [step.stage, step.repair?.n ?? null, step.durationMs])).toEqual([
      ['extracting', null, 120],
      ['retrieving', null, 180],
      ['skeleton', null, 1000],
      ['wiring', null, 700],
      ['validating', null, 100],
      ['repair', 1, 1000],
      ['validating', null, 150],
    ]);
    expect(state.elapsedMs).toBe(3250);
  });

  it('uses the local clock when an event has no elapsed time, and updates a repeated stage', () => {
    let state = addProgress(EMPTY_PROGRESS, { stage: 'skeleton', message: 'a' }, 50);
    state = addProgress(state, { stage: 'skeleton', message: 'b' }, 80);
    expect(state.steps).toEqual([{ stage: 'skeleton', repair: null, message: 'b', startedMs: 50, durationMs: null }]);
  });

  it('reads only well-formed events', () => {
    expect(readProgress({ stage: 'repair', repair: { n: 2, of: 2 }, message: 'm', elapsed_ms: 5 })).toEqual({
      stage: 'repair',
      repair: { n: 2, of: 2 },
      message: 'm',
      elapsed_ms: 5,
    });
    expect(readProgress({ stage: 'dancing' })).toBeNull();
    expect(readProgress('skeleton')).toBeNull();
  });

  it('formats elapsed time', () => {
    expect(formatElapsed(0)).toBe('0.0 s');
    expect(formatElapsed(1234)).toBe('1.2 s');
    expect(formatElapsed(59_999)).toBe('60.0 s');
    expect(formatElapsed(125_000)).toBe('2:05');
  });
});

describe('attempt diff', () => {
  const first: Plan = {
    id: 'p',
    graph: [
      { id: 'read', block: 'csv.read', in: { path: 'a.csv' }, out: { rows: 'rows' } },
      { id: 'detect', block: 'matching.duplicate_invoices', in: { rows: '${reader.rows}' } },
    ],
  };
  const second: Plan = {
    id: 'p',
    vars: { enc: 'cp932' },
    graph: [
      { id: 'read', block: 'csv.read', in: { path: 'a.csv' }, out: { rows: 'rows' } },
      { id: 'detect', block: 'matching.duplicate_invoices', in: { rows: '${read.rows}' } },
      { id: 'save', block: 'csv.write' },
    ],
  };
  it('lists changed inputs, added nodes and vars', () => {
    expect(planDiff(first, second)).toEqual([
      { kind: 'changed', node: 'detect', field: 'in.rows', before: '${reader.rows}', after: '${read.rows}' },
      { kind: 'added', node: 'save', block: 'csv.write' },
      { kind: 'changed', node: 'vars', field: 'enc', before: '—', after: 'cp932' },
    ]);
    expect(planDiff(second, first).filter((change) => change.kind === 'removed')).toEqual([
      { kind: 'removed', node: 'save', block: 'csv.write' },
    ]);
    expect(planDiff(first, first)).toEqual([]);
  });
});

describe('register target', () => {
  it('reads the plan id', () => {
    expect(planIdOf('apiVersion: v1\nid: e2e_invoices\ngraph: []')).toBe('e2e_invoices');
    expect(planIdOf('id: "quoted id" # comment')).toBe('quoted id');
    expect(planIdOf('graph:\n  - id: nested\n')).toBeNull();
    expect(planIdOf('id:\n')).toBeNull();
  });

  it('names the file with the local minute', () => {
    expect(targetFileName('p', stampOf(new Date(2026, 0, 5, 9, 7)))).toBe('designs/p_202601050907.yaml');
  });
});

describe('documents', () => {
  it('encodes bytes as base64 in chunks', () => {
    const bytes = new TextEncoder().encode('請求書'.repeat(20_000));
    expect(toBase64(bytes)).toBe(Buffer.from(bytes).toString('base64'));
  });

  it('summarises what was read', () => {
    const entry: DocumentEntry = {
      key: 'a',
      name: 'a.pdf',
      path: 'inputs/a.pdf',
      status: 'ready',
      text: { file_path: 'inputs/a.pdf', resolved_path: '/w/inputs/a.pdf', format: 'pdf', pages_total: 30, pages_extracted: 20, characters: 1200, lines: 40, text: '', cuts: [] },
      metrics: null,
      error: null,
    };
    expect(extractionSummary('en', entry)).toBe(`20/30 pages · ${(1200).toLocaleString()} characters`);
  });

  it('summarises a CSV as its rows and columns, not its characters', () => {
    const columns = ['伝票番号', '日付', '借方勘定科目', '借方金額', '貸方勘定科目', '貸方金額', '摘要'];
    const entry: DocumentEntry = {
      key: 'j',
      name: 'journal.csv',
      path: 'inputs/journal.csv',
      status: 'ready',
      text: {
        file_path: 'inputs/journal.csv', resolved_path: '/w/inputs/journal.csv', format: 'csv', encoding: 'Shift_JIS',
        characters: 733, lines: 9, text: '', cuts: [], table: { rows: 1234, columns },
      },
      metrics: null,
      error: null,
    };
    expect(extractionSummary('ja', entry)).toBe(
      `${(1234).toLocaleString()} 行 × 7 列: 伝票番号, 日付, 借方勘定科目, 借方金額, 貸方勘定科目, …`,
    );
    expect(extractionSummary('en', entry)).toBe(
      `${(1234).toLocaleString()} rows × 7 columns: 伝票番号, 日付, 借方勘定科目, 借方金額, 貸方勘定科目, …`,
    );
  });
});
