// The plan being written: its text as the editor last reported it, kept in storage so closing
// the app does not lose it (as the chat is kept).

import { useCallback, useEffect, useRef, useState } from 'react';

const DRAFT_STORAGE_KEY = 'keiri.draft.v1';

/** The plan left in the editor when the app last closed; empty on the first start. */
function readDraft(): string {
  try {
    return window.localStorage.getItem(DRAFT_STORAGE_KEY) ?? '';
  } catch {
    return '';
  }
}

export function usePlanText() {
  // No sample plan: the first screen explains the steps instead (FirstSteps), and a plan
  // appears once the person generates or writes one.
  const [initialText] = useState(readDraft);
  const [text, setText] = useState(initialText);
  // The text at this instant, for handlers that run before the next render.
  const textRef = useRef(text);

  useEffect(() => {
    try {
      if (text === '') window.localStorage.removeItem(DRAFT_STORAGE_KEY);
      else window.localStorage.setItem(DRAFT_STORAGE_KEY, text);
    } catch {
      // Not keeping the draft is fine; the editor still holds it.
    }
  }, [text]);

  /** The editor's text changed. */
  const change = useCallback((next: string) => {
    textRef.current = next;
    setText(next);
  }, []);

  return { initialText, text, textRef, change };
}
