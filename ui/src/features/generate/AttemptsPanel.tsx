// The generation's attempts (the first wiring, then each repair) with the findings of each
// and what changed from the attempt before.

import type { Attempt, Lang } from '../../api/types';
import { planDiff, type NodeChange } from './attempts';
import { t } from '../../shared/i18n';

interface Props {
  lang: Lang;
  attempts: readonly Attempt[];
  suggestions: readonly string[];
  /** The model's own account of the plan, if it gave one. */
  reasoning: string;
}

function ChangeLine({ change }: { change: NodeChange }) {
  switch (change.kind) {
    case 'added':
      return (
        <li className="diff-add">
          + <code translate="no">{change.node}</code> <span translate="no">{change.block}</span>
        </li>
      );
    case 'removed':
      return (
        <li className="diff-del">
          − <code translate="no">{change.node}</code> <span translate="no">{change.block}</span>
        </li>
      );
    case 'changed':
      return (
        <li className="diff-mod">
          <span translate="no">
            ~ <code>{change.node}</code>.{change.field}:
          </span>{' '}
          <del translate="no">{change.before}</del> → <ins translate="no">{change.after}</ins>
        </li>
      );
  }
}

export function AttemptsPanel({ lang, attempts, suggestions, reasoning }: Props) {
  if (attempts.length === 0) {
    return (
      <p className="empty-note" data-testid="attempts-empty">
        {t(lang, 'attempts.none')}
      </p>
    );
  }
  return (
    <div className="attempts" data-testid="attempts">
      {reasoning.trim() !== '' ? (
        <details className="reasoning">
          <summary>{t(lang, 'attempts.reasoning')}</summary>
          <p>{reasoning}</p>
        </details>
      ) : null}
      <ol className="attempt-list">
        {attempts.map((attempt, index) => {
          const previous = index > 0 ? attempts[index - 1] : undefined;
          const changes = previous ? planDiff(previous.plan, attempt.plan) : [];
          return (
            <li key={attempt.n} className={attempt.errors > 0 ? 'attempt attempt-failed' : 'attempt attempt-ok'} data-testid="attempt" data-n={attempt.n} data-stage={attempt.stage} data-errors={attempt.errors}>
              <div className="attempt-head">
                <strong>{t(lang, 'attempts.title', { n: attempt.n })}</strong>
                <span className="category-tag">{t(lang, attempt.stage === 'repair' ? 'attempts.repair' : 'attempts.wiring')}</span>
                <span className={attempt.errors > 0 ? 'status status-error' : 'status status-ok'}>
                  {attempt.errors > 0 ? t(lang, 'attempts.errors', { count: attempt.errors }) : t(lang, 'attempts.ok')}
                </span>
                <span className="muted" translate="no">
                  {attempt.strategy}
                </span>
              </div>
              {attempt.issues.length > 0 ? (
                <ul className="attempt-issues">
                  {attempt.issues.map((issue, i) => (
                    <li key={i} className={`issue issue-${issue.severity}`} data-testid="attempt-issue" data-code={issue.code}>
                      <code translate="no">{issue.code}</code> {issue.node_id ? <code translate="no">{issue.node_id}</code> : null} {issue.message}
                    </li>
                  ))}
                </ul>
              ) : null}
              {previous ? (
                <details className="attempt-diff" open data-testid="attempt-diff">
                  <summary>{t(lang, 'attempts.diff', { n: previous.n })}</summary>
                  {changes.length === 0 ? (
                    <p className="muted">{t(lang, 'attempts.noChange')}</p>
                  ) : (
                    <ul className="diff-lines">
                      {changes.map((change, i) => (
                        <ChangeLine key={i} change={change} />
                      ))}
                    </ul>
                  )}
                </details>
              ) : null}
            </li>
          );
        })}
      </ol>
      {suggestions.length > 0 ? (
        <div className="suggestions">
          <h3>{t(lang, 'attempts.suggestions')}</h3>
          <ul>
            {suggestions.map((suggestion, i) => (
              <li key={i}>{suggestion}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
