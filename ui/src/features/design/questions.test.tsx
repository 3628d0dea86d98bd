// The question form as rendered: the control each requirement type gets, checks shown next to
// the field before anything is sent, and Enter while an IME composes never answering.

import { act, useLayoutEffect } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Requirement } from '../../api/types';
import { QuestionsPanel } from './QuestionsPanel';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

let host: HTMLDivElement;
let root: Root;

beforeEach(() => {
  host = document.createElement('div');
  document.body.append(host);
  root = createRoot(host);
});

afterEach(() => {
  act(() => root.unmount());
  host.remove();
});

function req(patch: Partial<Requirement>): Requirement {
  return { id: 'q', type: 'text', label: '質問', description: '', required: true, target: { var: 'q' }, ...patch };
}

/** The panel with `questions` open and nothing answered yet. */
function panel(questions: Requirement[], onAnswer: (requirement: Requirement, value: unknown) => void) {
  return (
    <QuestionsPanel
      lang="ja"
      questions={questions}
      known={questions}
      answers={{}}
      focusId={null}
      documents={[]}
      busy={false}
      error={null}
      regenerate={null}
      onAnswer={onAnswer}
      onRegenerate={() => {}}
      onChooseFile={async () => null}
      nativePicker={false}
    />
  );
}

function render(questions: Requirement[], onAnswer = vi.fn()) {
  act(() => root.render(panel(questions, onAnswer)));
  return onAnswer;
}

function input(): HTMLElement {
  const element = host.querySelector<HTMLElement>('[data-testid="question-input"]');
  if (element === null) throw new Error('no question input');
  return element;
}

function type(element: HTMLElement, value: string) {
  const proto = element instanceof HTMLSelectElement ? HTMLSelectElement.prototype : element instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  const setter = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
  act(() => {
    setter?.call(element, value);
    element.dispatchEvent(new Event(element instanceof HTMLSelectElement ? 'change' : 'input', { bubbles: true }));
  });
}

function submit() {
  const button = host.querySelector<HTMLButtonElement>('[data-testid="question-submit"]');
  act(() => button?.click());
}

describe('QuestionsPanel', () => {
  it.each([
    ['text', req({}), 'INPUT', 'text'],
    ['enum', req({ type: 'enum', options: ['auto', 'cp932'] }), 'SELECT', 'select'],
    ['number', req({ type: 'number' }), 'INPUT', 'number'],
    ['file', req({ type: 'file', accept: '.csv' }), 'INPUT', 'file'],
    ['table', req({ type: 'table' }), 'TEXTAREA', 'table'],
    ['boolean', req({ type: 'boolean' }), 'DIV', 'boolean'],
  ] as const)('renders a %s question with its control', (_name, requirement, tag, control) => {
    render([requirement]);
    expect(input().tagName).toBe(tag);
    expect(input().dataset.control).toBe(control);
  });

  it('asks one question at a time and counts them', () => {
    render([req({ id: 'a', label: '一つ目' }), req({ id: 'b', label: '二つ目' })]);
    expect(host.querySelectorAll('[data-testid="question"]')).toHaveLength(1);
    expect(host.textContent).toContain('質問 1 / 2');
    expect(host.textContent).toContain('一つ目');
    expect(host.textContent).not.toContain('二つ目');
  });

  it('explains a failed check next to the field and sends nothing', () => {
    const onAnswer = render([req({ validation: { regex: '^[0-9]{4}$' } })]);
    type(input(), '24');
    submit();
    expect(onAnswer).not.toHaveBeenCalled();
    expect(host.querySelector('[data-testid="question-problem"]')?.textContent).toContain('^[0-9]{4}$');
    type(input(), '2024');
    submit();
    expect(onAnswer).toHaveBeenCalledWith(expect.objectContaining({ id: 'q' }), '2024');
  });

  it('sends the option itself for a choice and a number for a number', () => {
    const onAnswer = render([req({ type: 'enum', options: [10, 20] })]);
    type(input(), '20');
    submit();
    expect(onAnswer).toHaveBeenCalledWith(expect.anything(), 20);
  });

  it('picks a list of columns with check boxes, in the order ticked', () => {
    // What a group's `by` gets when the columns of the rows it reads are known.
    const columns = req({ value_type: 'array', options: ['伝票番号', '科目', '部門'], hint: 'ファイルの列から選んでください（複数可）' });
    const onAnswer = render([columns]);
    expect(input().dataset.control).toBe('columns');
    const boxes = () => [...host.querySelectorAll<HTMLInputElement>('[data-testid="question-column"]')];
    expect(boxes().map((box) => box.parentElement?.textContent)).toEqual(['伝票番号', '科目', '部門']);
    // Nothing ticked: nothing sent, the problem said.
    submit();
    expect(onAnswer).not.toHaveBeenCalled();
    expect(host.querySelector('[data-testid="question-problem"]')).not.toBeNull();
    // 部門 then 科目: sent in that order; unticking removes one.
    act(() => boxes()[2]?.click());
    act(() => boxes()[1]?.click());
    act(() => boxes()[0]?.click());
    expect(host.querySelectorAll('.column-pick-order')).toHaveLength(3);
    act(() => boxes()[0]?.click());
    submit();
    expect(onAnswer).toHaveBeenCalledWith(expect.objectContaining({ id: 'q' }), ['部門', '科目']);
  });

  it('answers on Enter, but not while an input method is composing', () => {
    const onAnswer = render([req({})]);
    type(input(), '東京');
    act(() => {
      input().dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, isComposing: true }));
    });
    expect(onAnswer).not.toHaveBeenCalled();
    act(() => {
      input().dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    });
    expect(onAnswer).toHaveBeenCalledWith(expect.anything(), '東京');
  });

  it('shows a new question with its own initial answer from its first render on', () => {
    // An answer picked right after the next question appears must not be replaced by that
    // question's initial text a moment later (it was, while the text was reset in an effect:
    // a fast pick was overwritten and the default sent in its place).
    const seen: string[] = [];
    function Probe({ questions }: { questions: Requirement[] }) {
      useLayoutEffect(() => {
        seen.push(host.querySelector<HTMLInputElement | HTMLSelectElement>('[data-testid="question-input"]')?.value ?? '');
      });
      return panel(questions, () => {});
    }
    const first = req({ id: 'vendor', type: 'enum', options: ['取引先名', '金額'] });
    const second = req({ id: 'amount', type: 'enum', options: ['取引先名', '金額'], default: '金額' });
    act(() => root.render(<Probe questions={[first, second]} />));
    type(input(), '取引先名');
    seen.length = 0;
    act(() => root.render(<Probe questions={[second]} />));
    expect(seen[0]).toBe('金額');
    expect((input() as HTMLSelectElement).value).toBe('金額');
  });

  it('says so when nothing needs an answer', () => {
    render([]);
    expect(host.querySelector('[data-testid="questions-empty"]')?.textContent).toBe('確認が必要な項目はありません');
  });
});
