// What the Register button writes: `designs/<name>_<yyyymmddHHMM>.yaml`, where the name is
// the plan's top-level `id` (the server adds `_2`, `_3`, … rather than overwrite). The person
// confirms the name before saving; the stamp shown with it is sent back with the request, so
// the file written is the one that was shown even when the minute rolls over in between.

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

/** The id the planner gives a plan nobody has named yet (keiri-api's default). */
export const UNNAMED_PLAN_ID = 'generated_plan';

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** The `yyyymmddHHMM` of local time `now`, as the server names files. */
export function stampOf(now: Date): string {
  return `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}${pad(now.getHours())}${pad(now.getMinutes())}`;
}

/**
 * The file-name-safe form of a plan id, as keiri-plan's `file_stem` makes it: letters of any
 * script, digits, `-`, `_` and `.` are kept, everything else becomes `_`; leading dots go; at
 * most 100 characters; `plan` when nothing is left.
 */
export function fileStem(planId: string): string {
  const kept = [...planId.trim()].map((c) => (/^[\p{Alphabetic}\p{N}._-]$/u.test(c) ? c : '_')).join('');
  const stem = [...kept.replace(/^\.+/u, '')].slice(0, 100).join('');
  return stem === '' ? 'plan' : stem;
}

/** `designs/<file stem of planId>_<stamp>.yaml`. */
export function targetFileName(planId: string, stamp: string): string {
  return `designs/${fileStem(planId)}_${stamp}.yaml`;
}

/** The longest name proposed from an instruction, in characters. */
const MAX_PROPOSED_NAME = 30;

/**
 * A plan name made from an instruction: its first sentence, its words (runs between
 * punctuation and spaces, which a file name would turn into `_`) joined with `_` while they
 * fit in 30 characters — a phrase is not cut in the middle unless the first one is longer.
 * Empty when nothing usable is left, so the caller can fall back to the plan's own id.
 */
export function nameFromInstruction(instruction: string): string {
  const first = instruction.trim().split(/[。.!?！？\n]/u)[0] ?? '';
  const words = first
    .normalize('NFKC')
    .split(/[^\p{Alphabetic}\p{N}_-]+/u)
    .filter((word) => word !== '');
  let name = '';
  for (const word of words) {
    const next = name === '' ? word : `${name}_${word}`;
    if ([...next].length > MAX_PROPOSED_NAME) break;
    name = next;
  }
  return name !== '' || words[0] === undefined ? name : [...words[0]].slice(0, MAX_PROPOSED_NAME).join('');
}

/** The name the register step proposes: the plan's own id unless it is the planner's default. */
export function proposedName(yaml: string, instruction: string): string {
  const id = planIdOf(yaml);
  if (id !== null && id !== UNNAMED_PLAN_ID) return id;
  const fromInstruction = nameFromInstruction(instruction);
  return fromInstruction !== '' ? fromInstruction : (id ?? '');
}

// Words YAML reads as something other than a string; a plan id must stay a string.
const YAML_WORDS = /^(true|false|yes|no|on|off|null|~|y|n)$/iu;

function idScalar(id: string): string {
  const plain = /^[\p{Alphabetic}_][\p{Alphabetic}\p{N}_.-]*$/u.test(id) && !YAML_WORDS.test(id);
  return plain ? id : JSON.stringify(id);
}

/**
 * `yaml` with its top-level `id:` set to `id` (added after `apiVersion:`, or at the top, when
 * the plan has none). A text edit, not a YAML round-trip: comments and layout stay.
 */
export function withPlanId(yaml: string, id: string): string {
  const lines = yaml.split('\n');
  const line = `id: ${idScalar(id)}`;
  const at = lines.findIndex((l) => /^id:(\s|$)/u.test(l));
  if (at >= 0) {
    const comment = /\s(#.*)$/u.exec(lines[at] ?? '');
    lines[at] = comment !== null && !/["']/u.test(lines[at] ?? '') ? `${line} ${comment[1]}` : line;
    return lines.join('\n');
  }
  const api = lines.findIndex((l) => /^apiVersion:/u.test(l));
  lines.splice(api >= 0 ? api + 1 : 0, 0, line);
  return lines.join('\n');
}
