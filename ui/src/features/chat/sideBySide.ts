// A unified diff as an accountant reads a change: the lines before and the lines after, side
// by side, with the line numbers of each side. Parsing is jsdiff's (`parsePatch`, the library
// that also writes such diffs); this module only pairs the lines of each hunk: a run of removed
// lines followed by added lines becomes rows of "this line became that one", the rest are lines
// only removed, only added, or unchanged.

import { parsePatch } from 'diff';

export interface SideLine {
  /** 1-based line number in its version of the file. */
  n: number;
  text: string;
}

export type SideRowKind = 'same' | 'changed' | 'removed' | 'added';

export interface SideRow {
  kind: SideRowKind;
  before: SideLine | null;
  after: SideLine | null;
}

export interface SideHunk {
  /** First line of the hunk in the version before and after the change. */
  beforeStart: number;
  afterStart: number;
  rows: SideRow[];
}

/** The hunks of `diff`, paired side by side; null when the text is not a unified diff. */
export function sideBySide(diff: string): SideHunk[] | null {
  let patches;
  try {
    patches = parsePatch(diff);
  } catch {
    return null;
  }
  const hunks: SideHunk[] = [];
  for (const patch of patches) {
    for (const hunk of patch.hunks) {
      const rows: SideRow[] = [];
      let before = hunk.oldStart;
      let after = hunk.newStart;
      let removed: SideLine[] = [];
      let added: SideLine[] = [];
      const flush = () => {
        const pairs = Math.max(removed.length, added.length);
        for (let i = 0; i < pairs; i += 1) {
          const left = removed[i] ?? null;
          const right = added[i] ?? null;
          rows.push({ kind: left !== null && right !== null ? 'changed' : left !== null ? 'removed' : 'added', before: left, after: right });
        }
        removed = [];
        added = [];
      };
      for (const line of hunk.lines) {
        const mark = line.charAt(0);
        const text = line.slice(1);
        if (mark === '-') {
          // A removal after additions starts a new change block.
          if (added.length > 0) flush();
          removed.push({ n: before, text });
          before += 1;
        } else if (mark === '+') {
          added.push({ n: after, text });
          after += 1;
        } else if (mark === ' ') {
          flush();
          rows.push({ kind: 'same', before: { n: before, text }, after: { n: after, text } });
          before += 1;
          after += 1;
        }
        // "\ No newline at end of file" marks the line above; it is not a line of the file.
      }
      flush();
      hunks.push({ beforeStart: hunk.oldStart, afterStart: hunk.newStart, rows });
    }
  }
  return hunks.length > 0 ? hunks : null;
}
