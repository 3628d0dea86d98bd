// The generation inputs: the instruction (IME friendly: Enter while composing never submits),
// reference documents by file dialog or drop with each file's extraction status, and the
// templates to use (multi-select with tag filter and search).

import { useMemo, useRef, useState, type DragEvent } from 'react';
import type { Lang } from '../../api/types';
import type { TemplatesState } from '../catalog/useCatalog';
import { extractionSummary, type DocumentEntry } from './documents';
import { errorText, t } from '../../shared/i18n';
import { TechnicalDetails } from '../../shared/TechnicalDetails';

interface Props {
  lang: Lang;
  instruction: string;
  onInstructionChange(text: string): void;
  documents: readonly DocumentEntry[];
  /** Files the browser holds as bytes (file input, HTML drop). */
  onAddFiles(files: File[]): void;
  /** Opens the desktop file dialog; absent in the browser, where the file input is used. */
  onPickFiles?: () => void;
  onRemoveDocument(key: string): void;
  templates: TemplatesState;
  selectedTemplates: readonly string[];
  onToggleTemplate(id: string): void;
  generateTitle: string;
}

function DocumentRow({ lang, entry, onRemove }: { lang: Lang; entry: DocumentEntry; onRemove(): void }) {
  const cuts = entry.text?.cuts ?? [];
  return (
    <li className={`doc doc-${entry.status}`} data-testid="document" data-status={entry.status} data-name={entry.name}>
      <div className="doc-head">
        <span className="doc-name" translate="no" title={entry.path ?? entry.name}>
          {entry.name}
        </span>
        <span className={`doc-status doc-status-${entry.status}`}>{t(lang, `docs.status.${entry.status}`)}</span>
        <button type="button" className="icon-button" aria-label={t(lang, 'docs.remove')} title={t(lang, 'docs.remove')} onClick={onRemove}>
          ×
        </button>
      </div>
      {entry.status === 'ready' ? (
        <p className="doc-meta" data-testid="document-summary">
          {extractionSummary(lang, entry)}
        </p>
      ) : null}
      {cuts.length > 0 ? (
        <ul className="doc-cuts" data-testid="document-cuts">
          {cuts.map((cut, index) => (
            <li key={index} title={cut.message}>
              {t(lang, 'docs.cut', { limit: cut.limit })}
            </li>
          ))}
        </ul>
      ) : null}
      {entry.error !== null ? (
        <div className="doc-error" data-testid="document-error" data-code={entry.error.code}>
          <p>{errorText(lang, entry.error.code)}</p>
          <TechnicalDetails lang={lang} code={entry.error.code} lines={[entry.error.message]} />
        </div>
      ) : null}
    </li>
  );
}

function TemplatePicker({
  lang,
  state,
  selected,
  onToggle,
}: {
  lang: Lang;
  state: TemplatesState;
  selected: readonly string[];
  onToggle(id: string): void;
}) {
  const [query, setQuery] = useState('');
  const [tag, setTag] = useState<string | null>(null);
  const templates = state.kind === 'ready' ? state.templates : [];
  // Templates carry search tags in both languages; the filter chips show the user's own
  // (the English ones still match in the search box).
  const tags = useMemo(() => {
    const all = [...new Set(templates.flatMap((template) => template.tags))].sort();
    const japanese = /[\u3040-\u30ff\u3400-\u9fff]/u;
    const own = all.filter((name) => japanese.test(name) === (lang === 'ja'));
    return own.length > 0 ? own : all;
  }, [templates, lang]);
  const needle = query.trim().toLowerCase();
  const shown = templates.filter(
    (template) =>
      (tag === null || template.tags.includes(tag)) &&
      (needle === '' ||
        [template.id, template.title, template.title_en, template.description, template.description_en, ...template.tags].some((text) =>
          text.toLowerCase().includes(needle),
        )),
  );
  let body;
  if (state.kind === 'loading') body = <p className="muted">{t(lang, 'templates.loading')}</p>;
  else if (state.kind === 'failed')
    body = (
      <div className="muted">
        <p>{errorText(lang, state.code)}</p>
        <TechnicalDetails lang={lang} code={state.code} />
      </div>
    );
  else if (templates.length === 0) body = <p className="muted">{t(lang, 'templates.empty')}</p>;
  else
    body = (
      <>
        <input
          type="search"
          className="input input-small"
          placeholder={t(lang, 'templates.search')}
          aria-label={t(lang, 'templates.search')}
          value={query}
          id="template-search"
          data-testid="template-search"
          onChange={(event) => setQuery(event.target.value)}
        />
        <div className="chips" role="group" aria-label={t(lang, 'templates.tags')}>
          {tags.slice(0, 14).map((name) => (
            <button
              key={name}
              type="button"
              className={name === tag ? 'chip chip-active' : 'chip'}
              aria-pressed={name === tag}
              onClick={() => setTag(name === tag ? null : name)}
            >
              {name}
            </button>
          ))}
        </div>
        {shown.length === 0 ? <p className="muted">{t(lang, 'templates.noMatch')}</p> : null}
        <ul className="template-list">
          {shown.map((template) => (
            <li key={template.id}>
              <label className="template" data-testid="template" data-template-id={template.id}>
                <input type="checkbox" checked={selected.includes(template.id)} onChange={() => onToggle(template.id)} />
                <span>
                  <span className="template-title">{lang === 'en' && template.title_en ? template.title_en : template.title}</span>
                  <code className="template-id" translate="no">
                    {template.id}
                  </code>
                </span>
              </label>
            </li>
          ))}
        </ul>
      </>
    );
  return (
    <details className="templates">
      <summary>
        {t(lang, 'templates.title')}
        <span className="count-badge">{selected.length === 0 ? t(lang, 'templates.auto') : selected.length}</span>
      </summary>
      {body}
    </details>
  );
}

/** Opens the template picker and puts the cursor in its search box (the composition line's 変更). */
export function openTemplatePicker(): void {
  const picker = document.querySelector<HTMLDetailsElement>('details.templates');
  if (picker !== null) picker.open = true;
  (document.getElementById('template-search') ?? picker?.querySelector('summary'))?.focus();
}

export function InputsPanel(props: Props) {
  const { lang, documents } = props;
  const fileInput = useRef<HTMLInputElement>(null);
  const [dragging, setDragging] = useState(false);

  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    const files = [...event.dataTransfer.files];
    if (files.length > 0) props.onAddFiles(files);
  };

  return (
    <section className="inputs" aria-label={t(lang, 'inputs.title')}>
      <label className="field-label" htmlFor="instruction">
        {t(lang, 'inputs.instruction')}
      </label>
      <textarea
        id="instruction"
        className="input instruction"
        rows={3}
        placeholder={t(lang, 'inputs.placeholder')}
        title={props.generateTitle}
        value={props.instruction}
        data-testid="instruction"
        onChange={(event) => props.onInstructionChange(event.target.value)}
      />
      <div
        className={dragging ? 'dropzone dropzone-active' : 'dropzone'}
        data-testid="dropzone"
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <span className="muted">{t(lang, 'docs.drop')}</span>
        <button
          type="button"
          className="button button-small"
          data-testid="add-documents"
          onClick={() => (props.onPickFiles ? props.onPickFiles() : fileInput.current?.click())}
        >
          {t(lang, 'docs.add')}
        </button>
        <input
          ref={fileInput}
          type="file"
          multiple
          hidden
          accept=".pdf,.docx,.xlsx,.xlsm,.csv,.tsv,.txt,.md"
          data-testid="document-input"
          onChange={(event) => {
            const files = [...(event.target.files ?? [])];
            event.target.value = '';
            if (files.length > 0) props.onAddFiles(files);
          }}
        />
      </div>
      {documents.length > 0 ? (
        <ul className="doc-list" data-testid="documents">
          {documents.map((entry) => (
            <DocumentRow key={entry.key} lang={lang} entry={entry} onRemove={() => props.onRemoveDocument(entry.key)} />
          ))}
        </ul>
      ) : null}
      <TemplatePicker lang={lang} state={props.templates} selected={props.selectedTemplates} onToggle={props.onToggleTemplate} />
    </section>
  );
}
