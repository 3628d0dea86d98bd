import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { RetrieveResponse } from '../../api/types';
import { CandidatesPanel } from './CandidatesPanel';

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

  it('shows relevance as a bar relative to the best candidate with the matched words, not the ranking internals', () => {
    show({
      ...RESPONSE,
      mode: 'hybrid',
      candidates: [
        { id: 'csv.read', kind: 'block', category: 'input', title: 'CSV読込', score: 0.8, bm25: 3.2, vocabulary: 0, dense: 0.91, matched: ['請求', '請', 'csv'], pinned: false },
        { id: 'csv.write', kind: 'block', category: 'output', title: 'CSV書出', score: 0.2, bm25: 1.1, vocabulary: 0, dense: 0.52, matched: [], pinned: false },
      ],
    });
    const bars = screen.getAllByTestId('candidate-relevance');
    expect(bars.map((bar) => bar.dataset.percent)).toEqual(['100', '25']);
    expect(bars[0]?.querySelectorAll('mark')).toHaveLength(2);
    const text = screen.getByTestId('candidates-panel').textContent ?? '';
    expect(text).not.toMatch(/BM25|意味|0\.91|3\.2/);
  });

  it('keeps the retriever notes for administrators in a closed disclosure', () => {
    show({ ...RESPONSE, notes: ['saved settings not used for embeddings: KEIRI_EMBED_MODEL'] });
    expect(screen.getByTestId('candidates-notes').textContent).toContain('検索に使えなかった情報があります');
    const details = screen.getByTestId('tech-details') as HTMLDetailsElement;
    expect(details.open).toBe(false);
    expect(details.textContent).toContain('KEIRI_EMBED_MODEL');
  });
});
