// The Design chat's requirement flow: the plan's open questions asked one at a time, each
// with the control its type wants (text, select/enum, boolean, number, file, table), its hint
// and its checks; the answers given so far are shown as the `vars` they add.

import { useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { Lang, Requirement } from '../../api/types';
import type { DocumentEntry } from './documents';
import { errorText, t } from '../../shared/i18n';
import { acceptedExtensions, controlFor, initialAnswerText, optionText, parseAnswer, pickedColumns, requirementText, togglePick, varsPreview } from './requirements';
import { isComposing } from '../../shared/shortcuts';

interface Props {
  lang: Lang;
  /** Open questions, in the order they are asked. */
  questions: readonly Requirement[];
  /** Every requirement seen, for the preview's var names. */
  known: readonly Requirement[];
  answers: Readonly<Record<string, unknown>>;
  /** The question to show first (from "ask" in the missing items), if open. */
  focusId: string | null;
  documents: readonly DocumentEntry[];
  busy: boolean;
  error: { code: string; message: string } | null;
  /** Answers wait for a new generation (the planner asked them; the plan cannot take them). */
  regenerate: { count: number; running: boolean } | null;
  onAnswer(requirement: Requirement, value: unknown): void;
  onRegenerate(): void;
  /**
   * Puts a file where the plan can read it and resolves with its path: the browser passes the
   * chosen `File` (uploaded), the desktop app passes null (its own file dialog).
   */
  onChooseFile(file: File | null): Promise<string | null>;
  /** True in the desktop app, whose file dialog replaces `<input type=file>`. */
  nativePicker: boolean;
}

/** 「ファイルを選ぶ」: the desktop app's file dialog, or the browser's file input (uploaded). */
export function FilePicker({
  lang,
  accept,
  nativePicker,
  onChooseFile,
  setText,
}: {
  lang: Lang;
  accept: string | undefined;
  nativePicker: boolean;
  onChooseFile(file: File | null): Promise<string | null>;
  setText(text: string): void;
}) {
  const input = useRef<HTMLInputElement>(null);
  const [busy, setBusy] = useState(false);
  const choose = async (file: File | null) => {
    setBusy(true);
    try {
      const path = await onChooseFile(file);
      if (path !== null) setText(path);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        className="button button-small"
        data-testid="question-file-pick"
        disabled={busy}
        onClick={() => (nativePicker ? void choose(null) : input.current?.click())}
      >
        {t(lang, busy ? 'docs.status.uploading' : 'question.chooseFile')}
      </button>
      <input
        ref={input}
        type="file"
        hidden
        accept={accept}
        data-testid="question-file-input"
        onChange={(event) => {
          const file = event.target.files?.[0] ?? null;
          event.target.value = '';
          if (file !== null) void choose(file);
        }}
      />
    </>
  );
}

function Control({
  lang,
  requirement,
  text,
  setText,
  documents,
  nativePicker,
  onChooseFile,
}: {
  lang: Lang;
  requirement: Requirement;
  text: string;
  setText(text: string): void;
  documents: readonly DocumentEntry[];
  nativePicker: boolean;
  onChooseFile(file: File | null): Promise<string | null>;
}) {
  const control = controlFor(requirement);
  const common = { id: `question-${requirement.id}`, 'data-testid': 'question-input', 'data-control': control };
  switch (control) {
    case 'select':
      return (
        <select {...common} className="input" value={text} onChange={(event) => setText(event.target.value)}>
          <option value="">{t(lang, 'question.choose')}</option>
          {(requirement.options ?? []).map((option) => (
            <option key={optionText(option)} value={optionText(option)}>
              {optionText(option)}
            </option>
          ))}
        </select>
      );
    case 'columns': {
      // Ticked in the order wanted (the first column groups first); the text is the list.
      const picked = pickedColumns(text);
      return (
        <div {...common} role="group" className="column-picks">
          {(requirement.options ?? []).map((option) => {
            const name = optionText(option);
            const order = picked.indexOf(name);
            return (
              <label key={name} className={order >= 0 ? 'column-pick column-pick-on' : 'column-pick'}>
                <input type="checkbox" data-testid="question-column" checked={order >= 0} onChange={() => setText(togglePick(text, name))} />
                {name}
                {order >= 0 && picked.length > 1 ? <span className="column-pick-order">{order + 1}</span> : null}
              </label>
            );
          })}
        </div>
      );
    }
    case 'boolean':
      return (
        <div className="segmented" role="radiogroup" {...common}>
          {(['true', 'false'] as const).map((value) => (
            <button
              key={value}
              type="button"
              role="radio"
              aria-checked={text === value}
              className={text === value ? 'segment segment-active' : 'segment'}
              onClick={() => setText(value)}
            >
              {t(lang, value === 'true' ? 'question.yes' : 'question.no')}
            </button>
          ))}
        </div>
      );
    case 'number':
      return <input {...common} className="input" type="text" inputMode="decimal" value={text} onChange={(event) => setText(event.target.value)} />;
    case 'file': {
      const ready = documents.filter((entry) => entry.path !== null);
      return (
        <div className="file-answer">
          {ready.length > 0 ? (
            <select className="input" aria-label={t(lang, 'question.fromDocuments')} data-testid="question-file-choice" value="" onChange={(event) => setText(event.target.value)}>
              <option value="">{t(lang, 'question.fromDocuments')}</option>
              {ready.map((entry) => (
                <option key={entry.key} value={entry.path ?? ''}>
                  {entry.path}
                </option>
              ))}
            </select>
          ) : null}
          <div className="file-answer-row">
            <input {...common} className="input" type="text" placeholder={requirement.accept ?? ''} value={text} onChange={(event) => setText(event.target.value)} />
            <FilePicker lang={lang} accept={acceptedExtensions(requirement).join(',') || undefined} nativePicker={nativePicker} onChooseFile={onChooseFile} setText={setText} />
          </div>
        </div>
      );
    }
    case 'table':
    case 'textarea':
      return (
        <textarea
          {...common}
          className="input input-mono"
          rows={5}
          placeholder={t(lang, control === 'table' ? 'question.tablePlaceholder' : 'question.jsonPlaceholder')}
          value={text}
          onChange={(event) => setText(event.target.value)}
        />
      );
    case 'text':
      return <input {...common} className="input" type="text" value={text} onChange={(event) => setText(event.target.value)} />;
  }
}

export function QuestionsPanel(props: Props) {
  const { lang, questions, answers } = props;
  const current = questions.find((question) => question.id === props.focusId) ?? questions[0] ?? null;
  // The draft answer belongs to the question it was typed for. A new question starts from its
  // own initial text in the same render, not in an effect after it: an answer chosen before
  // such an effect ran would be overwritten by the initial text and sent in its place.
  const [draft, setDraft] = useState<{ id: string; text: string; problem: string | null } | null>(null);
  const own = current !== null && draft !== null && draft.id === current.id ? draft : null;
  const text = own?.text ?? (current ? initialAnswerText(current) : '');
  const problem = own?.problem ?? null;
  const setText = (next: string) => {
    if (current !== null) setDraft({ id: current.id, text: next, problem: null });
  };
  const setProblem = (next: string | null) => {
    if (current !== null) setDraft({ id: current.id, text, problem: next });
  };
  const form = useRef<HTMLFormElement>(null);

  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (current === null || props.busy) return;
    const checked = parseAnswer(current, text);
    if (!checked.ok) {
      setProblem(t(lang, checked.error, checked.params ?? {}));
      return;
    }
    setProblem(null);
    props.onAnswer(current, checked.value);
  };

  // Enter in a one-line field answers, unless an input method is composing (Japanese IME).
  const onKeyDown = (event: KeyboardEvent<HTMLFormElement>) => {
    if (event.key !== 'Enter' || isComposing(event.nativeEvent) || event.ctrlKey || event.metaKey) return;
    if (event.target instanceof HTMLInputElement) {
      event.preventDefault();
      submit();
    }
  };

  const preview = varsPreview(props.known, answers);
  const position = current === null ? 0 : questions.indexOf(current) + 1;
  const texts = current ? requirementText(current, lang) : null;

  return (
    <div className="questions" data-testid="questions">
      {current === null || texts === null ? (
        <p className="empty-note" data-testid="questions-empty">
          {Object.keys(answers).length > 0 ? t(lang, 'question.allAnswered') : t(lang, 'question.none')}
        </p>
      ) : (
        <form ref={form} className="question" data-testid="question" data-requirement-id={current.id} data-type={current.type} onSubmit={submit} onKeyDown={onKeyDown}>
          <p className="question-count">{t(lang, 'question.count', { n: position, total: questions.length })}</p>
          <label className="question-label" htmlFor={`question-${current.id}`}>
            {texts.label}
            {current.required ? <span className="required-mark">*</span> : null}
          </label>
          {texts.description && texts.description !== texts.label ? <p className="question-description">{texts.description}</p> : null}
          <Control
            lang={lang}
            requirement={current}
            text={text}
            setText={setText}
            documents={props.documents}
            nativePicker={props.nativePicker}
            onChooseFile={props.onChooseFile}
          />
          {texts.hint ? <p className="question-hint">{t(lang, 'findings.hint')}: {texts.hint}</p> : null}
          {current.validation?.regex ? <p className="question-hint">{t(lang, 'question.patternHint', { pattern: current.validation.regex })}</p> : null}
          {problem !== null ? (
            <p className="question-problem" role="alert" data-testid="question-problem">
              {problem}
            </p>
          ) : null}
          {props.error !== null ? (
            <p className="question-problem" role="alert" data-testid="question-error" data-code={props.error.code} title={props.error.message}>
              {errorText(lang, props.error.code)} <code>{props.error.code}</code> {props.error.message}
            </p>
          ) : null}
          <div className="question-actions">
            <button type="submit" className="button button-primary" data-testid="question-submit" disabled={props.busy}>
              {t(lang, 'question.answer')}
            </button>
          </div>
        </form>
      )}
      {props.regenerate !== null ? (
        <div className="notice notice-warning" data-testid="regenerate-note">
          <span>{t(lang, 'question.regenerateNote', { count: props.regenerate.count })}</span>
          <button type="button" className="button button-small" data-testid="regenerate" disabled={props.regenerate.running} onClick={props.onRegenerate}>
            {t(lang, 'question.regenerate')}
          </button>
        </div>
      ) : null}
      <div className="vars-preview">
        <h3>{t(lang, 'question.varsPreview')}</h3>
        {preview === '' ? <p className="muted">{t(lang, 'question.noAnswers')}</p> : <pre data-testid="vars-preview" translate="no">{preview}</pre>}
      </div>
    </div>
  );
}
