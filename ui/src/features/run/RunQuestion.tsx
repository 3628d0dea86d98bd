// A paused node's question (human-in-the-loop blocks, crates/keiri-run/src/blocks/ui.rs) as
// the controls its `kind` calls for; `onAnswer` gets the answer in the block's own shape.
// The block checks the answer again, so these controls only offer what fits.

import { useState, type ReactElement } from 'react';
import type { Lang, RunPaused } from '../../api/types';
import { t } from '../../shared/i18n';
import { buildSheetGrids, diffItemsOf } from '../workbook/workbookGrid';
import { cellDisplay, columnHeader, formatAmount, readLabels, tableColumns, valueAt, type QuestionLabels, type Row } from './questionTable';
import { DesignChangesView, SheetGridView } from '../workbook/WorkbookDiff';

interface Props {
  lang: Lang;
  paused: RunPaused;
  busy: boolean;
  onAnswer(answer: unknown): void;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function rowsOf(value: unknown): Row[] {
  return Array.isArray(value) ? value.filter((r): r is Row => typeof r === 'object' && r !== null && !Array.isArray(r)) : [];
}

function Details({ lang, value, labels }: { lang: Lang; value: unknown; labels: unknown }) {
  if (value === null || value === undefined) return null;
  const rows = rowsOf(value);
  if (rows.length > 0) {
    const columns = tableColumns(rows, null);
    const known = readLabels(labels);
    return (
      <div className="run-grid-scroll">
        <table className="run-grid" data-testid="question-details">
          <thead>
            <tr>
              {columns.map((c) => (
                <th key={c.key} scope="col" data-column={c.key}>
                  {columnHeader(c, known, lang)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.slice(0, 200).map((row, i) => (
              <tr key={i}>
                {columns.map((c) => (
                  <td key={c.key}>{cellDisplay(valueAt(row, c), c, known, lang)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    );
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    // One object (a summary: 件数, 重要度別の件数, …): a row per item, in words.
    const known = readLabels(labels);
    return (
      <table className="run-grid run-grid-pairs" data-testid="question-details">
        <tbody>
          {Object.entries(value as Record<string, unknown>).map(([key, item]) => (
            <tr key={key} data-testid="question-detail" data-key={key}>
              <th scope="row">{known.columns[key]?.[lang] ?? <span translate="no">{key}</span>}</th>
              <td>{detailText(key, item, known, lang)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  return (
    // Data the plan passed to the question, quoted as it is (like the YAML editor).
    <pre className="dryrun-json" data-testid="question-details" translate="no">
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** One item of an object's details as a person reads it; a `by_<column>` object counts codes of <column>. */
function detailText(key: string, item: unknown, known: QuestionLabels, lang: Lang): string {
  if (item !== null && typeof item === 'object' && !Array.isArray(item)) {
    const entries = Object.entries(item as Record<string, unknown>);
    if (entries.length === 0) return t(lang, 'run.q.none');
    const codes = known.values[key.replace(/^by_/, '')] ?? {};
    return entries
      .map(([code, count]) => `${codes[code]?.[lang] ?? code} ${typeof count === 'object' ? JSON.stringify(count) : String(count)}`)
      .join(lang === 'ja' ? '、' : ', ');
  }
  return cellDisplay(item, { key, path: [key], topLevel: true }, known, lang);
}

function YesNo({ lang, busy, yes, no, onAnswer, comment }: { lang: Lang; busy: boolean; yes: string; no: string; onAnswer(approved: boolean): void; comment?: ReactElement }) {
  return (
    <div className="question-actions">
      {comment}
      <button type="button" className="button button-primary" data-testid="question-approve" disabled={busy} onClick={() => onAnswer(true)}>
        {yes !== '' ? yes : t(lang, 'run.q.approve')}
      </button>
      <button type="button" className="button" data-testid="question-reject" disabled={busy} onClick={() => onAnswer(false)}>
        {no !== '' ? no : t(lang, 'run.q.reject')}
      </button>
    </div>
  );
}

/** The comment a person leaves with an answer (kept in the run record). */
function CommentBox({ lang, value, onChange }: { lang: Lang; value: string; onChange(value: string): void }) {
  return (
    <input
      className="input question-comment"
      data-testid="question-comment"
      placeholder={t(lang, 'run.q.comment')}
      value={value}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}

export function RunQuestion({ lang, paused, busy, onAnswer }: Props) {
  const q = paused.question;
  const kind = str(q.kind);
  const [comment, setComment] = useState('');
  const commentBox = <CommentBox lang={lang} value={comment} onChange={setComment} />;
  let body: ReactElement;
  switch (kind) {
    case 'confirmation':
      body = (
        <>
          <p className="question-message">{str(q.message)}</p>
          <Details lang={lang} value={q.details} labels={q.labels} />
          <YesNo
            lang={lang}
            busy={busy}
            yes={str(q.confirm_label)}
            no={str(q.cancel_label)}
            comment={commentBox}
            onAnswer={(approved) => onAnswer({ approved, comment })}
          />
        </>
      );
      break;
    case 'diff': {
      const diff = diffItemsOf(Array.isArray(q.patch_diff) ? q.patch_diff : []);
      body = (
        <>
          <p className="question-message">{str(q.title)}</p>
          {buildSheetGrids(diff).map((grid) => (
            <SheetGridView key={grid.sheet} lang={lang} grid={grid} />
          ))}
          <DesignChangesView lang={lang} diff={diff} />
          <YesNo lang={lang} busy={busy} yes="" no="" comment={commentBox} onAnswer={(approved) => onAnswer({ approved, comment })} />
        </>
      );
      break;
    }
    case 'table_review':
      body = <TableReview lang={lang} paused={paused} busy={busy} onAnswer={onAnswer} />;
      break;
    case 'input':
      body = <InputForm lang={lang} paused={paused} busy={busy} onAnswer={onAnswer} />;
      break;
    case 'approval':
      body = <ApprovalForm lang={lang} paused={paused} busy={busy} onAnswer={onAnswer} />;
      break;
    default:
      body = <p className="muted">{t(lang, 'run.q.unknown', { kind })}</p>;
  }
  return (
    <div className="run-question" data-testid="run-question" data-node-id={paused.node} data-kind={kind}>
      <h3>{t(lang, 'run.q.title', { node: paused.node })}</h3>
      {body}
    </div>
  );
}

function TableReview({ lang, paused, busy, onAnswer }: Props) {
  const q = paused.question;
  const rows = rowsOf(q.rows);
  const columns = tableColumns(rows, q.columns);
  const known = readLabels(q.labels);
  const editable = Array.isArray(q.editable_columns) ? q.editable_columns.map(String) : [];
  const allowExclude = q.allow_exclude !== false;
  const [excluded, setExcluded] = useState<number[]>([]);
  const [edits, setEdits] = useState<Record<string, string>>({});
  const answer = (approved: boolean) => {
    const changes = Object.entries(edits).map(([key, after]) => {
      const [index, field] = [Number(key.slice(0, key.indexOf(':'))), key.slice(key.indexOf(':') + 1)];
      return { row_index: index, field, after };
    });
    onAnswer({ approved, excluded, changes });
  };
  return (
    <>
      <p className="question-message">
        {str(q.title)} {str(q.message)}
      </p>
      <div className="run-grid-scroll">
        <table className="run-grid" data-testid="question-table">
          <thead>
            <tr>
              {allowExclude ? <th scope="col">{t(lang, 'run.q.exclude')}</th> : null}
              {columns.map((c) => (
                <th key={c.key} scope="col" data-column={c.key}>
                  {columnHeader(c, known, lang)}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row, i) => (
              <tr key={i} data-testid="question-row">
                {allowExclude ? (
                  <td>
                    <input
                      type="checkbox"
                      data-testid="question-exclude"
                      checked={excluded.includes(i)}
                      onChange={(e) => setExcluded((list) => (e.target.checked ? [...list, i] : list.filter((x) => x !== i)))}
                    />
                  </td>
                ) : null}
                {columns.map((c) =>
                  c.topLevel && editable.includes(c.key) ? (
                    <td key={c.key}>
                      <input
                        className="input"
                        data-testid="question-edit"
                        aria-label={columnHeader(c, known, lang)}
                        value={edits[`${i}:${c.key}`] ?? cellText(row[c.key])}
                        onChange={(e) => setEdits((all) => ({ ...all, [`${i}:${c.key}`]: e.target.value }))}
                      />
                    </td>
                  ) : (
                    <td key={c.key}>{cellDisplay(valueAt(row, c), c, known, lang)}</td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <YesNo lang={lang} busy={busy} yes="" no="" onAnswer={answer} />
    </>
  );
}

interface Field {
  id: string;
  label: string;
  type: string;
  options: string[];
  required: boolean;
}

function fieldsOf(value: unknown): Field[] {
  return rowsOf(value).map((f) => ({
    id: str(f.id),
    label: str(f.label) || str(f.id),
    type: str(f.type) || 'text',
    options: Array.isArray(f.options) ? f.options.map(String) : [],
    required: f.required !== false,
  }));
}

function InputForm({ lang, paused, busy, onAnswer }: Props) {
  const fields = fieldsOf(paused.question.fields);
  const [values, setValues] = useState<Record<string, unknown>>({});
  const missing = fields.filter((f) => f.required && (values[f.id] === undefined || values[f.id] === ''));
  const set = (id: string, value: unknown) => setValues((all) => ({ ...all, [id]: value }));
  return (
    <form
      className="question-form"
      onSubmit={(e) => {
        e.preventDefault();
        if (missing.length === 0) onAnswer({ values, approved: true });
      }}
    >
      <p className="question-message">{str(paused.question.message)}</p>
      {fields.map((f) => (
        <label key={f.id} className="question-field" data-testid="question-field" data-field={f.id}>
          <span>
            {f.label}
            {f.required ? ' *' : ''}
          </span>
          {f.type === 'boolean' ? (
            <input type="checkbox" checked={values[f.id] === true} onChange={(e) => set(f.id, e.target.checked)} />
          ) : (f.type === 'select' || f.type === 'enum') && f.options.length > 0 ? (
            <select className="input" value={str(values[f.id])} onChange={(e) => set(f.id, e.target.value)}>
              <option value="" />
              {f.options.map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          ) : (
            <input
              className="input"
              type={f.type === 'number' ? 'number' : 'text'}
              value={cellText(values[f.id])}
              onChange={(e) => set(f.id, f.type === 'number' ? (e.target.value === '' ? '' : Number(e.target.value)) : e.target.value)}
            />
          )}
        </label>
      ))}
      <div className="question-actions">
        <button type="submit" className="button button-primary" data-testid="question-submit" disabled={busy || missing.length > 0}>
          {t(lang, 'run.q.submit')}
        </button>
      </div>
    </form>
  );
}

function ApprovalForm({ lang, paused, busy, onAnswer }: Props) {
  const route = Array.isArray(paused.question.route) ? paused.question.route.map(String) : [];
  // Each approver's role as the plan gives it (佐藤 一郎 — 経理課長), beside the name.
  const roles = new Map(
    (Array.isArray(paused.question.approvers) ? paused.question.approvers : [])
      .filter((a): a is Record<string, unknown> => typeof a === 'object' && a !== null)
      .map((a) => [String(a.name ?? ''), typeof a.role === 'string' ? a.role.trim() : ''] as const),
  );
  const signed = paused.question.require_signature === true;
  const [decisions, setDecisions] = useState<Record<string, string>>({});
  const [signatures, setSignatures] = useState<Record<string, string>>({});
  const [comment, setComment] = useState('');
  const done = route.every(
    (name) =>
      (decisions[name] === 'approved' || decisions[name] === 'rejected') && (!signed || (signatures[name] ?? '').trim() !== ''),
  );
  const amount = paused.question.amount;
  return (
    <>
      <p className="question-message">
        {str(paused.question.subject)}
        {typeof amount === 'number' ? (
          <span className="question-amount" data-testid="question-amount">
            {' '}
            {t(lang, 'run.q.amount', { amount: formatAmount(amount) })}
          </span>
        ) : null}
      </p>
      <Details lang={lang} value={paused.question.details} labels={paused.question.labels} />
      {route.map((name) => (
        <div key={name} className="question-approver" data-testid="question-approver" data-approver={name}>
          <label className="question-field">
            <span>
              {name}
              {roles.get(name) ? <span className="question-role">（{roles.get(name)}）</span> : null}
            </span>
            <select className="input" value={decisions[name] ?? ''} onChange={(e) => setDecisions((all) => ({ ...all, [name]: e.target.value }))}>
              <option value="" />
              <option value="approved">{t(lang, 'run.q.approve')}</option>
              <option value="rejected">{t(lang, 'run.q.reject')}</option>
            </select>
          </label>
          {signed ? (
            <label className="question-field">
              <span>{t(lang, 'run.q.signature', { name })}</span>
              <input
                className="input"
                data-testid="question-signature"
                value={signatures[name] ?? ''}
                placeholder={name}
                onChange={(e) => setSignatures((all) => ({ ...all, [name]: e.target.value }))}
              />
            </label>
          ) : null}
        </div>
      ))}
      {signed ? <p className="muted">{t(lang, 'run.q.signature_hint')}</p> : null}
      <CommentBox lang={lang} value={comment} onChange={setComment} />
      <div className="question-actions">
        <button
          type="button"
          className="button button-primary"
          data-testid="question-submit"
          disabled={busy || !done}
          onClick={() =>
            onAnswer({
              decisions: route.map((name) => ({
                approver: name,
                decision: decisions[name],
                comment,
                ...(signed ? { signed_by: (signatures[name] ?? '').trim() } : {}),
              })),
            })
          }
        >
          {t(lang, 'run.q.submit')}
        </button>
      </div>
    </>
  );
}
