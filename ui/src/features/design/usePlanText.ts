// The plan being written: its text as the editor last reported it, kept in storage so closing
// the app does not lose it (as the chat is kept), and the two refs every flow that sends the
// text shares: the text at this instant and the edit sequence.

import { useCallback, useEffect, useRef, useState } from 'react';
import type { ShownFinding } from '../../api/types';

const DRAFT_STORAGE_KEY = 'keiri.draft.v1';

/** The plan left in the editor when the app last closed; empty on the first start. */
function readDraft(): string {
  try {
    return window.localStorage.getItem(DRAFT_STORAGE_KEY) ?? '';
  } catch {
    return '';
  }
}

/**
 * What `YamlEditor` offers through its ref: how a flow puts a plan into the editor (which then
 * reports it as an edit) or shows a place in it.
 */
export interface YamlEditorHandle {
  /** Puts the cursor where `finding` points, scrolls it into view and focuses the editor. */
  reveal(finding: Pick<ShownFinding, 'line' | 'column'>): void;
  /** Replaces the whole document (one undoable change) and puts the cursor at `cursor`. */
  setText(text: string, cursor?: number): void;
  getText(): string;
  /**
   * Selects the line that names plan node `id` (`- id: id`) and scrolls it to the middle,
   * without taking the focus (the graph view calls this when a node is chosen there).
   * Returns false when no node has that id.
   */
  revealNode(id: string): boolean;
}

export function usePlanText() {
  // No sample plan: the first screen explains the steps instead (FirstSteps), and a plan
  // appears once the person generates or writes one.
  const [initialText] = useState(readDraft);
  const [text, setText] = useState(initialText);
  // The text the editor holds at this instant, for handlers that run before the next render
  // (an answer, a validation whose debounce timer fired, a registration).
  const textRef = useRef(text);
  // Every edit bumps the sequence so a response for an older text is dropped: findings are
  // only ever shown against the text they were computed for. A validation bumps it too
  // (`useValidation`), so only the newest request's answer is shown.
  const sequence = useRef(0);

  useEffect(() => {
    try {
      if (text === '') window.localStorage.removeItem(DRAFT_STORAGE_KEY);
      else window.localStorage.setItem(DRAFT_STORAGE_KEY, text);
    } catch {
      // Not keeping the draft is fine; the editor still holds it.
    }
  }, [text]);

  /**
   * The editor's text changed (typed, or put there by `setText`, which reports it at once).
   * Both refs move before this returns, not in an effect after the render: a validation or an
   * answer that runs in between must already see the new text.
   */
  const change = useCallback((next: string) => {
    textRef.current = next;
    sequence.current += 1;
    setText(next);
  }, []);

  return { initialText, text, textRef, sequence, change };
}
