// What the Register button will write: `designs/<plan_id>_<yyyymmddHHMM>.yaml` (the server
// adds `_2`, `_3`, … rather than overwrite). The plan id is read from the YAML's top level.

/** The top-level `id:` of a plan's YAML, or null when it has none (or is not a plain scalar). */
export function planIdOf(yaml: string): string | null {
  for (const line of yaml.split(/\r?\n/)) {
    const match = /^id:\s*(?:"([^"]*)"|'([^']*)'|([^\s#"'][^#]*?))\s*(?:#.*)?$/.exec(line);
    if (match) {
      const id = (match[1] ?? match[2] ?? match[3] ?? '').trim();
      return id === '' ? null : id;
    }
  }
  return null;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** `designs/<plan_id>_<yyyymmddHHMM>.yaml` at local time `now`. */
export function targetFileName(planId: string, now: Date): string {
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}${pad(now.getHours())}${pad(now.getMinutes())}`;
  return `designs/${planId}_${stamp}.yaml`;
}
