// 検証/ドライラン: the execution order and resolved inputs per node, and for workbook patch
// nodes the workbook diff (`WorkbookDiff.tsx`: a grid per sheet with the changed cells among
// their real neighbours, from the server's `context`), the skipped ops and the formula issues. A previewed patch can be applied for real after a
// confirmation, and an applied one undone with the inverse ops the apply returned. Everything
// is said in the person's language by code; the server's own messages and codes stay in a
// closed disclosure for administrators.

import { useState } from 'react';
import { asApiError, planDryRun, workbookPatch } from '../../api';
import type {
  DryRunNode,
  Lang,
  PatchResponse,
  PlanDryRunResponse,
  WorkbookPreview,
} from '../../api/types';
import { errorText, t } from '../../shared/i18n';
import { baseName, buildSheetGrids, skippedItems, undoRequest } from '../workbook/workbookGrid';
import { TechnicalDetails } from '../../shared/TechnicalDetails';
import { DesignChangesView, SheetGridView, formulaIssueText, opLabel } from '../workbook/WorkbookDiff';

interface Props {
  lang: Lang;
  yaml: string;
}

type RunState =
  | { kind: 'idle' }
  | { kind: 'running' }
  | { kind: 'done'; run: number; yaml: string; response: PlanDryRunResponse }
  | { kind: 'failed'; code: string; message: string; findings: number | null };

function findingCount(details: unknown): number | null {
  if (typeof details !== 'object' || details === null) return null;
  const findings = (details as { findings?: unknown }).findings;
  return Array.isArray(findings) ? findings.length : null;
}

export function DryRunPanel({ lang, yaml }: Props) {
  const [state, setState] = useState<RunState>({ kind: 'idle' });
  const [runs, setRuns] = useState(0);

  const run = async () => {
    const text = yaml;
    const id = runs + 1;
    setRuns(id);
    setState({ kind: 'running' });
    try {
      const response = await planDryRun({ yaml: text, lang });
      setState({ kind: 'done', run: id, yaml: text, response });
    } catch (err) {
      const error = asApiError(err);
      setState({ kind: 'failed', code: error.code, message: error.message, findings: findingCount(error.details) });
    }
  };

  const stale = state.kind === 'done' && state.yaml !== yaml;
  let body;
  switch (state.kind) {
    case 'idle':
      body = (
        <div className="empty empty-muted" data-testid="dryrun-empty">
          <p>{t(lang, 'dryrun.hint')}</p>
        </div>
      );
      break;
    case 'running':
      body = (
        <div className="empty empty-muted">
          <p>{t(lang, 'dryrun.running')}</p>
        </div>
      );
      break;
    case 'failed':
      body = (
        <div className="notice notice-error dryrun-error" role="alert" data-testid="dryrun-error" data-code={state.code}>
          <span>
            {state.code === 'PLAN_INVALID' && state.findings !== null
              ? t(lang, 'dryrun.invalid', { count: state.findings })
              : t(lang, 'dryrun.failed', { message: errorText(lang, state.code) })}
            <TechnicalDetails lang={lang} code={state.code} lines={[state.message]} />
          </span>
        </div>
      );
      break;
    case 'done':
      body = <DryRunResult lang={lang} run={state.run} response={state.response} stale={stale} />;
      break;
  }

  return (
    <section className="panel dryrun-panel" data-testid="dryrun" aria-label={t(lang, 'dryrun.title')}>
      <header className="panel-header toolbar">
        <h2>{t(lang, 'dryrun.title')}</h2>
        <div className="toolbar-actions">
          <button
            type="button"
            className="button"
            data-testid="dryrun-run"
            title={t(lang, 'dryrun.runTitle')}
            disabled={state.kind === 'running'}
            onClick={() => void run()}
          >
            {state.kind === 'running' ? t(lang, 'dryrun.running') : t(lang, 'dryrun.run')}
          </button>
        </div>
      </header>
      <div className="panel-body dryrun-body">{body}</div>
    </section>
  );
}

function DryRunResult({ lang, run, response, stale }: { lang: Lang; run: number; response: PlanDryRunResponse; stale: boolean }) {
  const blocks = new Map<string, DryRunNode>();
  for (const node of response.nodes) blocks.set(node.id, node);
  return (
    <div className="dryrun-result" data-testid="dryrun-result" data-stale={stale ? 'true' : 'false'}>
      {stale ? (
        <div className="notice notice-warning" role="status" data-testid="dryrun-stale">
          {t(lang, 'dryrun.stale')}
        </div>
      ) : null}
      <h3 className="dryrun-heading">{t(lang, 'dryrun.order')}</h3>
      <ol className="dryrun-order" data-testid="dryrun-order">
        {response.order.map((id) => (
          <li key={id} data-testid="dryrun-order-item" data-node-id={id}>
            <code translate="no">{id}</code>
            {blocks.get(id)?.block ? (
              <span className="dryrun-block" translate="no">
                {blocks.get(id)?.block}
              </span>
            ) : null}
          </li>
        ))}
      </ol>
      <h3 className="dryrun-heading">{t(lang, 'dryrun.nodes')}</h3>
      <div className="dryrun-nodes">
        {response.nodes.map((node) => (
          <NodeCard key={`${run}:${node.id}`} lang={lang} run={run} node={node} stale={stale} />
        ))}
      </div>
    </div>
  );
}

function kindText(lang: Lang, node: DryRunNode): string {
  if (node.kind === 'loop') return t(lang, 'graph.kind.loop');
  if (node.kind === 'subflow') return t(lang, 'graph.kind.subflow');
  return node.block ?? t(lang, 'graph.kind.unknown');
}

function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? '';
}

function isEmptyObject(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

function NodeCard({ lang, run, node, stale }: { lang: Lang; run: number; node: DryRunNode; stale: boolean }) {
  const workbook = node.workbook ?? null;
  return (
    <details className="dryrun-node" data-testid="dryrun-node" data-node-id={node.id} open={workbook !== null}>
      <summary>
        <code className="dryrun-node-id" translate="no">
          {node.id}
        </code>
        <span className="dryrun-block" translate={node.kind === 'block' ? 'no' : undefined}>
          {kindText(lang, node)}
        </span>
        {node.depends_on.length > 0 ? (
          <span className="dryrun-deps">{t(lang, 'dryrun.dependsOn', { nodes: node.depends_on.join(', ') })}</span>
        ) : null}
      </summary>
      {node.when !== null ? <p className="dryrun-when">{t(lang, 'dryrun.when', { expr: node.when })}</p> : null}
      <div className="dryrun-io">
        <div>
          <h4>{t(lang, 'dryrun.inputs')}</h4>
          {isEmptyObject(node.inputs) ? (
            <p className="muted">{t(lang, 'dryrun.noInputs')}</p>
          ) : (
            <pre className="dryrun-json" data-testid="dryrun-inputs" translate="no">
              {json(node.inputs)}
            </pre>
          )}
        </div>
        {!isEmptyObject(node.outputs) ? (
          <div>
            <h4>{t(lang, 'dryrun.outputs')}</h4>
            <pre className="dryrun-json" data-testid="dryrun-outputs" translate="no">
              {json(node.outputs)}
            </pre>
          </div>
        ) : null}
      </div>
      {workbook !== null ? <WorkbookPreviewView lang={lang} preview={workbook} stale={stale} /> : null}
      {node.children.length > 0 ? (
        <div className="dryrun-children">
          <h4>{t(lang, node.kind === 'loop' ? 'dryrun.body' : 'dryrun.called')}</h4>
          {node.children.map((child) => (
            <NodeCard key={`${run}:${node.id}/${child.id}`} lang={lang} run={run} node={child} stale={stale} />
          ))}
        </div>
      ) : null}
    </details>
  );
}

type ApplyState =
  | { kind: 'idle' }
  | { kind: 'confirming' }
  | { kind: 'applying' }
  | { kind: 'applied'; response: PatchResponse }
  | { kind: 'undoing'; applied: PatchResponse }
  | { kind: 'undone'; response: PatchResponse }
  | { kind: 'failed'; message: string; code: string; applied: PatchResponse | null };

function WorkbookPreviewView({ lang, preview, stale }: { lang: Lang; preview: WorkbookPreview; stale: boolean }) {
  const [apply, setApply] = useState<ApplyState>({ kind: 'idle' });
  const response = preview.response;

  if (preview.status !== 'ready' || response === null) {
    return (
      <div className="workbook-preview" data-testid="workbook-preview" data-status={preview.status}>
        <h4>{t(lang, 'dryrun.workbook')}</h4>
        <p className={preview.status === 'failed' ? 'workbook-message workbook-message-error' : 'workbook-message'}>
          {preview.status === 'failed'
            ? t(lang, 'dryrun.previewFailed', { message: errorText(lang, preview.code ?? 'INTERNAL') })
            : t(lang, 'dryrun.previewUnresolved')}
        </p>
        <TechnicalDetails lang={lang} code={preview.code} lines={[preview.message]} />
      </div>
    );
  }

  const grids = buildSheetGrids(response.patch_diff, preview.context ?? []);
  const skipped = skippedItems(response.patch_diff);
  const request = preview.request;

  const doApply = async () => {
    if (request === null) return;
    setApply({ kind: 'applying' });
    try {
      const applied = await workbookPatch({ ...request, dry_run: false, return_inverse_ops: true });
      if (applied.error !== null) {
        setApply({ kind: 'failed', code: 'APPLY_FAILED', message: applied.error.message, applied: null });
      } else {
        setApply({ kind: 'applied', response: applied });
      }
    } catch (err) {
      const error = asApiError(err);
      setApply({ kind: 'failed', code: error.code, message: error.message, applied: null });
    }
  };

  const doUndo = async (applied: PatchResponse) => {
    setApply({ kind: 'undoing', applied });
    try {
      const undone = await workbookPatch(undoRequest(applied));
      if (undone.error !== null) {
        setApply({ kind: 'failed', code: 'APPLY_FAILED', message: undone.error.message, applied });
      } else {
        setApply({ kind: 'undone', response: undone });
      }
    } catch (err) {
      const error = asApiError(err);
      setApply({ kind: 'failed', code: error.code, message: error.message, applied });
    }
  };

  return (
    <div className="workbook-preview" data-testid="workbook-preview" data-status="ready">
      <h4>{t(lang, 'dryrun.workbook')}</h4>
      <p className="workbook-target" title={response.out_path}>
        {t(lang, 'dryrun.saveToFile', { file: baseName(response.out_path) })}
      </p>
      {response.error !== null ? (
        <div className="workbook-message workbook-message-error" role="alert" data-testid="workbook-op-error">
          <p>{opErrorText(lang, response.error)}</p>
          <TechnicalDetails lang={lang} lines={[response.error.message]} />
        </div>
      ) : null}
      {response.formula_issues.length > 0 ? (
        <div className="workbook-list">
          <h5>{t(lang, 'dryrun.formulaIssues')}</h5>
          <ul data-testid="workbook-formula-issues">
            {response.formula_issues.map((issue, index) => (
              <li
                key={`${issue.sheet}!${issue.cell}:${index}`}
                className={`workbook-issue workbook-issue-${issue.level}`}
                data-testid="workbook-formula-issue"
                data-level={issue.level}
                data-code={issue.code}
              >
                <span className={`severity severity-${issue.level}`}>
                  {t(lang, issue.level === 'error' ? 'findings.error' : 'findings.warning')}
                </span>{' '}
                <code translate="no">
                  {issue.sheet}!{issue.cell}
                </code>{' '}
                {formulaIssueText(lang, issue)}
                <TechnicalDetails lang={lang} code={issue.code} lines={[issue.message]} />
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {skipped.length > 0 ? (
        <div className="workbook-list">
          <h5>{t(lang, 'dryrun.skipped')}</h5>
          <ul data-testid="workbook-skipped">
            {skipped.map((item, index) => (
              <li key={`${item.op_index}:${item.cell ?? ''}:${index}`} data-testid="workbook-skipped-op" data-op-index={item.op_index}>
                {t(lang, 'dryrun.opSkippedItem', {
                  n: item.op_index + 1,
                  op: opLabel(lang, item.op),
                  cell: item.cell !== null ? `${item.sheet}!${item.cell}` : item.sheet,
                })}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {response.warnings.length > 0 ? (
        <div className="workbook-list">
          <h5>{t(lang, 'dryrun.warnings')}</h5>
          <div data-testid="workbook-warnings">
            <p>{t(lang, 'dryrun.warningCount', { count: response.warnings.length })}</p>
            <TechnicalDetails lang={lang} lines={response.warnings} />
          </div>
        </div>
      ) : null}
      {grids.length === 0 && response.error === null ? <p className="muted">{t(lang, 'dryrun.noCellChanges')}</p> : null}
      {grids.map((grid) => (
        <SheetGridView key={grid.sheet} lang={lang} grid={grid} />
      ))}
      <DesignChangesView lang={lang} diff={response.patch_diff} />
      <ApplyControls
        lang={lang}
        state={apply}
        canApply={request !== null && response.error === null && !stale}
        stale={stale}
        target={response.out_path}
        onStart={() => setApply({ kind: 'confirming' })}
        onCancel={() => setApply({ kind: 'idle' })}
        onConfirm={() => void doApply()}
        onUndo={(applied) => void doUndo(applied)}
      />
    </div>
  );
}

function opErrorText(lang: Lang, error: NonNullable<PatchResponse['error']>): string {
  return t(lang, 'dryrun.opCannotApply', {
    n: error.op_index + 1,
    op: opLabel(lang, error.op),
    cell: error.cell !== null ? `${error.sheet}!${error.cell}` : error.sheet,
  });
}

interface ApplyProps {
  lang: Lang;
  state: ApplyState;
  canApply: boolean;
  stale: boolean;
  target: string;
  onStart(): void;
  onCancel(): void;
  onConfirm(): void;
  onUndo(applied: PatchResponse): void;
}

function ApplyControls({ lang, state, canApply, stale, target, onStart, onCancel, onConfirm, onUndo }: ApplyProps) {
  switch (state.kind) {
    case 'idle':
      return (
        <div className="workbook-actions">
          <button
            type="button"
            className="button button-primary"
            data-testid="workbook-apply"
            title={stale ? t(lang, 'dryrun.stale') : t(lang, 'dryrun.applyTitle')}
            disabled={!canApply}
            onClick={onStart}
          >
            {t(lang, 'dryrun.apply')}
          </button>
        </div>
      );
    case 'confirming':
      return (
        <div className="workbook-actions workbook-confirm" role="alertdialog" data-testid="workbook-confirm">
          <p title={target}>{t(lang, 'dryrun.confirm', { path: baseName(target) })}</p>
          <button type="button" className="button button-primary" data-testid="workbook-apply-confirm" onClick={onConfirm}>
            {t(lang, 'dryrun.confirmYes')}
          </button>
          <button type="button" className="button" data-testid="workbook-apply-cancel" onClick={onCancel}>
            {t(lang, 'dryrun.confirmNo')}
          </button>
        </div>
      );
    case 'applying':
      return <p className="workbook-actions muted">{t(lang, 'dryrun.applying')}</p>;
    case 'applied':
      return (
        <div className="workbook-actions notice notice-ok" role="status" data-testid="workbook-applied" data-path={state.response.out_path}>
          <span title={state.response.out_path}>{t(lang, 'dryrun.applied', { path: baseName(state.response.out_path) })}</span>
          <button
            type="button"
            className="button"
            data-testid="workbook-undo"
            title={t(lang, 'dryrun.undoTitle')}
            disabled={state.response.inverse_ops.length === 0}
            onClick={() => onUndo(state.response)}
          >
            {t(lang, 'dryrun.undo')}
          </button>
        </div>
      );
    case 'undoing':
      return <p className="workbook-actions muted">{t(lang, 'dryrun.undoing')}</p>;
    case 'undone':
      return (
        <div className="workbook-actions notice notice-ok" role="status" data-testid="workbook-undone" data-path={state.response.out_path}>
          <span title={state.response.out_path}>{t(lang, 'dryrun.undone', { path: baseName(state.response.out_path) })}</span>
        </div>
      );
    case 'failed':
      return (
        <div className="workbook-actions notice notice-error" role="alert" data-testid="workbook-apply-error" data-code={state.code}>
          <span>
            {t(lang, state.applied !== null ? 'dryrun.undoFailed' : 'dryrun.applyFailed', {
              message: state.code === 'APPLY_FAILED' ? t(lang, 'dryrun.opMismatch') : errorText(lang, state.code),
            })}
            <TechnicalDetails lang={lang} code={state.code} lines={[state.message]} />
          </span>
          {state.applied !== null ? (
            <button type="button" className="button" data-testid="workbook-undo" onClick={() => state.applied && onUndo(state.applied)}>
              {t(lang, 'dryrun.undo')}
            </button>
          ) : null}
        </div>
      );
  }
}
