import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GeneratePanel } from './GeneratePanel';
import { openTemplatePicker } from '../design/InputsPanel';
import { EMPTY_PROGRESS, replacesEditor, type GenerateOutcome } from './generation';

afterEach(cleanup);

function setup(outcome: GenerateOutcome, onUseAttempt = vi.fn()) {
  const onChangeTemplates = vi.fn();
  render(
    <GeneratePanel
      lang="ja"
      running={false}
      startedAt={null}
      progress={EMPTY_PROGRESS}
      outcome={outcome}
      canGenerate
      title=""
      onGenerate={vi.fn()}
      onCancel={vi.fn()}
      onChangeTemplates={onChangeTemplates}
      onUseAttempt={onUseAttempt}
    />,
  );
  return onChangeTemplates;
}

describe('GeneratePanel', () => {
  it('shows the composition in one line with a way to change it', () => {
    const onChangeTemplates = setup({
      kind: 'done',
      status: 'needs_answers',
      notes: [],
      unreadable: [],
      composition: '「請求書の重複検出」＋「例外レポートの作成と通知」を使います',
      suggestions: [],
    });
    expect(screen.getByTestId('generate-composition').textContent).toContain('「請求書の重複検出」＋「例外レポートの作成と通知」を使います');
    fireEvent.click(screen.getByTestId('generate-change-templates'));
    expect(onChangeTemplates).toHaveBeenCalledOnce();
    expect(screen.queryByTestId('generate-nearest')).toBeNull();
  });

  it('says plainly that nothing fits and lists the nearest templates and blocks', () => {
    setup({
      kind: 'done',
      status: 'no_fit',
      notes: ['この指示の仕事をするテンプレートがありません。'],
      unreadable: [],
      composition: null,
      suggestions: ['テンプレート monthly_close_checklist（月次決算チェックリスト）', 'ブロック transforms.group_aggregate'],
    });
    const result = screen.getByTestId('generate-result');
    expect(result.dataset.status).toBe('no_fit');
    expect(result.textContent).toContain('関係のないプランは作っていません');
    expect(screen.getByTestId('generate-nearest').textContent).toContain('transforms.group_aggregate');
    expect(screen.queryByTestId('generate-composition')).toBeNull();
  });
});

describe('openTemplatePicker', () => {
  it('opens the closed template picker and focuses its search box', () => {
    render(
      <details className="templates">
        <summary>テンプレート</summary>
        <input id="template-search" />
      </details>,
    );
    const picker = document.querySelector<HTMLDetailsElement>('details.templates');
    expect(picker?.open).toBe(false);
    openTemplatePicker();
    expect(picker?.open).toBe(true);
    expect(document.activeElement?.id).toBe('template-search');
  });

  it('says the editor kept the plan when errors remain, and offers the attempt', () => {
    const onUseAttempt = vi.fn();
    setup({ kind: 'done', status: 'invalid', notes: [], unreadable: [], composition: null, suggestions: [], kept: true }, onUseAttempt);
    expect(screen.getByTestId('generate-kept').textContent).toContain('エディタのプランはそのままです');
    fireEvent.click(screen.getByTestId('generate-use-attempt'));
    expect(onUseAttempt).toHaveBeenCalledOnce();
  });
});

describe('replacesEditor', () => {
  it.each([
    ['valid', 'id: mine', true],
    ['needs_answers', 'id: mine', true],
    ['fallback', 'id: mine', true],
    ['invalid', '', true],
    ['invalid', '  \n', true],
    ['invalid', 'id: mine', false],
    ['no_fit', '', false],
  ] as const)('%s over %j: %s', (status, text, expected) => {
    expect(replacesEditor(status, text)).toBe(expected);
  });
});
