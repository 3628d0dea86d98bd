// 登録済みのプラン: the plans registered in designs/ (`plan_list`), and for the one picked its
// description, its file, what a rerun takes — each input starting from the last run's value, a
// new file chosen with the file dialog (or uploaded in the browser) — and the same run panel
// as 試行実行: node states, outputs, 「この結果で書き込む」 and undo, and its earlier runs with the
// files each wrote. 「設計で開く」 puts the plan in the Design editor.

import { useEffect, useState } from 'react';
import { asApiError, isTauri, planGet, planList, runList } from '../../api';
import type { Lang, PlanGetResponse, RegisteredPlan } from '../../api/types';
import { fileForQuestion } from '../design/documents';
import { topLevelNodeIds } from '../design/graph';
import { errorText, t, type MessageKey } from '../../shared/i18n';
import { initialValues, rerunRequest, type RerunProblem } from './plans';
import { useSampleRun } from '../run/sampleRun';
import { FilePicker } from '../design/QuestionsPanel';
import { SampleRunPanel } from '../run/SampleRunPanel';

interface Props {
  lang: Lang;
  /** Changes each time the view is shown, to read the list again (a plan registered since). */
  refresh: number;
  /** Puts a plan's text in the Design editor and shows it (at node `node`, when given). */
  onOpenInEditor(yaml: string, node?: string): void;
}

type ListState = { kind: 'loading' } | { kind: 'ready'; plans: RegisteredPlan[] } | { kind: 'failed'; code: string };

export function PlansView({ lang, refresh, onOpenInEditor }: Props) {
  const [list, setList] = useState<ListState>({ kind: 'loading' });
  const [selected, setSelected] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    planList()
      .then((response) => {
        if (!live) return;
        setList({ kind: 'ready', plans: response.plans });
        setSelected((current) => current ?? response.plans[0]?.id ?? null);
      })
      .catch((err) => {
        if (live) setList({ kind: 'failed', code: asApiError(err).code });
      });
    return () => {
      live = false;
    };
  }, [refresh]);

  return (
    <main className="plans studio" data-testid="plans-view" aria-label={t(lang, 'plans.title')}>
      <aside className="panel plans-list">
        <header className="panel-header">
          <h2>{t(lang, 'plans.title')}</h2>
        </header>
        <div className="panel-body">
          {list.kind === 'failed' ? (
            <div className="notice notice-error" role="alert" data-testid="plans-error">
              {t(lang, 'plans.loadFailed', { message: errorText(lang, list.code) })}
            </div>
          ) : null}
          {list.kind === 'ready' && list.plans.length === 0 ? (
            <div className="empty empty-muted" data-testid="plans-empty">
              <p>{t(lang, 'plans.empty')}</p>
            </div>
          ) : null}
          {list.kind === 'ready' ? (
            <ul className="plans-items">
              {list.plans.map((plan) => (
                <li key={plan.id}>
                  <button
                    type="button"
                    className={plan.id === selected ? 'plans-item plans-item-active' : 'plans-item'}
                    aria-pressed={plan.id === selected}
                    data-testid="plans-item"
                    data-plan-id={plan.id}
                    data-multiline
                    onClick={() => setSelected(plan.id)}
                  >
                    {/* What the plan does first, as the person who registered it said it. */}
                    {plan.description ? <span className="plans-item-description">{plan.description}</span> : null}
                    <span className="muted">
                      <code className="plans-item-id" translate="no">
                        {plan.id}
                      </code>{' '}
                      · {t(lang, 'plans.steps', { count: plan.nodes })}
                    </span>
                  </button>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      </aside>
      <section className="panel plans-detail">
        {selected !== null ? (
          // Keyed by plan: another plan starts with its own form and run panel.
          <PlanDetail
            key={`${selected}:${refresh}`}
            lang={lang}
            id={selected}
            description={(list.kind === 'ready' ? list.plans.find((p) => p.id === selected)?.description : null) ?? null}
            onOpenInEditor={onOpenInEditor}
          />
        ) : (
          <div className="empty empty-muted">
            <p>{t(lang, 'plans.pick')}</p>
          </div>
        )}
      </section>
    </main>
  );
}

type PlanState = { kind: 'loading' } | { kind: 'ready'; plan: PlanGetResponse } | { kind: 'failed'; code: string };

function PlanDetail({
  lang,
  id,
  description,
  onOpenInEditor,
}: {
  lang: Lang;
  id: string;
  /** The plan's description from the list, its title here. */
  description: string | null;
  onOpenInEditor(yaml: string, node?: string): void;
}) {
  const [state, setState] = useState<PlanState>({ kind: 'loading' });
  const [values, setValues] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<RerunProblem | null>(null);
  const [pickError, setPickError] = useState<string | null>(null);
  const sampleRun = useSampleRun();

  useEffect(() => {
    let live = true;
    Promise.all([planGet({ id }), runList({ plan_id: id })])
      .then(([plan, runs]) => {
        if (!live) return;
        setValues(initialValues(plan.inputs, runs.runs));
        setState({ kind: 'ready', plan });
      })
      .catch((err) => {
        if (live) setState({ kind: 'failed', code: asApiError(err).code });
      });
    return () => {
      live = false;
    };
  }, [id]);

  if (state.kind === 'loading') return <p className="muted">…</p>;
  if (state.kind === 'failed') {
    return (
      <div className="notice notice-error" role="alert" data-testid="plan-error">
        {t(lang, 'plans.loadFailed', { message: errorText(lang, state.code) })}
      </div>
    );
  }
  const { plan } = state;
  const labelOf = (name: string) => {
    const input = plan.inputs.find((i) => i.target.var === name);
    return (lang === 'en' ? input?.label_en : input?.label) || name;
  };
  const start = () => {
    const request = rerunRequest(plan.inputs, values);
    if ('kind' in request) {
      setProblem(request);
      return;
    }
    setProblem(null);
    void sampleRun.start(plan.yaml, topLevelNodeIds(plan.yaml), lang, request);
  };
  const chooseFile = async (file: File | null): Promise<string | null> => {
    setPickError(null);
    try {
      return await fileForQuestion(file);
    } catch (err) {
      setPickError(errorText(lang, asApiError(err).code));
      return null;
    }
  };

  const files = plan.inputs.filter((i) => i.type === 'file');
  const others = plan.inputs.filter((i) => i.type !== 'file');
  const field = (input: (typeof plan.inputs)[number]) => {
    const name = input.target.var ?? input.id;
    return (
      <label key={name} className="question-field rerun-field" data-testid="rerun-input" data-var={name} data-type={input.type}>
        <span>
          {labelOf(name)}
          {input.required ? <span className="required-mark"> *</span> : null}
        </span>
        <span className="rerun-control">
          {input.options !== undefined && input.options.length > 0 ? (
            <select className="input" value={values[name] ?? ''} onChange={(e) => setValues((all) => ({ ...all, [name]: e.target.value }))}>
              {(values[name] ?? '') === '' ? <option value="" /> : null}
              {input.options.map((option) => (
                <option key={String(option)} value={String(option)}>
                  {String(option)}
                </option>
              ))}
            </select>
          ) : (
            <input
              className="input"
              value={values[name] ?? ''}
              translate="no"
              onChange={(e) => setValues((all) => ({ ...all, [name]: e.target.value }))}
            />
          )}
          {input.type === 'file' ? (
            <FilePicker
              lang={lang}
              accept={input.accept ?? undefined}
              nativePicker={isTauri()}
              onChooseFile={chooseFile}
              setText={(path) => setValues((all) => ({ ...all, [name]: path }))}
            />
          ) : null}
        </span>
      </label>
    );
  };

  return (
    <div className="plan-detail" data-testid="plan-detail" data-plan-id={plan.id}>
      <header className="panel-header toolbar">
        <h2>{description ?? <code translate="no">{plan.id}</code>}</h2>
        <div className="toolbar-actions">
          <button
            type="button"
            className="button"
            data-testid="plan-open-editor"
            title={t(lang, 'plans.openEditorTitle')}
            onClick={() => onOpenInEditor(plan.yaml)}
          >
            {t(lang, 'plans.openEditor')}
          </button>
        </div>
      </header>
      <p className="muted plan-file">
        {t(lang, 'plans.file')}:{' '}
        <code translate="no" data-testid="plan-file">
          {plan.file}
        </code>
        {description !== null ? (
          <>
            {' '}
            (ID{' '}
            <code translate="no">{plan.id}</code>)
          </>
        ) : null}
      </p>
      <section className="rerun" data-testid="rerun" aria-label={t(lang, 'plans.rerun')}>
        <h3>{t(lang, 'plans.rerun')}</h3>
        <p className="muted">{plan.inputs.length > 0 ? t(lang, 'plans.rerunHint') : t(lang, 'plans.noInputs')}</p>
        {files.map(field)}
        {others.length > 0 ? (
          // The plan's other values (thresholds, recipients): as last time unless changed.
          <details className="rerun-others" data-testid="rerun-others" open={others.some((i) => i.target.var === problem?.var) || undefined}>
            <summary>{t(lang, 'plans.otherValues', { count: others.length })}</summary>
            {others.map(field)}
          </details>
        ) : null}
        {problem !== null ? (
          <div className="notice notice-error" role="alert" data-testid="rerun-problem" data-var={problem.var}>
            {t(lang, `plans.problem.${problem.kind}` as MessageKey, { label: labelOf(problem.var) })}
          </div>
        ) : null}
        {pickError !== null ? (
          <div className="notice notice-error" role="alert" data-testid="rerun-pick-error">
            {pickError}
          </div>
        ) : null}
      </section>
      <SampleRunPanel
        lang={lang}
        yaml={plan.yaml}
        run={sampleRun.run}
        canStart
        onStart={start}
        onCancel={() => void sampleRun.cancel()}
        onAnswer={(node, answer) => void sampleRun.resume({ [node]: answer }, lang)}
        planId={plan.id}
        onOpenRun={(planId, runId) => void sampleRun.open(planId, runId)}
        onOpenNode={(node) => onOpenInEditor(plan.yaml, node)}
        historyOpen
      />
    </div>
  );
}
