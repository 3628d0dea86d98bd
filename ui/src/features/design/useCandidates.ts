// The blocks that fit the instruction and the documents (`blocks_retrieve`), searched again
// once the instruction rests, and the blocks the person pinned for the planner.

import { useEffect, useRef, useState } from 'react';
import { asApiError, blocksRetrieve } from '../../api';
import type { RetrieveResponse } from '../../api/types';

/** How long the instruction must rest before the candidates are searched again. */
const RETRIEVE_DEBOUNCE_MS = 700;
/** How often the candidates are asked for again while the background embedding runs. */
const EMBEDDING_POLL_MS = 1000;

/** The candidates as `CandidatesPanel` shows them. */
export type CandidatesState =
  | { kind: 'idle' }
  | { kind: 'loading' }
  | { kind: 'ready'; response: RetrieveResponse }
  | { kind: 'failed'; code: string; message: string };

/**
 * `onFound` runs when a search the person caused (not a poll) has answered, so the list can be
 * brought into view.
 */
export function useCandidates(instruction: string, readyDocs: readonly string[], onFound: () => void) {
  const [candidates, setCandidates] = useState<CandidatesState>({ kind: 'idle' });
  const [pinned, setPinned] = useState<string[]>([]);
  // Bumped to search again while the workspace's own blocks are embedded in the background.
  const [retrieveRound, setRetrieveRound] = useState(0);
  const retrievePolling = useRef(false);
  const onFoundRef = useRef(onFound);
  onFoundRef.current = onFound;
  const readyDocsKey = readyDocs.join('\n');

  useEffect(() => {
    if (instruction.trim() === '') {
      setCandidates({ kind: 'idle' });
      return undefined;
    }
    let cancelled = false;
    let again: number | undefined;
    const timer = window.setTimeout(() => {
      // A refresh keeps the current list on screen (pinning re-runs the search); a poll does not
      // pull the user back to the candidates tab.
      const polled = retrievePolling.current;
      retrievePolling.current = false;
      setCandidates((previous) => (previous.kind === 'ready' ? previous : { kind: 'loading' }));
      blocksRetrieve({ instruction, docs: readyDocsKey === '' ? [] : readyDocsKey.split('\n'), pinned })
        .then((response) => {
          if (cancelled) return;
          setCandidates({ kind: 'ready', response });
          if (!polled) onFoundRef.current();
          // Keyword results now; the hybrid ranking once the background embedding is done.
          if (response.embedding_progress) {
            again = window.setTimeout(() => {
              retrievePolling.current = true;
              setRetrieveRound((n) => n + 1);
            }, EMBEDDING_POLL_MS);
          }
        })
        .catch((err: unknown) => {
          const error = asApiError(err);
          if (!cancelled) setCandidates({ kind: 'failed', code: error.code, message: error.message });
        });
    }, RETRIEVE_DEBOUNCE_MS);
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
      window.clearTimeout(again);
    };
  }, [instruction, readyDocsKey, pinned, retrieveRound]);

  const togglePin = (id: string) => setPinned((list) => (list.includes(id) ? list.filter((other) => other !== id) : [...list, id]));
  const pin = (id: string) => setPinned((list) => (list.includes(id) ? list : [...list, id]));

  return { candidates, pinned, togglePin, pin };
}
