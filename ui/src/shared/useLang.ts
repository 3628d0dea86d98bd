// The studio's language: read from the last choice (or the platform), remembered on every
// change, and mirrored into the window title and `<html lang>`.

import { useEffect, useState } from 'react';
import type { Lang } from '../api/types';
import { initialLang, t } from './i18n';

const LANG_STORAGE_KEY = 'keiri.lang';

function readStoredLang(): string | null {
  try {
    return window.localStorage.getItem(LANG_STORAGE_KEY);
  } catch {
    // Storage can be disabled (private mode, sandboxed webview); the default still works.
    return null;
  }
}

export function useLang(): [Lang, (lang: Lang) => void] {
  const [lang, setLang] = useState<Lang>(() => initialLang(readStoredLang()));

  useEffect(() => {
    document.title = t(lang, 'app.title');
    document.documentElement.lang = lang;
    try {
      window.localStorage.setItem(LANG_STORAGE_KEY, lang);
    } catch {
      // Not remembering the choice is fine.
    }
  }, [lang]);

  return [lang, setLang];
}
