// The Top-K blocks retrieval finds for the instruction: the block's title (its id as a
// subtitle), inputs and outputs, description, and how relevant it is — a plain bar relative to
// the best candidate with the words that matched, never the ranking's internals (BM25, cosine
// similarity). Pinning a block makes it a candidate of the next generation whatever its score
// (`pinned_blocks`). The retriever's notes (English, for administrators) stay in a disclosure.

import type { BlockSummary, Candidate, Lang } from '../../api/types';
import { blockTitle } from '../catalog/catalog';
import { categoryLabel, errorText, t } from '../../shared/i18n';
import { TechnicalDetails } from '../../shared/TechnicalDetails';
import type { CandidatesState } from './useCandidates';

interface Props {
  lang: Lang;
  state: CandidatesState;
  /** The catalog, for each candidate's ports and description. */
  blocks: readonly BlockSummary[];
  pinned: readonly string[];
  onTogglePin(id: string): void;
}

function ports(list: BlockSummary['inputs']): string {
  return list.map((port) => `${port.name}${port.required ? '*' : ''}`).join(', ');
}

/** A candidate's relevance in percent of the best score shown (0–100). */
export function relevancePercent(score: number, best: number): number {
  if (!(best > 0) || !(score > 0)) return 0;
  return Math.max(1, Math.min(100, Math.round((score / best) * 100)));
}

/** The matched terms worth showing a person: single CJK characters and bigram halves say little. */
export function matchedWords(matched: readonly string[]): string[] {
  return [...new Set(matched.filter((term) => [...term].length > 1))].slice(0, 6);
}

function CandidateRow({
  lang,
  candidate,
  block,
  best,
  pinned,
  onTogglePin,
}: {
  lang: Lang;
  candidate: Pick<Candidate, 'id' | 'category' | 'title' | 'score' | 'matched'> | null;
  block: BlockSummary | undefined;
  /** The highest score in the list, the bar's 100 %. */
  best: number;
  pinned: boolean;
  onTogglePin(): void;
}) {
  const id = candidate?.id ?? block?.id ?? '';
  const title = block ? blockTitle(block, lang) : candidate?.title || id;
  const description = block ? (lang === 'en' ? block.description_en || block.description_ja : block.description_ja) : '';
  const percent = candidate ? relevancePercent(candidate.score, best) : null;
  const words = candidate ? matchedWords(candidate.matched) : [];
  return (
    <li className={pinned ? 'candidate candidate-pinned' : 'candidate'} data-testid="candidate" data-candidate-id={id} data-pinned={pinned}>
      <div className="candidate-head">
        <span className="candidate-titles">
          <span className="candidate-title" title={title}>
            {title}
          </span>
          {title !== id ? (
            <code className="candidate-id" translate="no" title={id}>
              {id}
            </code>
          ) : null}
        </span>
        <span className="category-tag">{categoryLabel(lang, candidate?.category ?? block?.category ?? '')}</span>
        <button
          type="button"
          className={pinned ? 'pin pin-on' : 'pin'}
          aria-pressed={pinned}
          title={t(lang, pinned ? 'candidates.unpin' : 'candidates.pin')}
          data-testid="candidate-pin"
          onClick={onTogglePin}
        >
          {t(lang, pinned ? 'candidates.pinnedShort' : 'candidates.pinShort')}
        </button>
      </div>
      {description ? <p className="candidate-desc">{description.split('\n')[0]}</p> : null}
      {block ? (
        <p className="candidate-ports">
          <span>
            {t(lang, 'candidates.inputs')}: <span translate="no">{ports(block.inputs) || '—'}</span>
          </span>
          <span>
            {t(lang, 'candidates.outputs')}: <span translate="no">{ports(block.outputs) || '—'}</span>
          </span>
        </p>
      ) : null}
      {percent !== null ? (
        <div className="candidate-relevance" data-testid="candidate-relevance" data-percent={percent}>
          <span className="relevance-label">{t(lang, 'candidates.relevance')}</span>
          <span
            className="relevance-bar"
            role="meter"
            aria-label={t(lang, 'candidates.relevance')}
            aria-valuemin={0}
            aria-valuemax={100}
            aria-valuenow={percent}
            title={t(lang, 'candidates.relevanceTitle', { percent })}
          >
            <span className="relevance-fill" style={{ width: `${percent}%` }} />
          </span>
          {words.length > 0 ? (
            <span className="matched" aria-label={t(lang, 'candidates.matchedWords')} title={t(lang, 'candidates.matchedWords')}>
              {words.map((term) => (
                <mark key={term}>{term}</mark>
              ))}
            </span>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

export function CandidatesPanel({ lang, state, blocks, pinned, onTogglePin }: Props) {
  const byId = new Map(blocks.map((block) => [block.id, block]));
  let body;
  switch (state.kind) {
    case 'idle':
      body = <p className="empty-note">{t(lang, 'candidates.idle')}</p>;
      break;
    case 'loading':
      body = <p className="empty-note">{t(lang, 'candidates.loading')}</p>;
      break;
    case 'failed':
      body = (
        <div className="empty-note empty-error" data-testid="candidates-error" data-code={state.code}>
          <p>{errorText(lang, state.code)}</p>
          <TechnicalDetails lang={lang} code={state.code} lines={[state.message]} />
        </div>
      );
      break;
    case 'ready': {
      const candidates = state.response.candidates.filter((candidate) => candidate.kind === 'block');
      const best = Math.max(0, ...candidates.map((candidate) => candidate.score));
      const listed = new Set(candidates.map((candidate) => candidate.id));
      const extraPinned = pinned.filter((id) => !listed.has(id));
      const progress = state.response.embedding_progress;
      body = (
        <>
          {progress ? (
            <p className="muted" data-testid="candidates-embedding" role="status">
              {t(lang, 'candidates.embedding', { done: progress.done, total: progress.total })}
            </p>
          ) : null}
          {state.response.notes.length > 0 ? (
            <div className="candidates-notes" data-testid="candidates-notes">
              <p className="muted">{t(lang, 'candidates.notes')}</p>
              <TechnicalDetails lang={lang} lines={state.response.notes} />
            </div>
          ) : null}
          <ul className="candidate-list" data-testid="candidates">
            {extraPinned.map((id) => (
              <CandidateRow key={id} lang={lang} candidate={null} block={byId.get(id)} best={best} pinned onTogglePin={() => onTogglePin(id)} />
            ))}
            {candidates.map((candidate) => (
              <CandidateRow
                key={candidate.id}
                lang={lang}
                candidate={candidate}
                block={byId.get(candidate.id)}
                best={best}
                pinned={pinned.includes(candidate.id)}
                onTogglePin={() => onTogglePin(candidate.id)}
              />
            ))}
          </ul>
          {candidates.length === 0 ? <p className="empty-note">{t(lang, 'candidates.none')}</p> : null}
        </>
      );
      break;
    }
  }
  return (
    <div className="candidates-panel" data-testid="candidates-panel">
      {pinned.length > 0 ? (
        <p className="muted" data-testid="pinned-count">
          {t(lang, 'candidates.pinnedCount', { count: pinned.length })}
        </p>
      ) : null}
      {body}
    </div>
  );
}
