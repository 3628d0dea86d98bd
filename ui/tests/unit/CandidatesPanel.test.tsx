import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { RetrieveResponse } from '../../src/api/types';
import { CandidatesPanel } from '../../src/components/CandidatesPanel';

afterEach(cleanup);

const RESPONSE: RetrieveResponse = {
  candidates: [
    { id: 'csv.read', kind: 'block', category: 'input', title: 'CSV読込', score: 1, bm25: 3.2, vocabulary: 0, dense: null, matched: ['csv'], pinned: false },
  ],
  mode: 'bm25',
  embedder: null,
  notes: [],
};

function show(response: RetrieveResponse, lang: 'ja' | 'en' = 'ja') {
  render(<CandidatesPanel lang={lang} state={{ kind: 'ready', response }} blocks={[]} pinned={[]} onTogglePin={() => {}} />);
}

describe('CandidatesPanel', () => {
  it('shows the background embedding progress above the keyword results', () => {
    show({ ...RESPONSE, embedding_progress: { done: 12, total: 40 } });
    expect(screen.getByTestId('candidates-embedding').textContent).toContain('意味検索を準備中… 12/40');
    expect(screen.getAllByTestId('candidate')).toHaveLength(1);
  });

  it('says it in English too', () => {
    show({ ...RESPONSE, embedding_progress: { done: 0, total: 3 } }, 'en');
    expect(screen.getByTestId('candidates-embedding').textContent).toContain('Preparing semantic search… 0/3');
  });

  it('shows no progress once the embeddings are ready', () => {
    show(RESPONSE);
    expect(screen.queryByTestId('candidates-embedding')).toBeNull();
  });
});
