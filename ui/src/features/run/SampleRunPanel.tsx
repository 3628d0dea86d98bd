// 試行実行: one button runs the plan for real (`plan_run`); each node's state, duration and row
// count follow the run's events; picking a node shows its outputs — tables as a grid of their
// first rows with the column types and the full row count, other values as JSON — and the
// workbook it wrote, cell by cell, in the same before/after grid as the dry run. Inputs are
// only read and every file the run writes stays in its run directory.

import { useEffect, useState } from 'react';
import { ApiError, runApply, runList, runOutput, runUndoApply } from '../../api';
import type { Lang, OutputPreview, RunOutputResponse, RunSummary } from '../../api/types';
import { errorText, t, type MessageKey } from '../../shared/i18n';
import { warningCount, type NodeRun, type SampleRun } from './sampleRun';
import { baseName, buildSheetGrids } from '../workbook/workbookGrid';
import { DesignChangesView, SheetGridView } from '../workbook/WorkbookDiff';
import { cellDisplay, columnHeader, readLabels } from './questionTable';
import { RunQuestion } from './RunQuestion';
import { TechnicalDetails } from '../../shared/TechnicalDetails';

interface Props {
  lang: Lang;
  /** The plan text in the editor now (to tell a stale result). */
  yaml: string;
  run: SampleRun;
  canStart: boolean;
  onStart(): void;
  onCancel(): void;
  /** Answers a paused node and continues the run. */
  onAnswer(node: string, answer: unknown): void;
  /** Shows a node in the YAML editor. */
  onOpenNode(id: string): void;
  /** The plan id of the editor's text, for the list of its past runs. */
  planId: string | null;
  /** Opens a past run from its records. */
  onOpenRun(planId: string, runId: string): void;
  /** Shows the earlier runs unfolded (the registered plans view, where they are the point). */
  historyOpen?: boolean;
}

type OutputState =
  | { kind: 'none' }
  | { kind: 'loading'; node: string }
  | { kind: 'ready'; node: string; response: RunOutputResponse }
  | { kind: 'failed'; node: string; code: string };

export function SampleRunPanel({ lang, yaml, run, canStart, onStart, onCancel, onAnswer, onOpenNode, planId, onOpenRun, historyOpen = false }: Props) {
  const [output, setOutput] = useState<OutputState>({ kind: 'none' });
  // Counts writes and undos, each of which changes the earlier runs list.
  const [writes, setWrites] = useState(0);
  const running = run.status === 'running';

  // A new run forgets the output shown for the previous one.
  const [shownRun, setShownRun] = useState<string | null>(run.runId);
  if (shownRun !== run.runId) {
    setShownRun(run.runId);
    setOutput({ kind: 'none' });
  }

  const open = async (node: NodeRun) => {
    if (run.runId === null || run.planId === null) return;
    setOutput({ kind: 'loading', node: node.id });
    try {
      const response = await runOutput({ plan_id: run.planId, run_id: run.runId, node: node.id });
      setOutput({ kind: 'ready', node: node.id, response });
    } catch (err) {
      setOutput({ kind: 'failed', node: node.id, code: err instanceof ApiError ? err.code : 'INTERNAL' });
    }
  };

  const stale = run.status !== 'idle' && run.yaml !== yaml;
  const seconds = run.durationMs !== null ? (run.durationMs / 1000).toFixed(1) : '0.0';
  const warnings = warningCount(run);

  return (
    <section className="panel run-panel" data-testid="sample-run" data-status={run.status} aria-label={t(lang, 'run.title')}>
      <header className="panel-header toolbar">
        <h2>{t(lang, 'run.title')}</h2>
        <div className="toolbar-actions">
          {running ? (
            <button type="button" className="button" data-testid="sample-run-cancel" onClick={onCancel}>
              {t(lang, 'run.cancel')}
            </button>
          ) : null}
          <button
            type="button"
            className="button button-primary"
            data-testid="sample-run-start"
            title={t(lang, 'run.startTitle')}
            disabled={running || !canStart}
            onClick={onStart}
          >
            {running ? t(lang, 'run.running') : t(lang, 'run.start')}
          </button>
        </div>
      </header>
      <div className="panel-body run-body">
        {run.status === 'idle' ? (
          <div className="empty empty-muted" data-testid="sample-run-empty">
            <p>{t(lang, 'run.hint')}</p>
          </div>
        ) : null}
        {run.status === 'error' && run.error !== null ? (
          <div className="notice notice-error" role="alert" data-testid="sample-run-error" data-code={run.error.code}>
            <span>
              {run.error.code === 'PLAN_INVALID' && run.error.findings !== null
                ? t(lang, 'run.invalid', { count: run.error.findings })
                : t(lang, 'run.failed', { message: errorText(lang, run.error.code) })}
              <TechnicalDetails lang={lang} code={run.error.code} lines={[run.error.message]} />
            </span>
          </div>
        ) : null}
        {stale ? (
          <div className="notice notice-warning" role="status" data-testid="sample-run-stale">
            {t(lang, 'run.stale')}
          </div>
        ) : null}
        {run.status !== 'idle' && run.status !== 'error' ? (
          <p className="run-status" role="status" data-testid="sample-run-status">
            {run.status === 'running'
              ? t(lang, 'run.status.running')
              : run.status === 'finished' && run.nodes.some((n) => n.state === 'failed')
                ? t(lang, 'run.status.finishedWithFailures', { seconds })
                : t(lang, `run.status.${run.status}` as MessageKey, { seconds })}
            {warnings > 0 ? (
              <span className="run-warning-count" data-testid="sample-run-warning-count">
                {' '}
                {t(lang, 'run.warningCount', { count: warnings })}
              </span>
            ) : null}
            {run.runDir !== null ? (
              <span className="run-dir" title={run.runDir}>
                {' '}
                — {t(lang, 'run.safeHere')}
              </span>
            ) : null}
          </p>
        ) : null}
        {run.status === 'paused'
          ? run.paused.map((paused) => (
              <RunQuestion key={paused.node} lang={lang} paused={paused} busy={false} onAnswer={(answer) => onAnswer(paused.node, answer)} />
            ))
          : null}
        {run.nodes.length > 0 && run.status !== 'error' ? (
          <ol className="run-nodes" data-testid="sample-run-nodes">
            {run.nodes.map((node) => (
              <li
                key={node.id}
                className={`run-node run-node-${node.state}${output.kind !== 'none' && output.node === node.id ? ' run-node-selected' : ''}`}
                data-testid="run-node"
                data-node-id={node.id}
                data-state={node.state}
              >
                <button
                  type="button"
                  className="run-node-open"
                  disabled={run.runId === null || node.state === 'waiting' || node.state === 'running' || node.state === 'paused'}
                  onClick={() => void open(node)}
                >
                  <code className="run-node-id" translate="no">
                    {node.id}
                  </code>
                  <span className={`run-state run-state-${node.state}`}>{t(lang, `run.state.${node.state}` as MessageKey)}</span>
                  {node.durationMs !== null ? <span className="run-node-meta">{t(lang, 'run.duration', { ms: node.durationMs })}</span> : null}
                  {node.state === 'running' && node.startedAt !== null ? <Elapsed lang={lang} since={node.startedAt} /> : null}
                  {node.state === 'running' && node.progress !== null ? <NodeProgress lang={lang} progress={node.progress} /> : null}
                  {node.rows !== null ? (
                    <span className="run-node-meta" data-testid="run-node-rows">
                      {t(lang, 'run.rows', { count: node.rows })}
                    </span>
                  ) : null}
                  {node.ai !== null ? (
                    <span className="run-node-meta" data-testid="run-node-ai" title={node.ai.model}>
                      {t(lang, 'run.aiCalls', {
                        calls: node.ai.calls,
                        tokens: node.ai.tokens.toLocaleString(lang === 'ja' ? 'ja-JP' : 'en-US'),
                        model: node.ai.model,
                      })}
                      {node.ai.failed > 0 ? ` · ${t(lang, 'run.aiFailed', { count: node.ai.failed })}` : ''}
                    </span>
                  ) : null}
                </button>
                {node.warnings.length > 0 ? (
                  <ul className="run-node-warnings" data-testid="run-node-warnings">
                    {node.warnings.map((w, i) => (
                      <li key={i} className="run-node-warning" data-testid="run-node-warning" data-code={w.code}>
                        <span aria-hidden="true">⚠ </span>
                        {w.node !== node.id ? (
                          <code className="run-node-id" translate="no">
                            {w.node}:{' '}
                          </code>
                        ) : null}
                        {lang === 'ja' ? w.messageJa : w.messageEn}
                      </li>
                    ))}
                  </ul>
                ) : null}
                {node.state === 'failed' ? (
                  <div className="run-node-error" role="alert" data-testid="run-node-error" data-code={node.code ?? ''}>
                    <span>{(lang === 'ja' ? node.messageJa : node.messageEn) || t(lang, 'run.failedNode')}</span>{' '}
                    {(lang === 'ja' ? node.hintJa : node.hintEn) ? (
                      <span className="run-node-hint" data-testid="run-node-hint">
                        {lang === 'ja' ? node.hintJa : node.hintEn}
                      </span>
                    ) : null}{' '}
                    <button type="button" className="button button-link" onClick={() => onOpenNode(node.id)}>
                      {t(lang, 'run.showNode')}
                    </button>
                    <TechnicalDetails lang={lang} code={node.code} />
                  </div>
                ) : null}
              </li>
            ))}
          </ol>
        ) : null}
        {run.files.length > 0 && run.status !== 'error' ? (
          <div className="run-files" data-testid="sample-run-files">
            <p>{t(lang, 'run.files', { count: run.files.length })}</p>
            <ul>
              {run.files.map((file) => (
                <li key={file.path} data-testid="run-file" data-node-id={file.node}>
                  <code translate="no" title={file.path}>
                    {file.path}
                  </code>{' '}
                  <span className="muted">
                    (
                    <code className="run-node-id" translate="no">
                      {file.node}
                    </code>
                    )
                  </span>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {run.runId !== null && run.status !== 'running' && output.kind === 'none' && run.status !== 'error' ? (
          <p className="muted">{t(lang, 'run.pickNode')}</p>
        ) : null}
        <OutputView
          lang={lang}
          state={output}
          onApplied={(response) => {
            setOutput((o) => (o.kind === 'ready' ? { ...o, response } : o));
            // The earlier runs list says who wrote what: read it again.
            setWrites((n) => n + 1);
          }}
          ids={run.runId !== null && run.planId !== null ? { plan_id: run.planId, run_id: run.runId } : null}
        />
        <RunHistory lang={lang} planId={planId} refresh={`${run.runId ?? ''}:${run.status}:${writes}`} current={run.runId} onOpen={onOpenRun} open={historyOpen} />
      </div>
    </section>
  );
}

/** 過去の実行: this plan's runs, newest first; opening one shows its nodes, outputs and workbooks. */
function RunHistory({
  lang,
  planId,
  refresh,
  current,
  onOpen,
  open,
}: {
  lang: Lang;
  planId: string | null;
  refresh: string;
  current: string | null;
  onOpen(planId: string, runId: string): void;
  open: boolean;
}) {
  const [runs, setRuns] = useState<RunSummary[] | null>(null);
  useEffect(() => {
    if (planId === null || planId === '') return;
    let live = true;
    runList({ plan_id: planId })
      .then((list) => {
        if (live) setRuns(list.runs);
      })
      .catch(() => {
        if (live) setRuns([]);
      });
    return () => {
      live = false;
    };
  }, [planId, refresh]);
  if (runs === null || runs.length === 0) return null;
  return (
    <details className="run-history" data-testid="run-history" open={open}>
      <summary>{t(lang, 'run.history', { count: runs.length })}</summary>
      <ol>
        {runs.map((r) => (
          <li key={r.run_id} data-testid="run-history-item" data-run-id={r.run_id} data-status={r.status}>
            <button
              type="button"
              className="button button-link"
              title={r.run_id}
              disabled={r.run_id === current}
              onClick={() => onOpen(r.plan_id, r.run_id)}
            >
              <span>{r.started_at.replace('T', ' ').slice(0, 19)}</span>{' '}
              <span className={`run-state run-state-${r.status === 'finished' ? 'done' : r.status}`}>{t(lang, `run.runStatus.${r.status}` as MessageKey)}</span>{' '}
              {r.duration_ms != null ? <span className="run-node-meta">{t(lang, 'run.seconds', { seconds: (r.duration_ms / 1000).toFixed(1) })}</span> : null}
            </button>
            {r.files.length > 0 ? (
              <p className="run-history-files" data-testid="run-history-files">
                {t(lang, 'run.historyFiles')}:{' '}
                {r.files.map((f, i) => (
                  <span key={f.path}>
                    {i > 0 ? '、' : null}
                    <code translate="no" title={f.path} data-testid="run-history-file">
                      {baseName(f.path)}
                    </code>
                  </span>
                ))}
              </p>
            ) : null}
            {r.applied.length > 0 ? (
              <ul className="run-history-writes" data-testid="run-history-writes">
                {r.applied.map((w) => (
                  <li key={w.node}>
                    {t(lang, 'run.appliedBy', {
                      to: w.to,
                      by: w.by === '' ? '—' : w.by,
                      at: w.at === '' ? '—' : new Date(w.at).toLocaleString(lang === 'ja' ? 'ja-JP' : 'en-US'),
                    })}
                  </li>
                ))}
              </ul>
            ) : null}
            {r.answered.length > 0 ? (
              <ul className="run-history-writes" data-testid="run-history-answers">
                {r.answered.map((a) => (
                  <li key={a.node} data-node-id={a.node}>
                    {t(lang, 'run.answeredBy', {
                      node: a.node,
                      by: a.by,
                      at: new Date(a.at).toLocaleString(lang === 'ja' ? 'ja-JP' : 'en-US'),
                    })}
                  </li>
                ))}
              </ul>
            ) : null}
          </li>
        ))}
      </ol>
    </details>
  );
}

function OutputView({
  lang,
  state,
  ids,
  onApplied,
}: {
  lang: Lang;
  state: OutputState;
  ids: { plan_id: string; run_id: string } | null;
  onApplied(response: RunOutputResponse): void;
}) {
  if (state.kind === 'none') return null;
  if (state.kind === 'loading') return <p className="muted">{t(lang, 'run.loadingOutput')}</p>;
  if (state.kind === 'failed') {
    return (
      <p className="notice notice-error" role="alert" data-testid="run-output-error">
        {t(lang, 'run.outputFailed', { message: errorText(lang, state.code) })}
      </p>
    );
  }
  // The schema leaves each output as free-form JSON; `run_output` writes it as an `OutputPreview`.
  const entries = Object.entries(state.response.outputs) as [string, OutputPreview][];
  const workbook = state.response.workbook;
  return (
    <div className="run-output" data-testid="run-output" data-node-id={state.node}>
      <h3>{t(lang, 'run.outputTitle', { node: state.node })}</h3>
      {entries.length === 0 ? <p className="muted">{t(lang, 'run.noOutputs')}</p> : null}
      {entries.map(([key, preview]) => (
        <OutputEntry key={key} lang={lang} name={key} preview={preview} />
      ))}
      {workbook !== null ? (
        <div className="workbook-preview" data-testid="run-workbook" data-path={workbook.after}>
          <h4 title={workbook.after}>{t(lang, 'run.workbook', { path: baseName(workbook.after) })}</h4>
          {workbook.before !== null ? <p className="muted">{t(lang, 'run.comparedWith', { path: workbook.before })}</p> : null}
          {buildSheetGrids(workbook.patch_diff, workbook.context ?? []).map((grid) => (
            <SheetGridView key={grid.sheet} lang={lang} grid={grid} />
          ))}
          <DesignChangesView lang={lang} diff={workbook.patch_diff} />
        </div>
      ) : null}
      {state.response.apply_to !== null && ids !== null ? (
        <ApplyRun lang={lang} ids={{ ...ids, node: state.node }} response={state.response} onApplied={onApplied} />
      ) : null}
    </div>
  );
}

type ApplyStep = { kind: 'idle' } | { kind: 'confirming' } | { kind: 'busy' } | { kind: 'failed'; code: string };

/** 「この結果で書き込む」 and its undo: nothing outside the run folder changes before this. */
function ApplyRun({
  lang,
  ids,
  response,
  onApplied,
}: {
  lang: Lang;
  ids: { plan_id: string; run_id: string; node: string };
  response: RunOutputResponse;
  onApplied(response: RunOutputResponse): void;
}) {
  const [step, setStep] = useState<ApplyStep>({ kind: 'idle' });
  const target = response.apply_to ?? '';
  const act = async (apply: boolean) => {
    setStep({ kind: 'busy' });
    try {
      if (apply) await runApply(ids);
      else await runUndoApply(ids);
      onApplied({ ...response, applied: apply });
      setStep({ kind: 'idle' });
    } catch (err) {
      setStep({ kind: 'failed', code: err instanceof ApiError ? err.code : 'INTERNAL' });
    }
  };
  return (
    <div className="workbook-actions" data-testid="run-apply" data-applied={response.applied ? 'true' : 'false'}>
      {response.applied ? (
        <>
          <span className="notice notice-ok" role="status" data-testid="run-applied">
            {t(lang, 'run.applied', { path: target })}
          </span>
          <button type="button" className="button" data-testid="run-undo-apply" disabled={step.kind === 'busy'} onClick={() => void act(false)}>
            {t(lang, 'dryrun.undo')}
          </button>
        </>
      ) : step.kind === 'confirming' ? (
        <div className="workbook-confirm" role="alertdialog" data-testid="run-apply-confirm">
          <p data-testid="run-apply-confirm-text" data-replaces={response.apply_replaces ? 'true' : 'false'}>
            {t(lang, response.apply_replaces ? 'run.confirmReplace' : 'run.confirmNew', { path: target })}
          </p>
          <button type="button" className="button button-primary" data-testid="run-apply-yes" onClick={() => void act(true)}>
            {t(lang, 'dryrun.confirmYes')}
          </button>
          <button type="button" className="button" onClick={() => setStep({ kind: 'idle' })}>
            {t(lang, 'dryrun.confirmNo')}
          </button>
        </div>
      ) : (
        <button
          type="button"
          className="button button-primary"
          data-testid="run-apply-start"
          title={t(lang, 'run.applyTitle', { path: target })}
          disabled={step.kind === 'busy'}
          onClick={() => setStep({ kind: 'confirming' })}
        >
          {t(lang, 'run.apply')}
        </button>
      )}
      {step.kind === 'failed' ? (
        <span className="notice notice-error" role="alert" data-testid="run-apply-error" data-code={step.code}>
          {errorText(lang, step.code)}
          <TechnicalDetails lang={lang} code={step.code} />
        </span>
      ) : null}
    </div>
  );
}

/** A table column's type in words: the runtime's `str`, `f64`, `date`… are not for accountants. */
export function columnTypeKey(type: string): MessageKey {
  const name = type.toLowerCase();
  if (/^(str|string|utf8|text|null)$/.test(name)) return 'run.type.text';
  if (/^(i|u|f)(8|16|32|64|128)$|^(int|float|number|decimal)/.test(name)) return 'run.type.number';
  if (/^bool/.test(name)) return 'run.type.bool';
  if (/^(date|datetime|time)/.test(name)) return 'run.type.date';
  if (/^(list|array)/.test(name)) return 'run.type.list';
  return 'run.type.other';
}


function OutputEntry({ lang, name, preview }: { lang: Lang; name: string; preview: OutputPreview }) {
  if (preview.kind === 'json') {
    return (
      <div className="run-output-entry" data-testid="run-output-json" data-output={name}>
        <h4>
          <code translate="no">{name}</code>
        </h4>
        <pre className="dryrun-json" translate="no">
          {JSON.stringify(preview.value, null, 2)}
        </pre>
      </div>
    );
  }
  // Headers and codes in words, amounts with separators (the codes table's labels); the
  // column's own name stays on hover.
  const labels = readLabels(preview.labels);
  const shown = (column: string) => ({ key: column, path: [column], topLevel: true });
  return (
    <div className="run-output-entry" data-testid="run-output-table" data-output={name} data-row-count={preview.row_count}>
      <h4>
        <code translate="no">{name}</code>{' '}
        <span className="muted">
          {t(lang, 'run.rowCount', { count: preview.row_count })}
          {preview.truncated ? t(lang, 'run.truncated', { shown: preview.rows.length }) : ''}
        </span>
      </h4>
      <div className="run-grid-scroll">
        <table className="run-grid" data-testid="run-output-grid">
          <thead>
            <tr>
              <th className="run-grid-index" aria-hidden="true" />
              {preview.columns.map((column) => (
                <th key={column.name} scope="col" data-column={column.name} title={column.name}>
                  <span className="run-grid-name">{columnHeader(shown(column.name), labels, lang)}</span>
                  <span className="run-grid-type" title={column.type}>
                    {t(lang, columnTypeKey(column.type))}
                  </span>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {preview.rows.map((row, index) => (
              <tr key={index} data-testid="run-output-row">
                <th scope="row" className="run-grid-index">
                  {index + 1}
                </th>
                {preview.columns.map((column) => (
                  <td key={column.name}>{cellDisplay(row[column.name], shown(column.name), labels, lang)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}

/** How long a running node has run, counted up every second (a long node is not silent). */
/** How far a long node has got: `120,000 / 200,000 行（60%）` with a bar, or `1,234 ファイル` when the block does not know the total. */
function NodeProgress({ lang, progress }: { lang: Lang; progress: NonNullable<NodeRun['progress']> }) {
  const locale = lang === 'ja' ? 'ja-JP' : 'en-US';
  const count = (n: number) =>
    progress.unit === 'bytes' ? (n / 1e6).toLocaleString(locale, { minimumFractionDigits: 1, maximumFractionDigits: 1 }) : n.toLocaleString(locale);
  const unit = t(lang, `run.unit.${progress.unit}` as MessageKey);
  const { total } = progress;
  if (total === null || total <= 0) {
    return (
      <span className="run-node-meta" data-testid="run-node-progress">
        {t(lang, 'run.progressOpen', { done: count(progress.done), unit })}
      </span>
    );
  }
  const done = Math.min(progress.done, total);
  const text = t(lang, 'run.progress', { done: count(done), total: count(total), unit, percent: Math.floor((done * 100) / total) });
  return (
    <span className="run-node-meta run-node-progress" data-testid="run-node-progress">
      <progress max={total} value={done} aria-label={text} />
      {text}
    </span>
  );
}

function Elapsed({ lang, since }: { lang: Lang; since: number }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, []);
  const seconds = Math.max(0, Math.floor((now - since) / 1000));
  return (
    <span className="run-node-meta" data-testid="run-node-elapsed">
      {t(lang, 'run.elapsed', { seconds })}
    </span>
  );
}
