// How much a unified diff changes: the lines it adds and removes (headers not counted). Used
// to say what an approved chat change did without showing the diff text again.

export interface LineCounts {
  added: number;
  removed: number;
}

export function diffLineCounts(diff: string): LineCounts {
  let added = 0;
  let removed = 0;
  for (const line of diff.split('\n')) {
    if (line.startsWith('+++') || line.startsWith('---')) continue;
    if (line.startsWith('+')) added += 1;
    else if (line.startsWith('-')) removed += 1;
  }
  return { added, removed };
}
