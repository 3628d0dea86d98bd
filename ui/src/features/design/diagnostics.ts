// Turns the validator's findings into CodeMirror diagnostics. Kept free of React and of the
// editor view so the mapping can be tested on a plain `Text`.

import type { Diagnostic } from '@codemirror/lint';
import type { Text } from '@codemirror/state';
import type { ShownFinding } from '../../api/types';
import { t } from '../../shared/i18n';
import type { Lang } from '../../api/types';

/** Where a finding sits in the document, as CodeMirror offsets. */
export interface FindingRange {
  /** The 1-based line the finding is shown on (line 1 when the validator gave none). */
  line: number;
  from: number;
  to: number;
}

function positiveInteger(value: number | null | undefined): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

// The validator counts columns in characters (Unicode scalar values); CodeMirror counts
// UTF-16 code units. They differ after characters outside the BMP (emoji, rare kanji), so
// walk the line by code points instead of adding the column to the offset.
function utf16Offset(text: string, column: number): number {
  let units = 0;
  let chars = 0;
  for (const ch of text) {
    if (chars === column - 1) return units;
    units += ch.length;
    chars += 1;
  }
  return units;
}

/**
 * The range a finding marks: from its column (or the line's first non-blank character) to
 * the end of the line's text. Out-of-range lines clamp to the document, so a stale finding
 * for a text that has since shrunk never throws.
 */
export function findingRange(doc: Text, finding: Pick<ShownFinding, 'line' | 'column'>): FindingRange {
  const lineNumber = positiveInteger(finding.line) ? Math.min(finding.line, doc.lines) : 1;
  const line = doc.line(lineNumber);
  const trimmedEnd = line.text.replace(/\s+$/u, '').length;
  let start: number;
  if (positiveInteger(finding.line) && positiveInteger(finding.column)) {
    start = Math.min(utf16Offset(line.text, finding.column), trimmedEnd);
  } else {
    start = line.text.length - line.text.replace(/^\s+/u, '').length;
    start = Math.min(start, trimmedEnd);
  }
  return { line: lineNumber, from: line.from + start, to: line.from + Math.max(start, trimmedEnd) };
}

/** The editor diagnostics for `findings` on `doc`, in document order. */
export function findingsToDiagnostics(doc: Text, findings: readonly ShownFinding[], lang: Lang): Diagnostic[] {
  return findings
    .map((finding): Diagnostic => {
      const { from, to } = findingRange(doc, finding);
      const hint = finding.hint ? `\n${t(lang, 'findings.hint')}: ${finding.hint}` : '';
      return {
        from,
        to,
        severity: finding.severity === 'warning' ? 'warning' : 'error',
        source: finding.code,
        message: `${finding.message}${hint}`,
      };
    })
    .sort((a, b) => a.from - b.from || a.to - b.to);
}
