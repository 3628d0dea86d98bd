// The studio window: header with language switch, and the Design tab (catalog, YAML editor
// with live validation, findings, register).

import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, catalogList, isTauri, planRegister, planValidate } from './api';
import type { BlockSummary, Finding, Lang, PlanValidateResponse } from './api/types';
import { insertNode } from './catalog';
import { CatalogPanel, type CatalogState } from './components/CatalogPanel';
import { FindingsPanel, type FindingsState } from './components/FindingsPanel';
import { YamlEditor, type YamlEditorHandle } from './components/YamlEditor';
import { LANGS, errorText, initialLang, messageParts, t } from './i18n';
import { SAMPLE_PLAN } from './samplePlan';

/** How long typing must pause before the plan is validated again. */
export const VALIDATE_DEBOUNCE_MS = 400;
const LANG_STORAGE_KEY = 'keiri.lang';

type Notice = { kind: 'saved'; fileName: string } | { kind: 'error'; code: string; message: string };

function asApiError(err: unknown): ApiError {
  return err instanceof ApiError ? err : new ApiError('INTERNAL', String(err));
}

function readStoredLang(): string | null {
  try {
    return window.localStorage.getItem(LANG_STORAGE_KEY);
  } catch {
    // Storage can be disabled (private mode, sandboxed webview); the default still works.
    return null;
  }
}

function findingsFromDetails(details: unknown): Finding[] | null {
  if (typeof details !== 'object' || details === null) return null;
  const findings = (details as { findings?: unknown }).findings;
  return Array.isArray(findings) ? (findings as Finding[]) : null;
}

export function App() {
  const [lang, setLang] = useState<Lang>(() => initialLang(readStoredLang()));
  const [catalog, setCatalog] = useState<CatalogState>({ kind: 'loading' });
  const [text, setText] = useState(SAMPLE_PLAN);
  const [findingsState, setFindingsState] = useState<FindingsState>({ kind: 'pending' });
  const [summary, setSummary] = useState<PlanValidateResponse | null>(null);
  const [validating, setValidating] = useState(false);
  const [registering, setRegistering] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const editor = useRef<YamlEditorHandle>(null);
  // Every edit bumps the sequence so a response for an older text is dropped: findings are
  // only ever shown against the text they were computed for.
  const sequence = useRef(0);
  const textRef = useRef(text);
  const langRef = useRef(lang);
  langRef.current = lang;

  useEffect(() => {
    document.title = t(lang, 'app.title');
    document.documentElement.lang = lang;
    try {
      window.localStorage.setItem(LANG_STORAGE_KEY, lang);
    } catch {
      // Not remembering the choice is fine.
    }
  }, [lang]);

  useEffect(() => {
    let cancelled = false;
    catalogList({})
      .then((response) => {
        if (!cancelled) setCatalog({ kind: 'ready', blocks: response.blocks, issues: response.issues });
      })
      .catch((err: unknown) => {
        const error = asApiError(err);
        if (!cancelled) setCatalog({ kind: 'failed', message: `${errorText(langRef.current, error.code)} (${error.code})` });
      });
    return () => {
      cancelled = true;
    };
  }, []);

  const validate = useCallback(async (yaml: string, language: Lang) => {
    sequence.current += 1;
    const id = sequence.current;
    if (yaml.trim() === '') {
      setFindingsState({ kind: 'empty-doc' });
      setSummary(null);
      setValidating(false);
      return;
    }
    setValidating(true);
    try {
      const response = await planValidate({ yaml, lang: language });
      if (id !== sequence.current) return;
      setFindingsState({ kind: 'done', findings: response.findings });
      setSummary(response);
    } catch (err) {
      if (id !== sequence.current) return;
      const error = asApiError(err);
      setFindingsState({
        kind: 'failed',
        message: t(language, 'validate.failed', { message: `${errorText(language, error.code)} (${error.code})` }),
      });
      setSummary(null);
    } finally {
      if (id === sequence.current) setValidating(false);
    }
  }, []);

  // Validate once typing pauses, and again when the language changes so the validator's
  // messages follow it.
  useEffect(() => {
    const timer = window.setTimeout(() => void validate(text, lang), VALIDATE_DEBOUNCE_MS);
    return () => window.clearTimeout(timer);
  }, [text, lang, validate]);

  const onChange = useCallback((next: string) => {
    textRef.current = next;
    sequence.current += 1;
    setText(next);
    // A saved/failed notice describes the text as it was; once edited it would mislead.
    setNotice(null);
  }, []);

  const onValidateNow = () => void validate(textRef.current, lang);

  const onRegister = async () => {
    const yaml = textRef.current;
    const id = sequence.current;
    setRegistering(true);
    setNotice(null);
    try {
      const response = await planRegister({ yaml, lang });
      setNotice({ kind: 'saved', fileName: response.file_name });
    } catch (err) {
      const error = asApiError(err);
      setNotice({ kind: 'error', code: error.code, message: error.message });
      const findings = error.code === 'PLAN_INVALID' ? findingsFromDetails(error.details) : null;
      if (findings !== null && id === sequence.current) {
        setFindingsState({ kind: 'done', findings });
      }
    } finally {
      setRegistering(false);
    }
  };

  const onInsert = (block: BlockSummary) => {
    const { text: next, cursor } = insertNode(block, textRef.current);
    editor.current?.setText(next, cursor);
  };

  const findings = findingsState.kind === 'done' ? findingsState.findings : [];
  let status: { tone: string; text: string };
  if (validating) {
    status = { tone: 'busy', text: t(lang, 'status.validating') };
  } else if (summary === null) {
    status = { tone: 'idle', text: t(lang, 'editor.hint') };
  } else if (summary.error_count === 0 && summary.warning_count === 0) {
    status = { tone: 'ok', text: t(lang, 'status.valid') };
  } else {
    status = {
      tone: summary.error_count > 0 ? 'error' : 'warning',
      text: t(lang, 'status.counts', { errors: summary.error_count, warnings: summary.warning_count }),
    };
  }

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <img className="brand-mark" src="/icon.svg" alt="" width={28} height={28} />
          <div>
            <h1 className="brand-name">{t(lang, 'app.title')}</h1>
            <p className="brand-tagline">{t(lang, 'app.tagline')}</p>
          </div>
        </div>
        <nav className="tabs" role="tablist">
          <button type="button" role="tab" aria-selected="true" className="tab tab-active" data-testid="tab-design">
            {t(lang, 'tab.design')}
          </button>
        </nav>
        <div className="topbar-end">
          <span className="mode-badge" data-testid="mode">
            {t(lang, isTauri() ? 'mode.desktop' : 'mode.browser')}
          </span>
          <div className="segmented" role="group" aria-label={t(lang, 'lang.label')}>
            {LANGS.map((code) => (
              <button
                key={code}
                type="button"
                className={code === lang ? 'segment segment-active' : 'segment'}
                aria-pressed={code === lang}
                data-testid={`lang-${code}`}
                onClick={() => setLang(code)}
              >
                {t(lang, code === 'ja' ? 'lang.ja' : 'lang.en')}
              </button>
            ))}
          </div>
        </div>
      </header>

      <main className="design">
        <CatalogPanel state={catalog} lang={lang} onInsert={onInsert} />

        <section className="panel editor-panel" aria-label={t(lang, 'editor.title')}>
          <header className="panel-header toolbar">
            <h2>{t(lang, 'editor.title')}</h2>
            <span className={`status status-${status.tone}`} data-testid="validation-status" data-tone={status.tone}>
              {status.text}
            </span>
            <div className="toolbar-actions">
              <button
                type="button"
                className="button"
                title={t(lang, 'action.validateTitle')}
                data-testid="validate"
                onClick={onValidateNow}
              >
                {t(lang, 'action.validate')}
              </button>
              <button
                type="button"
                className="button button-primary"
                title={t(lang, 'action.registerTitle')}
                data-testid="register"
                disabled={registering}
                onClick={() => void onRegister()}
              >
                {registering ? t(lang, 'status.registering') : t(lang, 'action.register')}
              </button>
            </div>
          </header>
          {notice !== null ? (
            <div
              className={`notice notice-${notice.kind === 'saved' ? 'ok' : 'error'}`}
              role="status"
              data-testid="register-result"
              data-state={notice.kind === 'saved' ? 'ok' : 'error'}
              data-code={notice.kind === 'error' ? notice.code : undefined}
            >
              {notice.kind === 'saved' ? (
                <span>
                  {messageParts(lang, 'register.saved').map((part, index) =>
                    'text' in part ? (
                      <span key={index}>{part.text}</span>
                    ) : (
                      <code key={index} data-testid="register-file">
                        {notice.fileName}
                      </code>
                    ),
                  )}
                </span>
              ) : (
                <span title={notice.message}>
                  {t(lang, 'register.failed', { message: errorText(lang, notice.code) })} <code>{notice.code}</code>
                </span>
              )}
              <button type="button" className="notice-close" aria-label={t(lang, 'notice.close')} onClick={() => setNotice(null)}>
                ×
              </button>
            </div>
          ) : null}
          <div className="editor-frame">
            <YamlEditor
              ref={editor}
              initialText={SAMPLE_PLAN}
              findings={findings}
              lang={lang}
              label={t(lang, 'editor.label')}
              onChange={onChange}
            />
          </div>
        </section>

        <FindingsPanel state={findingsState} lang={lang} onSelect={(finding) => editor.current?.reveal(finding)} />
      </main>
    </div>
  );
}
