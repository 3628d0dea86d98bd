// The workbook diff view, one for every panel that shows what a patch does to a workbook (the
// dry-run, the sample run, a run's question): a spreadsheet-style grid per sheet with the
// changed cells among their real neighbours (header labels, amounts, formulas with their cached
// values), each changed cell with its value before and after, and the styling and structure
// changes in words. The grids are built by `workbookGrid.ts`; this file only draws them.

import type { FormulaIssue, Lang, PatchDiffItem } from '../../api/types';
import { messages, t, type MessageKey } from '../../shared/i18n';
import {
  columnName,
  designChanges,
  formatCellValue,
  formatComputed,
  formatPatchValue,
  type GridCell,
  type NeighbourCell,
  type SheetGrid,
} from './workbookGrid';

/** What an operation does, in words (`set_value` → 値の書き込み); unknown kinds are 「操作」. */
export function opLabel(lang: Lang, op: string): string {
  const key = `dryrun.op.${op}`;
  return Object.prototype.hasOwnProperty.call(messages[lang], key) ? t(lang, key as MessageKey) : t(lang, 'dryrun.op.any');
}

/** A formula issue said by its code; the checker's own message goes to the details. */
export function formulaIssueText(lang: Lang, issue: Pick<FormulaIssue, 'code'>): string {
  const key = `dryrun.formula.${issue.code}`;
  return Object.prototype.hasOwnProperty.call(messages[lang], key) ? t(lang, key as MessageKey) : t(lang, 'dryrun.formula.other');
}

/** A formula described with the value the workbook saved for it, or that Excel computes it on opening. */
function formulaText(lang: Lang, formula: string, cached: unknown): string {
  return cached === null || cached === undefined || cached === ''
    ? t(lang, 'dryrun.formulaUncalculated', { formula })
    : t(lang, 'dryrun.formulaCached', { formula, value: formatCellValue(cached as never) });
}

function cellTitle(lang: Lang, cell: GridCell): string {
  const show = (text: string) => (text === '' ? t(lang, 'dryrun.emptyCell') : text);
  const before =
    cell.before?.kind === 'formula' ? formulaText(lang, formatPatchValue(cell.before), cell.beforeCached) : show(formatPatchValue(cell.before));
  const after =
    cell.after?.kind === 'formula'
      ? cell.afterComputed !== undefined && cell.afterComputed !== null
        ? t(lang, 'dryrun.formulaComputed', { formula: formatPatchValue(cell.after), value: formatComputed(cell.afterComputed) })
        : formulaText(lang, formatPatchValue(cell.after), null)
      : show(formatPatchValue(cell.after));
  return t(lang, 'dryrun.cellTitle', { cell: cell.a1, before, after });
}

/**
 * The styling and structure changes of a patch (bold, fills, borders, widths, merges, table
 * styles): which sheet and range, what kind of change in words, and keiri-xlsx's summary of it
 * (`bold=true`, `width=12`) quoted as written.
 */
export function DesignChangesView({ lang, diff }: { lang: Lang; diff: readonly PatchDiffItem[] }) {
  const changes = designChanges(diff);
  if (changes.length === 0) return null;
  return (
    <div className="workbook-design" data-testid="workbook-design">
      <h5>{t(lang, 'dryrun.design')}</h5>
      <ul>
        {changes.map((change, index) => (
          <li key={index} data-testid="workbook-design-change" data-op={change.op} data-status={change.status}>
            <span className="workbook-design-where">
              {change.sheet}
              {change.range !== null ? `!${change.range}` : ` (${t(lang, 'dryrun.designSheet')})`}
            </span>{' '}
            {opLabel(lang, change.op)}{' '}
            <code translate="no">{change.summary}</code>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function SheetGridView({ lang, grid }: { lang: Lang; grid: SheetGrid }) {
  const changed = [...grid.cells.values(), ...grid.overflow].filter((c) => c.change !== 'unchanged' && c.change !== 'skipped').length;
  return (
    <div className="workbook-sheet" data-testid="workbook-sheet" data-sheet={grid.sheet} data-sheet-change={grid.sheetChange ?? ''}>
      <div className="workbook-sheet-head">
        <span className="workbook-sheet-tab">{grid.sheet}</span>
        {grid.sheetChange !== null ? (
          <span className={`workbook-sheet-badge workbook-sheet-${grid.sheetChange}`}>
            {t(lang, grid.sheetChange === 'added' ? 'dryrun.sheetAdded' : 'dryrun.sheetDeleted')}
          </span>
        ) : null}
        {changed > 0 ? <span className="workbook-sheet-count">{t(lang, 'dryrun.changeCount', { count: changed })}</span> : null}
      </div>
      {grid.rows.length > 0 ? (
        <div className="workbook-grid-scroll">
          <table className="workbook-grid" data-testid="workbook-grid">
            <thead>
              <tr>
                <th className="workbook-corner" aria-hidden="true" />
                {grid.cols.map((col) => (
                  <th key={col} scope="col" className="workbook-col">
                    {columnName(col)}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {grid.rows.map((row) => (
                <tr key={row}>
                  <th scope="row" className="workbook-row">
                    {row}
                  </th>
                  {grid.cols.map((col) => {
                    const a1 = `${columnName(col)}${row}`;
                    const cell = grid.cells.get(a1);
                    if (cell !== undefined) return <CellView key={col} lang={lang} cell={cell} />;
                    const neighbour = grid.neighbours.get(a1);
                    if (neighbour !== undefined) return <NeighbourView key={col} lang={lang} cell={neighbour} />;
                    return <td key={col} className="workbook-cell" />;
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {grid.overflow.length > 0 ? (
        <details className="workbook-overflow" data-testid="workbook-overflow">
          <summary>{t(lang, 'dryrun.overflow', { count: grid.overflow.length })}</summary>
          <ul>
            {grid.overflow.map((cell) => (
              <li key={cell.a1} data-testid="workbook-overflow-cell" data-cell={cell.a1}>
                {cellTitle(lang, cell)}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

/** A cell no op touches, as the workbook holds it: a formula shows the value it was saved with. */
function NeighbourView({ lang, cell }: { lang: Lang; cell: NeighbourCell }) {
  const value = formatCellValue(cell.value);
  const title =
    cell.formula !== null
      ? `${cell.a1}: ${formulaText(lang, cell.formula, cell.value)}`
      : t(lang, 'dryrun.neighbourTitle', { cell: cell.a1, value });
  return (
    <td
      className={`workbook-cell workbook-cell-context${cell.formula !== null ? ' workbook-cell-formula' : ''}`}
      data-testid="workbook-cell"
      data-cell={cell.a1}
      data-change="unchanged"
      data-formula={cell.formula ?? undefined}
      title={title}
      aria-label={title}
    >
      <span className="workbook-value" data-testid="workbook-value">
        {cell.formula !== null && value === '' ? cell.formula : value}
      </span>
      {cell.formula !== null ? (
        <span className="workbook-fx" aria-hidden="true">
          ƒx
        </span>
      ) : null}
    </td>
  );
}

function CellView({ lang, cell }: { lang: Lang; cell: GridCell }) {
  const after = formatPatchValue(cell.after);
  // A formula before the change shows the value it was saved with, as Excel shows it.
  const before =
    cell.before?.kind === 'formula' && cell.beforeCached !== undefined && cell.beforeCached !== null
      ? formatCellValue(cell.beforeCached)
      : formatPatchValue(cell.before);
  const isFormula = cell.after?.kind === 'formula';
  return (
    <td
      className={`workbook-cell workbook-cell-${cell.change}${isFormula ? ' workbook-cell-formula' : ''}`}
      data-testid="workbook-cell"
      data-cell={cell.a1}
      data-change={cell.change}
      title={cellTitle(lang, cell)}
      aria-label={cellTitle(lang, cell)}
    >
      {cell.change === 'changed' || cell.change === 'removed' ? (
        <span className="workbook-before" data-testid="workbook-before">
          {before}
        </span>
      ) : null}
      <span className="workbook-after" data-testid="workbook-after">
        {cell.change === 'skipped' ? before : after}
      </span>
      {isFormula && cell.change !== 'skipped' && cell.afterComputed !== undefined && cell.afterComputed !== null ? (
        // The number the report will show, beside the formula that makes it.
        <span className="workbook-computed" data-testid="workbook-computed" title={t(lang, 'dryrun.computedTitle')}>
          = {formatComputed(cell.afterComputed)}
        </span>
      ) : null}
    </td>
  );
}
