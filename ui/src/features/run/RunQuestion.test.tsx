import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunPaused } from '../../api/types';
import { RunQuestion } from './RunQuestion';

afterEach(cleanup);

function show(paused: RunPaused) {
  const onAnswer = vi.fn();
  render(<RunQuestion lang="ja" paused={paused} busy={false} onAnswer={onAnswer} />);
  return onAnswer;
}

describe('RunQuestion', () => {
  it('confirms with the block labels, the details as a table and a comment', () => {
    const onAnswer = show({
      node: 'confirm',
      message: '確認待ち',
      question: {
        kind: 'confirmation',
        message: '例外レポートを送りますか',
        details: [{ 請求書番号: 'INV-001', 金額: 110000 }],
        confirm_label: '送信する',
        cancel_label: '中止する',
      },
    });
    expect(screen.getByTestId('question-details').textContent).toContain('INV-001');
    fireEvent.change(screen.getByTestId('question-comment'), { target: { value: '部長確認済み' } });
    expect(screen.getByTestId('question-approve').textContent).toBe('送信する');
    fireEvent.click(screen.getByTestId('question-approve'));
    expect(onAnswer).toHaveBeenCalledWith({ approved: true, comment: '部長確認済み' });
  });

  it('reviews a workbook change passed on by a patch node: before and after per cell, and formatting', () => {
    const onAnswer = show({
      node: 'review_patch',
      message: '',
      question: {
        kind: 'diff',
        title: '試算表の更新',
        patch_diff: [
          {
            sheet: '試算表',
            cell: 'C2',
            before: 1000,
            after: 480000,
            detail: { op: 'set_value', op_index: 0, sheet: '試算表', cell: 'C2', before: { kind: 'value', value: 1000 }, after: { kind: 'value', value: 480000 }, status: 'applied' },
          },
          {
            sheet: '試算表',
            cell: 'A1:C1',
            before: null,
            after: 'bold=true',
            detail: { op: 'set_bold', op_index: 1, sheet: '試算表', cell: 'A1:C1', before: null, after: { kind: 'style', value: 'bold=true' }, status: 'applied' },
          },
        ],
      },
    });
    const cell = document.querySelector('[data-testid="workbook-cell"][data-cell="C2"]');
    expect(cell?.getAttribute('data-change')).toBe('changed');
    expect(cell?.querySelector('[data-testid="workbook-after"]')?.textContent).toContain('480000');
    expect(document.querySelector('[data-testid="workbook-cell"][data-cell="A1"]')?.getAttribute('data-change')).not.toBe('added');
    const design = screen.getByTestId('workbook-design-change');
    expect(design.getAttribute('data-op')).toBe('set_bold');
    expect(design.textContent).toBe('試算表!A1:C1 太字 bold=true');
    fireEvent.click(screen.getByTestId('question-approve'));
    expect(onAnswer).toHaveBeenCalledWith({ approved: true, comment: '' });
  });

  it('reviews a table: excluded rows and edits of editable columns', () => {
    const onAnswer = show({
      node: 'review',
      message: '',
      question: {
        kind: 'table_review',
        title: '重複の疑い',
        rows: [
          { 請求書番号: 'INV-001', 判断: '' },
          { 請求書番号: 'INV-002', 判断: '' },
        ],
        editable_columns: ['判断'],
        allow_exclude: true,
      },
    });
    const boxes = screen.getAllByTestId('question-exclude');
    fireEvent.click(boxes[1] as HTMLElement);
    const inputs = screen.getAllByRole('textbox');
    fireEvent.change(inputs[0] as HTMLElement, { target: { value: '支払保留' } });
    fireEvent.click(screen.getByTestId('question-approve'));
    expect(onAnswer).toHaveBeenCalledWith({ approved: true, excluded: [1], changes: [{ row_index: 0, field: '判断', after: '支払保留' }] });
  });

  it('collects typed fields and waits for the required ones', () => {
    const onAnswer = show({
      node: 'ask',
      message: '',
      question: {
        kind: 'input',
        message: '支払条件',
        fields: [
          { id: 'limit', label: '上限額', type: 'number' },
          { id: 'bank', label: '銀行', type: 'select', options: ['みずほ', '三井住友'] },
          { id: 'memo', label: '備考', type: 'text', required: false },
        ],
      },
    });
    const submit = screen.getByTestId('question-submit') as HTMLButtonElement;
    expect(submit.disabled).toBe(true);
    fireEvent.change(screen.getByRole('spinbutton'), { target: { value: '500000' } });
    fireEvent.change(screen.getByRole('combobox'), { target: { value: 'みずほ' } });
    expect(submit.disabled).toBe(false);
    fireEvent.click(submit);
    expect(onAnswer).toHaveBeenCalledWith({ values: { limit: 500000, bank: 'みずほ' }, approved: true });
  });

  it('asks every approver on the route, with the amount as money, what is approved and a comment', () => {
    const onAnswer = show({
      node: 'approve',
      message: '',
      question: {
        kind: 'approval',
        subject: '備品購入',
        amount: 268400,
        route: ['佐藤', '鈴木'],
        approvers: [{ name: '佐藤', role: '課長', limit: 100000 }, { name: '鈴木' }],
        details: [{ item: 'ノートPC', vendor: '東京事務機', amount: 268400 }],
        labels: { columns: { item: { ja: '品目', en: 'Item' }, vendor: { ja: '取引先', en: 'Vendor' }, amount: { ja: '金額', en: 'Amount' } }, values: {}, amounts: ['amount'] },
      },
    });
    expect(screen.getByTestId('question-amount').textContent).toBe(' 金額 ¥268,400');
    const details = screen.getByTestId('question-details');
    expect(within(details).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['品目', '取引先', '金額']);
    expect(within(details).getAllByRole('cell').map((c) => c.textContent)).toEqual(['ノートPC', '東京事務機', '268,400']);
    // Each approver with the role the plan gives (none for 鈴木).
    expect(screen.getAllByTestId('question-approver').map((a) => a.querySelector('label > span')?.textContent)).toEqual(['佐藤（課長）', '鈴木']);
    const [first, second] = screen.getAllByRole('combobox');
    fireEvent.change(first as HTMLElement, { target: { value: 'approved' } });
    fireEvent.change(second as HTMLElement, { target: { value: 'rejected' } });
    fireEvent.change(screen.getByTestId('question-comment'), { target: { value: '予算内' } });
    fireEvent.click(screen.getByTestId('question-submit'));
    expect(onAnswer).toHaveBeenCalledWith({
      decisions: [
        { approver: '佐藤', decision: 'approved', comment: '予算内' },
        { approver: '鈴木', decision: 'rejected', comment: '予算内' },
      ],
    });
  });

  it('shows a summary object in words, a row per figure, codes and amounts labelled, no JSON', () => {
    show({
      node: 'confirm',
      message: '',
      question: {
        kind: 'confirmation',
        message: '例外レポートを送信します。よろしいですか？',
        details: { total_count: 5, by_severity: { error: 2, warning: 3 }, total_amount: 330000, by_rule: {} },
        labels: {
          columns: { total_count: { ja: '件数', en: 'Count' }, by_severity: { ja: '重要度別の件数', en: 'Count by severity' }, total_amount: { ja: '金額の合計', en: 'Total amount' } },
          values: { severity: { error: { ja: 'エラー', en: 'Error' }, warning: { ja: '警告', en: 'Warning' } } },
          amounts: ['total_amount'],
        },
      },
    });
    const details = screen.getByTestId('question-details');
    expect(details.textContent).not.toContain('{');
    const rows = within(details).getAllByTestId('question-detail').map((r) => [r.querySelector('th')?.textContent, r.querySelector('td')?.textContent]);
    expect(rows).toEqual([
      ['件数', '5'],
      ['重要度別の件数', 'エラー 2、警告 3'],
      ['金額の合計', '330,000'],
      ['by_rule', 'なし'],
    ]);
  });

  it('asks a named approver to sign with their own name when the plan requires it', () => {
    const onAnswer = show({
      node: 'approve',
      message: '',
      question: { kind: 'approval', subject: '支払承認', amount: 500000, route: ['山田 太郎'], require_signature: true },
    });
    const submit = screen.getByTestId('question-submit') as HTMLButtonElement;
    fireEvent.change(screen.getByRole('combobox'), { target: { value: 'approved' } });
    // A decision alone is not enough: the name is required.
    expect(submit.disabled).toBe(true);
    expect(screen.getByText('山田 太郎 の署名（本人の名前）')).toBeTruthy();
    fireEvent.change(screen.getByTestId('question-signature'), { target: { value: ' 山田 太郎 ' } });
    expect(submit.disabled).toBe(false);
    fireEvent.click(submit);
    expect(onAnswer).toHaveBeenCalledWith({
      decisions: [{ approver: '山田 太郎', decision: 'approved', comment: '', signed_by: '山田 太郎' }],
    });
  });

  it('shows review rows in words: nested rows spread into columns, codes and headers labelled, amounts with separators, no JSON', () => {
    show({
      node: 'review',
      message: '',
      question: {
        kind: 'table_review',
        title: '規程違反',
        rows: [
          { rule_id: 'PO-01', severity: 'error', row: { po_no: 'P-003', amount: 180000 }, lines: [3, 5] },
          { rule_id: 'PO-02', severity: 'warning', row: { po_no: 'P-004', amount: 1500000 }, lines: [{ a: 1 }] },
        ],
        labels: {
          columns: { rule_id: { ja: 'ルール', en: 'Rule' }, severity: { ja: '重要度', en: 'Severity' }, po_no: { ja: '発注番号', en: 'PO no.' }, amount: { ja: '金額', en: 'Amount' } },
          values: { severity: { error: { ja: 'エラー', en: 'Error' }, warning: { ja: '警告', en: 'Warning' } } },
          amounts: ['amount'],
        },
        editable_columns: ['po_no'],
        allow_exclude: false,
      },
    });
    const table = screen.getByTestId('question-table');
    expect(within(table).getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['ルール', '重要度', '発注番号', '金額', 'lines']);
    const rows = screen.getAllByTestId('question-row');
    expect(within(rows[0] as HTMLElement).getAllByRole('cell').map((c) => c.textContent)).toEqual(['PO-01', 'エラー', 'P-003', '180,000', '3、5']);
    expect(within(rows[1] as HTMLElement).getAllByRole('cell').map((c) => c.textContent)).toEqual(['PO-02', '警告', 'P-004', '1,500,000', '1 件']);
    expect(table.textContent).not.toContain('{');
    // A nested value is shown, not edited: the answer names the row's own fields.
    expect(screen.queryByTestId('question-edit')).toBeNull();
  });
});
