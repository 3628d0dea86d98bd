// Requirements (the planner's and the validator's typed questions) as form controls: which
// control a requirement gets, how a typed answer becomes the JSON value the API wants, and
// the checks made before it is sent (required, number, regex, accepted extensions). The API
// checks every answer again; these checks only spare a round trip and explain the problem
// next to the field.

import type { Lang, Requirement } from '../../api/types';
import type { MessageKey } from '../../shared/i18n';

export type ControlKind = 'text' | 'textarea' | 'select' | 'columns' | 'boolean' | 'number' | 'file' | 'table';

/**
 * The control for a requirement: a choice list when it has options, whatever its type, and
 * check boxes when the answer is a list picked from them (the columns of the rows a node
 * reads, for `by: [科目, 部門]`).
 */
export function controlFor(requirement: Requirement): ControlKind {
  const options = requirement.options ?? [];
  switch (requirement.type) {
    case 'select':
    case 'enum':
      return options.length > 0 ? 'select' : 'text';
    case 'boolean':
      return 'boolean';
    case 'number':
      return 'number';
    case 'file':
      return 'file';
    case 'table':
      return 'table';
    case 'text':
      if (options.length > 0) return requirement.value_type === 'array' ? 'columns' : 'select';
      // Objects and arrays are typed as JSON, which needs room.
      return requirement.value_type === 'object' || requirement.value_type === 'array' ? 'textarea' : 'text';
  }
  return 'text';
}

/** The option's value as the text a `<select>` carries. */
export function optionText(option: unknown): string {
  return typeof option === 'string' ? option : JSON.stringify(option);
}

/** The requirement's label, description and hint in `lang` (Japanese when no English). */
export function requirementText(requirement: Requirement, lang: Lang): { label: string; description: string; hint: string } {
  const en = lang === 'en';
  return {
    label: (en ? requirement.label_en : undefined) || requirement.label || requirement.id,
    description: (en ? requirement.description_en : undefined) || requirement.description || '',
    hint: (en ? requirement.hint_en : undefined) || requirement.hint || '',
  };
}

/** The text a control starts with: the spec's default, if any. */
export function initialAnswerText(requirement: Requirement): string {
  const value = requirement.default;
  if (value === undefined || value === null) {
    return controlFor(requirement) === 'boolean' ? 'false' : '';
  }
  if (typeof value === 'string') return value;
  if (controlFor(requirement) === 'select') return optionText(value);
  return typeof value === 'object' ? JSON.stringify(value, null, 2) : String(value);
}

/** The columns picked so far in a `columns` control's text (a JSON list), in picking order. */
export function pickedColumns(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown;
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

/** The text of a `columns` control after `name` is ticked (added last) or unticked. */
export function togglePick(text: string, name: string): string {
  const picked = pickedColumns(text);
  const next = picked.includes(name) ? picked.filter((item) => item !== name) : [...picked, name];
  return next.length === 0 ? '' : JSON.stringify(next);
}

export type AnswerCheck = { ok: true; value: unknown } | { ok: false; error: MessageKey; params?: Record<string, string> };

function extensionOf(path: string): string {
  const name = path.split(/[\\/]/).pop() ?? '';
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot).toLowerCase() : '';
}

/**
 * The accepted extensions of a `file` requirement, lower case with their dot. A CSV question
 * takes any delimited text the runtime reads: `.tsv`, and Excel's 「Unicode テキスト」 (`.txt`),
 * as keiri-plan's `accepts_path` does.
 */
export function acceptedExtensions(requirement: Requirement): string[] {
  const listed = (requirement.accept ?? '')
    .split(',')
    .map((ext) => ext.trim().toLowerCase())
    .filter((ext) => ext !== '')
    .map((ext) => (ext.startsWith('.') ? ext : `.${ext}`));
  const delimited = listed.includes('.csv') ? ['.tsv', '.txt'].filter((ext) => !listed.includes(ext)) : [];
  return [...listed, ...delimited];
}

function compileRegex(source: string): RegExp | null {
  try {
    // `u`: the API's regex crate matches Unicode scalar values, so 全角 characters count as one.
    return new RegExp(source, 'u');
  } catch {
    // A pattern JavaScript cannot read is left to the server, which checks every answer.
    return null;
  }
}

/**
 * Checks the text typed for `requirement` and turns it into the JSON value the API takes:
 * numbers for `number`, booleans for `boolean`, the option itself for a choice, parsed JSON
 * for a table or an object/array text, the trimmed text otherwise.
 */
export function parseAnswer(requirement: Requirement, raw: string): AnswerCheck {
  const control = controlFor(requirement);
  const text = raw.trim();
  if (text === '') {
    return requirement.required ? { ok: false, error: 'question.required' } : { ok: true, value: null };
  }
  switch (control) {
    case 'boolean':
      return { ok: true, value: text === 'true' };
    case 'number': {
      const value = Number(text.replace(/[,，]/g, ''));
      if (!Number.isFinite(value)) return { ok: false, error: 'question.notNumber' };
      if (requirement.value_type === 'integer' && !Number.isInteger(value)) {
        return { ok: false, error: 'question.notInteger' };
      }
      return { ok: true, value };
    }
    case 'select': {
      const option = (requirement.options ?? []).find((candidate) => optionText(candidate) === text);
      return option === undefined ? { ok: false, error: 'question.notAnOption' } : { ok: true, value: option };
    }
    case 'columns': {
      const picked = pickedColumns(text);
      const options = (requirement.options ?? []).map(optionText);
      if (picked.length === 0 || picked.some((name) => !options.includes(name))) {
        return { ok: false, error: 'question.notAnOption' };
      }
      return { ok: true, value: picked };
    }
    case 'table':
    case 'textarea': {
      let value: unknown;
      try {
        value = JSON.parse(text) as unknown;
      } catch {
        return { ok: false, error: control === 'table' ? 'question.notTable' : 'question.notJson' };
      }
      if (control === 'table' && !(Array.isArray(value) && value.every((row) => typeof row === 'object' && row !== null))) {
        return { ok: false, error: 'question.notTable' };
      }
      return { ok: true, value };
    }
    case 'file': {
      const accepted = acceptedExtensions(requirement);
      if (accepted.length > 0 && !accepted.includes(extensionOf(text))) {
        return { ok: false, error: 'question.wrongExtension', params: { accept: accepted.join(', ') } };
      }
      return checkRegex(requirement, text);
    }
    case 'text':
      return checkRegex(requirement, text);
  }
}

function checkRegex(requirement: Requirement, text: string): AnswerCheck {
  const source = requirement.validation?.regex;
  if (source) {
    const regex = compileRegex(source);
    if (regex !== null && !regex.test(text)) {
      return { ok: false, error: 'question.pattern', params: { pattern: source } };
    }
  }
  return { ok: true, value: text };
}

/** The `vars:` lines a set of answers adds to the plan, for the preview. */
export function varsPreview(requirements: readonly Requirement[], answers: Readonly<Record<string, unknown>>): string {
  const lines: string[] = [];
  for (const [id, value] of Object.entries(answers)) {
    const requirement = requirements.find((candidate) => candidate.id === id);
    const name = requirement?.target.var ?? id;
    lines.push(`  ${name}: ${JSON.stringify(value)}`);
  }
  return lines.length === 0 ? '' : `vars:\n${lines.join('\n')}`;
}
