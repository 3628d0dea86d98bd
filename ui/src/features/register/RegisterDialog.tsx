// The register step: the plan's name, proposed from the instruction, and the exact file it
// will be saved as. The stamp in that file name is fixed when the step opens and sent with
// the request, so the file written is the one shown even if the minute rolls over while the
// person types.

import { useEffect, useRef, useState } from 'react';
import type { Lang } from '../../api/types';
import { messageParts, t } from '../../shared/i18n';
import { targetFileName } from './register';

interface Props {
  lang: Lang;
  /** The name as typed (kept by the caller, so Ctrl+S can confirm it too). */
  name: string;
  onNameChange(name: string): void;
  /** `yyyymmddHHMM`, fixed when the step opened. */
  stamp: string;
  busy: boolean;
  onConfirm(name: string): void;
  onCancel(): void;
}

export function RegisterDialog({ lang, name, onNameChange, stamp, busy, onConfirm, onCancel }: Props) {
  const [tried, setTried] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    input.current?.focus();
    input.current?.select();
  }, []);
  const trimmed = name.trim();
  const submit = () => {
    setTried(true);
    if (trimmed !== '' && !busy) onConfirm(trimmed);
  };
  return (
    <form
      className="register-dialog"
      data-testid="register-dialog"
      aria-label={t(lang, 'register.dialogTitle')}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.preventDefault();
          onCancel();
        }
      }}
    >
      <h3 className="register-dialog-title">{t(lang, 'register.dialogTitle')}</h3>
      <label className="field-label" htmlFor="register-name">
        {t(lang, 'register.nameLabel')}
      </label>
      <input
        id="register-name"
        ref={input}
        className="input"
        data-testid="register-name"
        value={name}
        onChange={(event) => onNameChange(event.target.value)}
        aria-invalid={tried && trimmed === ''}
      />
      <p className="muted register-dialog-hint">{t(lang, 'register.nameHint')}</p>
      {tried && trimmed === '' ? (
        <p className="register-blocked" role="alert">
          {t(lang, 'register.nameEmpty')}
        </p>
      ) : null}
      <p className="register-dialog-file">
        {messageParts(lang, 'register.willSave').map((part, index) =>
          'text' in part ? (
            <span key={index}>{part.text}</span>
          ) : (
            <code key={index} data-testid="register-preview" translate="no">
              {targetFileName(trimmed === '' ? '…' : trimmed, stamp)}
            </code>
          ),
        )}
      </p>
      <div className="register-dialog-actions">
        <button type="submit" className="button button-primary" data-testid="register-confirm" disabled={busy || trimmed === ''}>
          {busy ? t(lang, 'status.registering') : t(lang, 'register.confirm')}
        </button>
        <button type="button" className="button" data-testid="register-cancel" onClick={onCancel}>
          {t(lang, 'register.cancel')}
        </button>
      </div>
    </form>
  );
}
