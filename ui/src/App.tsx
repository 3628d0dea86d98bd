// The studio window: header (tabs, settings, language) and the Design tab in three columns:
// inputs, generation and candidates | the plan as YAML or graph | questions and chat, findings,
// missing items, attempts and dry-run. Each concern's state lives in its hook, beside its
// panels in its feature's folder (src/features/); this component lays the window out and wires
// the hooks together.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { isTauri } from './api';
import type { ApplyMode, BlockSummary, PlanGenerateResponse } from './api/types';
import { insertNode, wireFrom } from './features/catalog/catalog';
import { AttemptsPanel } from './features/generate/AttemptsPanel';
import { CandidatesPanel } from './features/design/CandidatesPanel';
import { ChatPanel } from './features/chat/ChatPanel';
import { CatalogPanel } from './features/catalog/CatalogPanel';
import { DryRunPanel } from './features/run/DryRunPanel';
import { PlansView } from './features/plans/PlansView';
import { SampleRunPanel } from './features/run/SampleRunPanel';
import { FindingsPanel } from './features/design/FindingsPanel';
import { GeneratePanel } from './features/generate/GeneratePanel';
import { GenerationSettings } from './features/generate/GenerationSettings';
import { FirstSteps } from './features/design/FirstSteps';
import { GraphView } from './features/design/GraphView';
import { InputsPanel, openTemplatePicker } from './features/design/InputsPanel';
import { MissingItemsPanel } from './features/design/MissingItemsPanel';
import { QuestionsPanel } from './features/design/QuestionsPanel';
import { RegisterDialog } from './features/register/RegisterDialog';
import { SettingsDialog } from './features/settings/SettingsDialog';
import { YamlEditor } from './features/design/YamlEditor';
import { useCandidates } from './features/design/useCandidates';
import { useCatalog } from './features/catalog/useCatalog';
import { useDocuments } from './features/design/useDocuments';
import { useGeneration } from './features/generate/useGeneration';
import { replacesEditor } from './features/generate/generation';
import { useLang } from './shared/useLang';
import { usePlanText, type YamlEditorHandle } from './features/design/usePlanText';
import { useQuestions } from './features/design/useQuestions';
import { useRegistration } from './features/register/useRegistration';
import { useValidation } from './features/design/useValidation';
import { LANGS, errorText, messageParts, t, type MessageKey } from './shared/i18n';
import { planIdOf, proposedName } from './features/register/register';
import { EMPTY_PLAN_GRAPH, topLevelNodeIds } from './features/design/graph';
import { runFailureFindings, runStates, useSampleRun } from './features/run/sampleRun';
import { isMac, shortcutFor, shortcutLabel, type ShortcutAction } from './shared/shortcuts';

type TopTab = 'design' | 'plans';
type LeftTab = 'candidates' | 'catalog';
type CenterView = 'editor' | 'graph';
type RightTab = 'questions' | 'findings' | 'missing' | 'attempts' | 'dryrun' | 'run';

function platform(): string {
  return typeof navigator === 'undefined' ? '' : navigator.platform || navigator.userAgent;
}

export function App() {
  const [lang, setLang] = useLang();
  const { initialText, text, textRef, sequence, change } = usePlanText();
  const { catalog, templates, blocks } = useCatalog(lang);
  const editor = useRef<YamlEditorHandle>(null);
  const mac = useMemo(() => isMac(platform()), []);
  const validation = useValidation({ text, lang, textRef, sequence });

  // Layout.
  const [topTab, setTopTab] = useState<TopTab>('design');
  // Counts the openings of 登録済みのプラン: each reads the list again.
  const [plansShown, setPlansShown] = useState(0);
  const [leftTab, setLeftTab] = useState<LeftTab>('catalog');
  const [centerView, setCenterView] = useState<CenterView>('editor');
  const [rightTab, setRightTab] = useState<RightTab>('findings');
  // Results wide: the right pane takes the room of the inputs column, for run outputs and
  // workbook grids with many columns.
  const [wide, setWide] = useState(false);
  const [selectedNode, setSelectedNode] = useState<string | null>(null);
  const [settingsOpen, setSettingsOpen] = useState(false);

  const [instruction, setInstruction] = useState('');
  const { documents, readyDocs, pending: documentsPending, addFiles, pickDocuments, removeDocument } = useDocuments();
  const { candidates, pinned, togglePin, pin } = useCandidates(instruction, readyDocs, () => setLeftTab('candidates'));
  const { planRequirements, setPlanRequirements, showFindings } = validation;
  const questions = useQuestions({ lang, textRef, editor, planRequirements, setPlanRequirements, showFindings });
  /** Puts a generated plan in the editor, with its questions. */
  const applyGenerated = (response: PlanGenerateResponse, answers: Record<string, unknown>) => {
    questions.restart(response.requirements, answers);
    setSelectedNode(null);
    editor.current?.setText(response.yaml, 0);
    if (response.requirements.length > 0) setRightTab('questions');
    else if (response.attempts.length > 1) setRightTab('attempts');
    else setRightTab('findings');
  };
  const onGenerated = (response: PlanGenerateResponse, answers: Record<string, unknown>): boolean => {
    if (!replacesEditor(response.status, text)) {
      // The attempts beside the user's plan; the user may still take the last one.
      if (response.status === 'invalid') setRightTab('attempts');
      return false;
    }
    applyGenerated(response, answers);
    return true;
  };
  const generation = useGeneration({ instruction, readyDocs, documentsPending, pinned, lang, onGenerated });
  const registration = useRegistration({
    lang,
    instruction,
    textRef,
    sequence,
    editor,
    onRefused: (findings) => {
      showFindings(findings);
      setRightTab('findings');
    },
  });
  const { notice, clearNotice } = registration;

  const sampleRun = useSampleRun();
  const restoreRun = sampleRun.restore;
  // Opening 試行実行 shows a run left waiting for an answer (the app was closed while it was
  // paused): its state is on disk, and answering continues it.
  const runPlanId = planIdOf(text);
  const runTabOpen = rightTab === 'run';
  useEffect(() => {
    if (runTabOpen) void restoreRun(runPlanId);
  }, [runTabOpen, runPlanId, restoreRun]);

  // The editor reports every change here at once, `setText` included: `change` moves the text
  // and the edit sequence before any other handler can run.
  const onChange = useCallback(
    (next: string) => {
      change(next);
      // A saved/failed notice describes the text as it was; once edited it would mislead.
      clearNotice();
    },
    [change, clearNotice],
  );

  const onValidateNow = () => void validation.validate(textRef.current, lang);

  /** Selects a plan node in both views: the graph highlights it, the editor shows its line. */
  const selectNode = (id: string) => {
    setSelectedNode(id);
    editor.current?.revealNode(id);
  };

  // + on a catalog block: the new node reads the table of the node selected in the editor or
  // the graph, when there is one.
  const onInsert = (block: BlockSummary) => {
    const wiring = selectedNode !== null ? wireFrom(textRef.current, selectedNode, blocks) : null;
    const { text: next, cursor } = insertNode(block, textRef.current, wiring);
    editor.current?.setText(next, cursor);
  };

  const actions = useRef<Record<ShortcutAction, () => void>>({ generate: () => {}, validate: () => {}, register: () => {} });
  actions.current = {
    generate: () => void generation.generate(),
    validate: onValidateNow,
    register: () => {
      if (!registration.registering) registration.open();
    },
  };
  useEffect(() => {
    // Capture phase: the editor binds Mod-Enter itself, and the studio's shortcuts win.
    const onKey = (event: KeyboardEvent) => {
      const action = shortcutFor(event, mac);
      if (action === null) return;
      event.preventDefault();
      event.stopPropagation();
      actions.current[action]();
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, [mac]);

  const titled = (key: MessageKey, action: ShortcutAction) => `${t(lang, key)} (${shortcutLabel(action, mac)})`;

  // ---- Render ----

  // A sample run's failed nodes join the validator's findings while the text is the one that ran.
  const runFindings = runFailureFindings(sampleRun.run, text, lang);
  const { findingsState, summary, summaryText, errorCount, status } = validation;
  const findings = findingsState.kind === 'done' ? [...findingsState.findings, ...runFindings] : runFindings;
  const planEmpty = text.trim() === '';
  // Empty text is not sent to the server (see `validate`): its graph has no nodes.
  const planGraph = planEmpty ? EMPTY_PLAN_GRAPH : summary?.graph;
  const attempts = generation.response?.attempts ?? [];

  const rightTabs: { id: RightTab; label: string; count: number | null; explain?: string }[] = [
    { id: 'questions', label: t(lang, 'right.questions'), count: questions.open.length || null },
    { id: 'findings', label: t(lang, 'right.findings'), count: findings.length || null },
    { id: 'missing', label: t(lang, 'right.missing'), count: null },
    { id: 'attempts', label: t(lang, 'right.attempts'), count: attempts.length || null },
    { id: 'dryrun', label: t(lang, 'right.dryrun'), count: null, explain: t(lang, 'explain.dryrun') },
    { id: 'run', label: t(lang, 'right.run'), count: null, explain: t(lang, 'explain.run') },
  ];
  const startSampleRun = () => void sampleRun.start(text, topLevelNodeIds(text), lang);
  /** Shows node `id` in the YAML editor (from the missing items and the run panel). */
  const showNodeInEditor = (id: string) => {
    setCenterView('editor');
    selectNode(id);
  };
  /** A registered plan into the editor (登録済みのプラン 「設計で開く」), at `node` when given. */
  const openInEditor = (yaml: string, node?: string) => {
    setTopTab('design');
    setSelectedNode(null);
    editor.current?.setText(yaml, 0);
    if (node !== undefined) showNodeInEditor(node);
  };

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
          {(['design', 'plans'] as const).map((id) => (
            <button
              key={id}
              type="button"
              role="tab"
              aria-selected={topTab === id}
              className={topTab === id ? 'tab tab-active' : 'tab'}
              data-testid={`tab-${id}`}
              onClick={() => {
                if (id === 'plans') setPlansShown((n) => n + 1);
                setTopTab(id);
              }}
            >
              {t(lang, id === 'design' ? 'tab.design' : 'tab.plans')}
            </button>
          ))}
        </nav>
        <div className="topbar-end">
          <span className="mode-badge" data-testid="mode">
            {t(lang, isTauri() ? 'mode.desktop' : 'mode.browser')}
          </span>
          <button type="button" className="button button-small" data-testid="open-settings" onClick={() => setSettingsOpen(true)}>
            {t(lang, 'settings.open')}
          </button>
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

      <SettingsDialog lang={lang} open={settingsOpen} onClose={() => setSettingsOpen(false)} onLangChange={setLang} />

      {topTab === 'plans' ? <PlansView lang={lang} refresh={plansShown} onOpenInEditor={openInEditor} /> : null}

      {/* Kept mounted under 登録済みのプラン: the editor's text, undo history and runs survive. */}
      <main className={wide ? 'design studio design-wide' : 'design studio'} hidden={topTab !== 'design'}>
        <aside className="column column-left">
          <div className="panel inputs-panel">
            <InputsPanel
              lang={lang}
              instruction={instruction}
              onInstructionChange={setInstruction}
              documents={documents}
              onAddFiles={addFiles}
              {...(isTauri() ? { onPickFiles: () => void pickDocuments() } : {})}
              onRemoveDocument={removeDocument}
              templates={templates}
              selectedTemplates={generation.selectedTemplates}
              onToggleTemplate={generation.toggleTemplate}
              generateTitle={titled('generate.title', 'generate')}
            />
            <div className="mode-row">
              <label className="muted" htmlFor="apply-mode">
                {t(lang, 'generate.mode')}
              </label>
              <select
                id="apply-mode"
                className="input input-small"
                value={generation.applyMode ?? 'auto'}
                data-testid="apply-mode"
                onChange={(event) => generation.setApplyMode(event.target.value === 'auto' ? null : (event.target.value as ApplyMode))}
              >
                <option value="auto" title={t(lang, 'generate.mode.autoTitle')}>
                  {t(lang, 'generate.mode.auto')}
                </option>
                <option value="hint">{t(lang, 'generate.mode.hint')}</option>
                <option value="llm-only">{t(lang, 'generate.mode.llm-only')}</option>
                <option value="compose">{t(lang, 'generate.mode.compose')}</option>
              </select>
            </div>
            <GenerationSettings lang={lang} value={generation.settings} onChange={generation.setSettings} />
            <GeneratePanel
              lang={lang}
              running={generation.running}
              startedAt={generation.startedAt}
              progress={generation.progress}
              outcome={generation.outcome}
              canGenerate={instruction.trim() !== '' && !documentsPending}
              title={titled('generate.button', 'generate')}
              onGenerate={() => void generation.generate()}
              onCancel={generation.cancel}
              onChangeTemplates={openTemplatePicker}
              onUseAttempt={() => {
                if (generation.response !== null) applyGenerated(generation.response, generation.answers);
              }}
            />
          </div>
          <div className="panel side-panel">
            <div className="subtabs" role="tablist">
              {(['candidates', 'catalog'] as const).map((id) => (
                <button
                  key={id}
                  type="button"
                  role="tab"
                  aria-selected={leftTab === id}
                  className={leftTab === id ? 'subtab subtab-active' : 'subtab'}
                  data-testid={`left-tab-${id}`}
                  onClick={() => setLeftTab(id)}
                >
                  {t(lang, id === 'candidates' ? 'side.candidates' : 'side.catalog')}
                </button>
              ))}
            </div>
            <div className="side-body">
              {leftTab === 'candidates' ? (
                <p className="muted side-explain" data-testid="explain-pin">
                  {t(lang, 'explain.pin')}
                </p>
              ) : null}
              {leftTab === 'candidates' ? (
                <CandidatesPanel lang={lang} state={candidates} blocks={blocks} pinned={pinned} onTogglePin={togglePin} />
              ) : (
                <CatalogPanel state={catalog} lang={lang} onInsert={onInsert} />
              )}
            </div>
          </div>
        </aside>

        <section className="panel editor-panel column-center" aria-label={t(lang, 'editor.title')}>
          <header className="panel-header toolbar">
            <div className="subtabs" role="tablist">
              {(['editor', 'graph'] as const).map((id) => (
                <button
                  key={id}
                  type="button"
                  role="tab"
                  aria-selected={centerView === id}
                  className={centerView === id ? 'subtab subtab-active' : 'subtab'}
                  data-testid={`view-${id}`}
                  onClick={() => setCenterView(id)}
                >
                  {t(lang, id === 'editor' ? 'view.editor' : 'view.graph')}
                </button>
              ))}
            </div>
            <span className={`status status-${status.tone}`} data-testid="validation-status" data-tone={status.tone}>
              {status.text}
            </span>
            <div className="toolbar-actions">
              <button
                type="button"
                className="button"
                title={titled('action.validateTitle', 'validate')}
                data-testid="validate"
                onClick={onValidateNow}
              >
                {t(lang, 'action.validate')}
              </button>
              <button
                type="button"
                className="button button-primary"
                title={titled('action.registerTitle', 'register')}
                data-testid="register"
                disabled={registration.registering || planEmpty}
                onClick={registration.open}
              >
                {registration.registering ? t(lang, 'status.registering') : t(lang, 'action.register')}
              </button>
            </div>
          </header>
          <div className="register-line" data-testid="register-target" data-blocked={errorCount > 0 || planEmpty} data-empty={planEmpty}>
            {planEmpty ? (
              <span className="muted">{t(lang, 'register.emptyPlan')}</span>
            ) : proposedName(text, instruction) === '' ? (
              <span className="muted">{t(lang, 'register.noId')}</span>
            ) : (
              <span className="muted">{t(lang, 'register.targetName', { name: proposedName(text, instruction) })}</span>
            )}
            {errorCount > 0 ? <span className="register-blocked">{t(lang, 'register.blocked')}</span> : null}
          </div>
          {registration.step !== null ? (
            <RegisterDialog
              key={registration.step.stamp}
              lang={lang}
              name={registration.step.name}
              onNameChange={registration.rename}
              stamp={registration.step.stamp}
              busy={registration.registering}
              onConfirm={(name) => void registration.confirm(name)}
              onCancel={registration.cancel}
            />
          ) : null}
          {planEmpty && centerView === 'editor' ? (
            <FirstSteps
              lang={lang}
              onExample={(example) => {
                setInstruction(example);
                document.getElementById('instruction')?.focus();
              }}
            />
          ) : null}
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
                      <code key={index} data-testid="register-file" translate="no">
                        {notice.fileName}
                      </code>
                    ),
                  )}
                  <span className="notice-detail" data-testid="register-path">
                    {notice.path}
                  </span>
                </span>
              ) : (
                <span title={notice.message}>
                  {t(lang, 'register.failed', { message: errorText(lang, notice.code) })} <code>{notice.code}</code>
                </span>
              )}
              <button type="button" className="notice-close" aria-label={t(lang, 'notice.close')} onClick={clearNotice}>
                ×
              </button>
            </div>
          ) : null}
          {/* The editor stays mounted under the graph: its cursor, selection and undo history survive. */}
          <div className="editor-frame" hidden={centerView !== 'editor'}>
            <YamlEditor
              ref={editor}
              initialText={initialText}
              findings={findings}
              lang={lang}
              label={t(lang, 'editor.label')}
              onChange={onChange}
              onCursorNode={setSelectedNode}
            />
          </div>
          {centerView === 'graph' ? (
            <div className="graph-frame" data-testid="graph-frame" data-selected-node={selectedNode ?? ''}>
              <GraphView
                lang={lang}
                graph={planGraph}
                findings={findings}
                blocks={blocks}
                selectedNodeId={selectedNode}
                onSelectNode={selectNode}
                runStates={
                  sampleRun.run.status !== 'idle' && sampleRun.run.yaml === text && summaryText === text
                    ? runStates(sampleRun.run)
                    : undefined
                }
              />
            </div>
          ) : null}
        </section>

        <aside className="panel column-right" aria-label={t(lang, 'right.questions')}>
          <div className="subtabs subtabs-wrap" role="tablist">
            {rightTabs.map((tab) => (
              <button
                key={tab.id}
                type="button"
                role="tab"
                aria-selected={rightTab === tab.id}
                className={rightTab === tab.id ? 'subtab subtab-active' : 'subtab'}
                data-testid={`right-tab-${tab.id}`}
                title={tab.explain}
                onClick={() => setRightTab(tab.id)}
              >
                {tab.label}
                {tab.count !== null ? <span className="count-badge">{tab.count}</span> : null}
              </button>
            ))}
            <button
              type="button"
              className="subtab subtab-wide"
              aria-pressed={wide}
              data-testid="right-wide"
              title={t(lang, wide ? 'right.narrowTitle' : 'right.wideTitle')}
              onClick={() => setWide((w) => !w)}
            >
              {t(lang, wide ? 'right.narrow' : 'right.wide')}
            </button>
          </div>
          {rightTabs.find((tab) => tab.id === rightTab)?.explain !== undefined ? (
            <p className="muted right-explain" data-testid="right-explain">
              {rightTabs.find((tab) => tab.id === rightTab)?.explain}
            </p>
          ) : null}
          <div className="right-body">
            {/* Kept mounted while another tab shows: the chat's conversation, pending
                approval and undo must survive a tab switch. */}
            <div className="chat-stack" hidden={rightTab !== 'questions'}>
              <div className="panel-body questions-body">
                <QuestionsPanel
                  lang={lang}
                  questions={questions.open}
                  known={questions.known}
                  answers={questions.answers}
                  focusId={questions.focusId}
                  documents={documents}
                  busy={questions.busy}
                  error={questions.error}
                  regenerate={questions.waiting > 0 ? { count: questions.waiting, running: generation.running } : null}
                  onAnswer={(requirement, value) => void questions.answer(requirement, value)}
                  onRegenerate={() => void generation.generate({ ...questions.answers })}
                  onChooseFile={questions.chooseFile}
                  nativePicker={isTauri()}
                />
              </div>
              {/* The Design chat: the questions above, free messages to the agent below. */}
              <ChatPanel lang={lang} planYaml={text} onPlanChange={(yaml) => editor.current?.setText(yaml)} />
            </div>
            {rightTab === 'findings' ? (
              <FindingsPanel
                state={findingsState.kind === 'done' ? { kind: 'done', findings } : findingsState}
                lang={lang}
                onSelect={(finding) => editor.current?.reveal(finding)}
              />
            ) : null}
            {rightTab === 'missing' ? (
              <MissingItemsPanel
                lang={lang}
                graph={summary?.graph}
                findings={findings}
                requirements={questions.open}
                onAsk={(id) => {
                  questions.ask(id);
                  setRightTab('questions');
                }}
                onOpenNode={showNodeInEditor}
                onPinBlock={pin}
              />
            ) : null}
            {rightTab === 'attempts' ? (
              <div className="panel-body">
                <AttemptsPanel lang={lang} attempts={attempts} suggestions={generation.response?.suggestions ?? []} reasoning={generation.response?.reasoning ?? ''} />
              </div>
            ) : null}
            {rightTab === 'dryrun' ? (
              <DryRunPanel lang={lang} yaml={text} />
            ) : null}
            {rightTab === 'run' ? (
              <SampleRunPanel
                lang={lang}
                yaml={text}
                run={sampleRun.run}
                canStart={text.trim() !== ''}
                onStart={startSampleRun}
                onCancel={() => void sampleRun.cancel()}
                onAnswer={(node, answer) => void sampleRun.resume({ [node]: answer }, lang)}
                planId={runPlanId}
                onOpenRun={(plan, run) => void sampleRun.open(plan, run)}
                onOpenNode={showNodeInEditor}
              />
            ) : null}
          </div>
        </aside>
      </main>
    </div>
  );
}
