// 不足している項目: vars without a value, open questions, steps that need a person, and the
// validator's other findings, each with the actions that fix it (ask the question, pin a
// block for the next generation, open the node in the editor and the graph).

import { useMemo } from 'react';
import type { Lang, PlanGraph as ApiPlanGraph, Requirement, ShownFinding } from '../../api/types';
import { t } from '../../shared/i18n';
import { missingItems, type MissingAction, type MissingItem } from './missingItems';

interface Props {
  lang: Lang;
  /** The server's graph of the plan (`plan_validate`'s `graph`); none lists no vars or steps. */
  graph: ApiPlanGraph | null | undefined;
  findings: readonly ShownFinding[];
  requirements: readonly Requirement[];
  onAsk(id: string): void;
  onOpenNode(nodeId: string): void;
  onPinBlock(blockId: string): void;
}

function requirementLabel(lang: Lang, requirement: Requirement): string {
  return (lang === 'en' ? requirement.label_en || requirement.label : requirement.label || requirement.label_en) || requirement.id;
}

function title(lang: Lang, item: MissingItem): string {
  switch (item.kind) {
    case 'var':
      return t(lang, item.defined ? 'missing.varEmpty' : 'missing.varUndefined', { name: item.name });
    case 'question':
      return requirementLabel(lang, item.requirement);
    case 'ui-step':
      return t(lang, 'missing.uiStep', { node: item.nodeId });
    case 'finding':
      return item.finding.message;
  }
}

function detail(lang: Lang, item: MissingItem): string | null {
  switch (item.kind) {
    case 'var':
      return item.nodeIds.length > 0 ? t(lang, 'missing.usedBy', { nodes: item.nodeIds.join(', ') }) : null;
    case 'question': {
      const hint = lang === 'en' ? item.requirement.hint_en || item.requirement.hint : item.requirement.hint || item.requirement.hint_en;
      return hint ?? null;
    }
    case 'ui-step':
      return item.block;
    case 'finding':
      return item.finding.hint;
  }
}

function tag(lang: Lang, item: MissingItem): { text: string; tone: string } {
  switch (item.kind) {
    case 'var':
      return { text: t(lang, 'missing.kind.var'), tone: 'error' };
    case 'question':
      return item.requirement.required
        ? { text: t(lang, 'missing.kind.required'), tone: 'error' }
        : { text: t(lang, 'missing.kind.optional'), tone: 'muted' };
    case 'ui-step':
      return { text: t(lang, 'missing.kind.uiStep'), tone: 'info' };
    case 'finding':
      return item.finding.severity === 'warning'
        ? { text: t(lang, 'findings.warning'), tone: 'warning' }
        : { text: t(lang, 'findings.error'), tone: 'error' };
  }
}

function ActionButton({ lang, action, props }: { lang: Lang; action: MissingAction; props: Props }) {
  switch (action.kind) {
    case 'ask':
      return (
        <button
          type="button"
          className="button button-small button-primary"
          data-testid="missing-ask"
          data-requirement-id={action.requirementId}
          onClick={() => props.onAsk(action.requirementId)}
        >
          {t(lang, 'missing.ask')}
        </button>
      );
    case 'pin':
      return (
        <button
          type="button"
          className="button button-small"
          data-testid="missing-pin"
          data-block-id={action.blockId}
          title={t(lang, 'missing.pinTitle', { block: action.blockId })}
          onClick={() => props.onPinBlock(action.blockId)}
        >
          {t(lang, 'missing.pin', { block: action.blockId })}
        </button>
      );
    case 'open':
      return (
        <button
          type="button"
          className="button button-small"
          data-testid="missing-open"
          data-node-id={action.nodeId}
          onClick={() => props.onOpenNode(action.nodeId)}
        >
          {t(lang, 'missing.open', { node: action.nodeId })}
        </button>
      );
  }
}

export function MissingItemsPanel(props: Props) {
  const { lang, graph, findings, requirements } = props;
  const items = useMemo(() => missingItems(graph, findings, requirements), [graph, findings, requirements]);
  return (
    <section className="panel missing-panel" data-testid="missing" aria-label={t(lang, 'missing.title')}>
      <header className="panel-header">
        <h2>{t(lang, 'missing.title')}</h2>
        {items.length > 0 ? (
          <span className="count-badge" data-testid="missing-count">
            {items.length}
          </span>
        ) : null}
      </header>
      <div className="panel-body">
        {items.length === 0 ? (
          <div className="empty empty-ok" data-testid="missing-empty">
            <span className="empty-check" aria-hidden="true">
              ✓
            </span>
            <p>{t(lang, 'missing.none')}</p>
          </div>
        ) : (
          <ul className="missing-list" data-testid="missing-list">
            {items.map((item) => {
              const badge = tag(lang, item);
              const more = detail(lang, item);
              return (
                <li
                  key={item.key}
                  className="missing-item"
                  data-testid="missing-item"
                  data-kind={item.kind}
                  data-code={item.kind === 'finding' ? item.finding.code : undefined}
                >
                  <div className="missing-head">
                    <span className={`missing-tag missing-tag-${badge.tone}`}>{badge.text}</span>
                    <span className="missing-title">{title(lang, item)}</span>
                  </div>
                  {more !== null && more !== '' ? <p className="missing-detail">{more}</p> : null}
                  {item.actions.length > 0 ? (
                    <div className="missing-actions">
                      {item.actions.map((action, index) => (
                        <ActionButton key={`${action.kind}:${index}`} lang={lang} action={action} props={props} />
                      ))}
                    </div>
                  ) : null}
                </li>
              );
            })}
          </ul>
        )}
      </div>
    </section>
  );
}
