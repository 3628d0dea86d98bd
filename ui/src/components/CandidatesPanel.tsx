// The Top-K blocks retrieval finds for the instruction: id, inputs and outputs, description,
// scores and matched terms. Pinning a block makes it a candidate of the next generation
// whatever its score (`pinned_blocks`).

import type { BlockSummary, Lang, RetrieveCandidate, RetrieveResponse } from '../api/types';
import { categoryLabel, errorText, t } from '../i18n';

export type CandidatesState =
  | { kind: 'idle' }
  | { kind: 'loading' }
  | { kind: 'ready'; response: RetrieveResponse }
  | { kind: 'failed'; code: string; message: string };

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

function CandidateRow({
  lang,
  candidate,
  block,
  pinned,
  onTogglePin,
}: {
  lang: Lang;
  candidate: Pick<RetrieveCandidate, 'id' | 'category' | 'title' | 'score' | 'bm25' | 'dense' | 'matched'> | null;
  block: BlockSummary | undefined;
  pinned: boolean;
  onTogglePin(): void;
}) {
  const id = candidate?.id ?? block?.id ?? '';
  const description = block ? (lang === 'en' ? block.description_en || block.description_ja : block.description_ja) : '';
  return (
    <li className={pinned ? 'candidate candidate-pinned' : 'candidate'} data-testid="candidate" data-candidate-id={id} data-pinned={pinned}>
      <div className="candidate-head">
        <code className="candidate-id">{id}</code>
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
          <span>{t(lang, 'candidates.inputs')}: {ports(block.inputs) || '—'}</span>
          <span>{t(lang, 'candidates.outputs')}: {ports(block.outputs) || '—'}</span>
        </p>
      ) : null}
      {candidate ? (
        <p className="candidate-scores" title={t(lang, 'candidates.scoreTitle')}>
          <span>{t(lang, 'candidates.score')} {candidate.score.toFixed(2)}</span>
          <span>BM25 {candidate.bm25.toFixed(1)}</span>
          {candidate.dense !== null ? <span>{t(lang, 'candidates.dense')} {candidate.dense.toFixed(2)}</span> : null}
          {candidate.matched.length > 0 ? (
            <span className="matched">
              {/* Single-character CJK n-grams say little to a person; show the longer terms. */}
              {candidate.matched.filter((term) => term.length > 1).slice(0, 6).map((term) => (
                <mark key={term}>{term}</mark>
              ))}
            </span>
          ) : null}
        </p>
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
        <p className="empty-note empty-error" data-testid="candidates-error" data-code={state.code} title={state.message}>
          {errorText(lang, state.code)} <code>{state.code}</code>
        </p>
      );
      break;
    case 'ready': {
      const candidates = state.response.candidates.filter((candidate) => candidate.kind === 'block');
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
          {state.response.notes.length > 0 ? <p className="muted">{state.response.notes.join(' ')}</p> : null}
          <ul className="candidate-list" data-testid="candidates">
            {extraPinned.map((id) => (
              <CandidateRow key={id} lang={lang} candidate={null} block={byId.get(id)} pinned onTogglePin={() => onTogglePin(id)} />
            ))}
            {candidates.map((candidate) => (
              <CandidateRow
                key={candidate.id}
                lang={lang}
                candidate={candidate}
                block={byId.get(candidate.id)}
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
