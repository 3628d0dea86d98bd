// The block catalog: search, grouped list, and a button per block that inserts a node.

import { useMemo, useState } from 'react';
import type { BlockSummary, Lang } from '../../api/types';
import { blockDescription, blockTitle, filterBlocks, groupByCategory, portDescription } from './catalog';
import { categoryLabel, t } from '../../shared/i18n';
import type { CatalogState } from './useCatalog';

interface Props {
  state: CatalogState;
  lang: Lang;
  onInsert(block: BlockSummary): void;
}

function BlockCard({ block, lang, onInsert }: { block: BlockSummary; lang: Lang; onInsert(block: BlockSummary): void }) {
  const description = blockDescription(block, lang);
  return (
    <li className="block-card" data-testid="catalog-block" data-block-id={block.id}>
      <div className="block-head">
        <div className="block-titles">
          <span className="block-title">{blockTitle(block, lang)}</span>
          <code className="block-id" translate="no">
            {block.id}
          </code>
        </div>
        <button
          type="button"
          className="icon-button"
          title={t(lang, 'catalog.insert')}
          aria-label={`${t(lang, 'catalog.insert')}: ${block.id}`}
          data-testid="catalog-insert"
          onClick={() => onInsert(block)}
        >
          +
        </button>
      </div>
      {description !== '' ? <p className="block-description">{description}</p> : null}
      <div className="block-inputs">
        <span className="block-inputs-label">{t(lang, 'catalog.inputs')}</span>
        {block.inputs.length === 0 ? (
          <span className="port port-none">{t(lang, 'catalog.noInputs')}</span>
        ) : (
          block.inputs.map((port) => (
            <span
              key={port.name}
              className={port.required ? 'port port-required' : 'port'}
              translate="no"
              title={`${port.type}${port.required ? ` · ${t(lang, 'catalog.required')}` : ''}\n${portDescription(port, lang)}`}
            >
              {port.name}
              {port.required ? <span className="port-star" aria-label={t(lang, 'catalog.required')}>*</span> : null}
            </span>
          ))
        )}
      </div>
    </li>
  );
}

export function CatalogPanel({ state, lang, onInsert }: Props) {
  const [query, setQuery] = useState('');
  const blocks = state.kind === 'ready' ? state.blocks : [];
  const shown = useMemo(() => filterBlocks(blocks, query), [blocks, query]);
  const groups = useMemo(() => groupByCategory(shown), [shown]);

  let body;
  if (state.kind === 'loading') {
    body = <p className="empty empty-muted">{t(lang, 'catalog.loading')}</p>;
  } else if (state.kind === 'failed') {
    body = (
      <p className="empty empty-error" data-testid="catalog-error">
        {t(lang, 'catalog.failed', { message: state.message })}
      </p>
    );
  } else if (state.blocks.length === 0) {
    body = <p className="empty empty-muted">{t(lang, 'catalog.empty')}</p>;
  } else if (shown.length === 0) {
    body = (
      <p className="empty empty-muted" data-testid="catalog-no-match">
        {t(lang, 'catalog.noMatch', { query: query.trim() })}
      </p>
    );
  } else {
    body = groups.map(([category, list]) => (
      <section key={category} className="category" data-testid="catalog-category">
        <h3 className="category-name">
          <span className={`category-dot category-${category}`} aria-hidden="true" />
          {categoryLabel(lang, category)}
          <span className="category-count">{list.length}</span>
        </h3>
        <ul className="block-list">
          {list.map((block) => (
            <BlockCard key={block.id} block={block} lang={lang} onInsert={onInsert} />
          ))}
        </ul>
      </section>
    ));
  }

  return (
    <aside className="panel catalog-panel" data-testid="catalog" aria-label={t(lang, 'catalog.title')}>
      <header className="panel-header">
        <h2>{t(lang, 'catalog.title')}</h2>
        {state.kind === 'ready' ? (
          <span className="muted" data-testid="catalog-count">
            {t(lang, 'catalog.count', { shown: shown.length, total: state.blocks.length })}
          </span>
        ) : null}
      </header>
      <div className="search">
        <input
          type="search"
          value={query}
          placeholder={t(lang, 'catalog.search')}
          aria-label={t(lang, 'catalog.search')}
          data-testid="catalog-search"
          onChange={(event) => setQuery(event.target.value)}
        />
      </div>
      {state.kind === 'ready' && state.issues.length > 0 ? (
        <p
          className="catalog-issues"
          data-testid="catalog-issues"
          title={state.issues.map((issue) => `${issue.file}: ${issue.message}`).join('\n')}
        >
          {t(lang, 'catalog.issues', { count: state.issues.length })}
        </p>
      ) : null}
      <div className="panel-body">{body}</div>
    </aside>
  );
}
