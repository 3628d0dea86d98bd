// The chat's before/after view of a unified diff: which lines pair up, their numbers on each
// side, and what is not a diff.

import { describe, expect, it } from 'vitest';
import { sideBySide } from './sideBySide';

const rows = (diff: string) =>
  sideBySide(diff)?.flatMap((hunk) => hunk.rows.map((row) => [row.kind, row.before?.n ?? null, row.before?.text ?? null, row.after?.n ?? null, row.after?.text ?? null]));

describe('sideBySide', () => {
  it('pairs a changed line with its new text and numbers both sides', () => {
    const diff = '--- a/plan.yaml\n+++ b/plan.yaml\n@@ -1,2 +1,3 @@\n id: p\n-graph: []\n+graph:\n+  - id: approve\n';
    expect(rows(diff)).toEqual([
      ['same', 1, 'id: p', 1, 'id: p'],
      ['changed', 2, 'graph: []', 2, 'graph:'],
      ['added', null, null, 3, '  - id: approve'],
    ]);
  });

  it('keeps hunks apart with their start lines, and lines only removed on the left', () => {
    const diff = [
      '--- a/p.yaml',
      '+++ b/p.yaml',
      '@@ -2,3 +2,2 @@',
      ' a',
      '-b',
      ' c',
      '@@ -20,2 +19,3 @@',
      ' x',
      '+y',
      ' z',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    const hunks = sideBySide(diff);
    expect(hunks?.map((h) => [h.beforeStart, h.afterStart])).toEqual([
      [2, 2],
      [20, 19],
    ]);
    expect(rows(diff)).toEqual([
      ['same', 2, 'a', 2, 'a'],
      ['removed', 3, 'b', null, null],
      ['same', 4, 'c', 3, 'c'],
      ['same', 20, 'x', 19, 'x'],
      ['added', null, null, 20, 'y'],
      ['same', 21, 'z', 21, 'z'],
    ]);
  });

  it('starts a new pair after additions when more lines are removed', () => {
    const diff = '@@ -1,3 +1,3 @@\n-a\n+A\n-b\n+B\n c\n';
    expect(rows(diff)).toEqual([
      ['changed', 1, 'a', 1, 'A'],
      ['changed', 2, 'b', 2, 'B'],
      ['same', 3, 'c', 3, 'c'],
    ]);
  });

  it('is null for text that is not a unified diff', () => {
    expect(sideBySide('just some words')).toBeNull();
    expect(sideBySide('@@ -1,2 +1,2 @@\n-a\n')).toBeNull();
  });
});
