// The blocks and templates the workspace offers, loaded once when the studio opens.

import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { asApiError, catalogList, embeddingsPrewarm, templatesList } from '../../api';
import type { BlockSummary, CatalogIssue, Lang, TemplateSummary } from '../../api/types';
import { errorText } from '../../shared/i18n';

declare global {
  interface Window {
    /**
     * `performance.now()` when the Design tab first rendered the catalog: the cold-start
     * benchmark (scripts/bench-cold-start.mjs) reads it. Set once.
     */
    __KEIRI_INTERACTIVE__?: number;
  }
}

/** The catalog as `CatalogPanel` shows it. */
export type CatalogState =
  | { kind: 'loading' }
  | { kind: 'failed'; message: string }
  | { kind: 'ready'; blocks: BlockSummary[]; issues: CatalogIssue[] };

/** The templates as `InputsPanel` offers them. */
export type TemplatesState =
  | { kind: 'loading' }
  | { kind: 'ready'; templates: TemplateSummary[] }
  | { kind: 'failed'; code: string };

export function useCatalog(lang: Lang) {
  const [catalog, setCatalog] = useState<CatalogState>({ kind: 'loading' });
  const [templates, setTemplates] = useState<TemplatesState>({ kind: 'loading' });
  // A failure is worded in the language shown when it arrives, not when the load started.
  const langRef = useRef(lang);
  langRef.current = lang;

  useEffect(() => {
    let cancelled = false;
    catalogList({})
      .then((response) => {
        if (!cancelled) setCatalog({ kind: 'ready', blocks: response.blocks, issues: response.issues });
      })
      .catch((err: unknown) => {
        const error = asApiError(err);
        if (!cancelled) setCatalog({ kind: 'failed', message: `${errorText(langRef.current, error.code)} (${error.code})` });
      });
    templatesList({})
      .then((response) => {
        if (!cancelled) setTemplates({ kind: 'ready', templates: response.templates });
      })
      .catch((err: unknown) => {
        if (!cancelled) setTemplates({ kind: 'failed', code: asApiError(err).code });
      });
    return () => {
      cancelled = true;
    };
  }, []);

  // A layout effect runs in the same task as the commit that put the catalog's blocks in the
  // DOM, so whoever can see the blocks (the benchmark's WebDriver) can also see the mark; a
  // passive effect may still be pending then.
  useLayoutEffect(() => {
    if (catalog.kind === 'ready' && window.__KEIRI_INTERACTIVE__ === undefined) {
      window.__KEIRI_INTERACTIVE__ = performance.now();
      // Now the model for the first candidate search can load without slowing the start.
      void embeddingsPrewarm().catch(() => undefined);
    }
  }, [catalog.kind]);

  const blocks = catalog.kind === 'ready' ? catalog.blocks : [];
  return { catalog, templates, blocks };
}
