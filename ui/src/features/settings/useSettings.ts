// The settings dialog's state: the settings as loaded when the dialog opens, the form as edited,
// what happens to the API key on save, and the outcome of a save. `SettingsDialog` draws it.
// The typed key lives here only until the server holds it: a save drops it, and the key never
// comes back from the API.

import { useEffect, useState } from 'react';
import { ApiError, llmConnectionTest, settingsGet, settingsSave } from '../../api';
import type {
  EmbeddingChoice,
  KeyStorage,
  Lang,
  LlmConnectionTestResponse,
  PolicyLimits,
  ProviderChoice,
  SettingsGetResponse,
  SettingsSaveRequest,
} from '../../api/types';
import { errorText, t, type MessageKey } from '../../shared/i18n';

export interface SettingsOptions {
  lang: Lang;
  /** The dialog is shown: opening it loads the settings again. */
  open: boolean;
  /** Called after a save that changed the language. */
  onLangChange(lang: Lang): void;
}

/** Fields the API names in `details.field` when it refuses a value. */
const FIELDS = [
  'base_url',
  'azure_endpoint',
  'azure_deployment',
  'api_key',
  'workspace',
  'allow_hosts',
  'run_limits.foreach_items',
  'run_limits.while_iterations',
  'run_limits.join_rows',
  'run_limits.memory_mb',
] as const;
type Field = (typeof FIELDS)[number];

/**
 * The bounds of a plan run the user sets the ceiling of (`run_limits`): what a plan's
 * `policy.limits` may ask for at most. Blank: the built-in ceiling, shown as the placeholder.
 */
export const LIMITS = [
  { key: 'foreach_items', builtIn: 1_000_000 },
  { key: 'while_iterations', builtIn: 1_000_000 },
  { key: 'join_rows', builtIn: 200_000_000 },
  { key: 'memory_mb', builtIn: 16_384 },
] as const;
type LimitKey = (typeof LIMITS)[number]['key'];

export interface Form {
  provider: ProviderChoice;
  model: string;
  base_url: string;
  azure_endpoint: string;
  azure_deployment: string;
  azure_api_version: string;
  embedding: EmbeddingChoice | 'auto';
  lang: Lang;
  workspace: string;
  /** One host a line. */
  allow_hosts: string;
  /** Each bound as typed; blank is the built-in ceiling. */
  run_limits: Record<LimitKey, string>;
}

/** What happens to the stored key on save. */
export type KeyEdit = { kind: 'keep' } | { kind: 'replace'; key: string } | { kind: 'delete' };

type Status =
  | { kind: 'loading' }
  | { kind: 'idle' }
  | { kind: 'saving' }
  | { kind: 'saved' }
  | { kind: 'failed'; text: string; field: Field | null }
  /** The keychain refused the key; the dialog offers to keep it for this session instead. */
  | { kind: 'keychainRefused' };

/** The connection test's state. */
type Test = { kind: 'idle' } | { kind: 'testing' } | { kind: 'done'; result: LlmConnectionTestResponse } | { kind: 'failed'; text: string };

function formOf(settings: SettingsGetResponse): Form {
  return {
    provider: settings.provider,
    model: settings.model ?? '',
    base_url: settings.base_url ?? '',
    azure_endpoint: settings.azure_endpoint ?? '',
    azure_deployment: settings.azure_deployment ?? '',
    azure_api_version: settings.azure_api_version ?? '',
    embedding: settings.embedding ?? 'auto',
    lang: settings.lang,
    workspace: settings.workspace ?? '',
    allow_hosts: (settings.allow_hosts ?? []).join('\n'),
    run_limits: Object.fromEntries(
      LIMITS.map(({ key }) => {
        const value = settings.run_limits?.[key];
        return [key, typeof value === 'number' ? String(value) : ''];
      }),
    ) as Record<LimitKey, string>,
  };
}

/** A bound as typed: `null` when blank (the built-in ceiling), else its whole number, or NaN. */
function limitValue(typed: string): number | null {
  const text = typed.replace(/[,，\s]/g, '');
  if (text === '') return null;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : Number.NaN;
}

/** The first bound typed as something other than a whole number above 0, if any. */
export function limitProblem(limits: Record<LimitKey, string>): LimitKey | null {
  return LIMITS.find(({ key }) => Number.isNaN(limitValue(limits[key])))?.key ?? null;
}

/** The ceiling to save: each bound typed (separators allowed), blank ones left to the built-in. */
function limitsRequest(limits: Record<LimitKey, string>): PolicyLimits {
  const out: PolicyLimits = {};
  for (const { key } of LIMITS) {
    const value = limitValue(limits[key]);
    if (value !== null && !Number.isNaN(value)) out[key] = value;
  }
  return out;
}

/** The request for `form`; blank texts are left out (the API treats them as unset). */
export function saveRequest(form: Form, key: KeyEdit, storage: KeyStorage = 'keychain'): SettingsSaveRequest {
  const text = (value: string) => (value.trim() === '' ? undefined : value.trim());
  const request: SettingsSaveRequest = {
    provider: form.provider,
    model: text(form.model),
    base_url: form.provider === 'compatible' || form.provider === 'openai' ? text(form.base_url) : undefined,
    azure_endpoint: form.provider === 'azure' ? text(form.azure_endpoint) : undefined,
    azure_deployment: form.provider === 'azure' ? text(form.azure_deployment) : undefined,
    azure_api_version: form.provider === 'azure' ? text(form.azure_api_version) : undefined,
    embedding: form.embedding === 'auto' ? undefined : form.embedding,
    lang: form.lang,
    workspace: text(form.workspace),
    allow_hosts: form.allow_hosts
      .split(/[\s,]+/)
      .map((h) => h.trim())
      .filter((h) => h !== ''),
    run_limits: limitsRequest(form.run_limits),
  };
  if (key.kind === 'replace' && key.key.trim() !== '') {
    request.api_key = key.key;
    if (storage === 'session') request.key_storage = 'session';
  }
  if (key.kind === 'delete') request.api_key = '';
  return request;
}

function failure(lang: Lang, err: unknown, prefix: 'settings.loadFailed' | 'settings.saveFailed'): Status {
  const code = err instanceof ApiError ? err.code : 'INTERNAL';
  const details = err instanceof ApiError ? err.details : null;
  const named = typeof details === 'object' && details !== null ? (details as { field?: unknown }).field : null;
  const field = FIELDS.find((f) => f === named) ?? null;
  const text = field ? t(lang, `settings.field.${field}` as MessageKey) : errorText(lang, code);
  return { kind: 'failed', text: t(lang, prefix, { message: text }), field };
}

export function useSettings({ lang, open, onLangChange }: SettingsOptions) {
  const [form, setForm] = useState<Form | null>(null);
  const [loaded, setLoaded] = useState<SettingsGetResponse | null>(null);
  const [keySet, setKeySet] = useState(false);
  const [keyStorage, setKeyStorage] = useState<KeyStorage | null>(null);
  const [keychain, setKeychain] = useState(true);
  const [sessionOnly, setSessionOnly] = useState(false);
  const [key, setKey] = useState<KeyEdit>({ kind: 'keep' });
  const [status, setStatus] = useState<Status>({ kind: 'loading' });

  useEffect(() => {
    if (!open) return undefined;
    let live = true;
    setStatus({ kind: 'loading' });
    setKey({ kind: 'keep' });
    settingsGet()
      .then((settings) => {
        if (!live) return;
        setForm(formOf(settings));
        setLoaded(settings);
        setKeySet(settings.api_key_set);
        setKeyStorage(settings.api_key_storage ?? null);
        setKeychain(settings.keychain_available);
        // Without a keychain, a key can only be kept for the session: offer that from the start.
        setSessionOnly(!settings.keychain_available);
        setStatus({ kind: 'idle' });
      })
      .catch((err: unknown) => {
        if (live) setStatus(failure(lang, err, 'settings.loadFailed'));
      });
    return () => {
      live = false;
    };
    // Reload only when the dialog opens; the language only changes labels.
  }, [open]);

  const update = (patch: Partial<Form>) => {
    setForm((f) => (f ? { ...f, ...patch } : f));
    if (status.kind === 'saved' || status.kind === 'failed') setStatus({ kind: 'idle' });
  };

  const save = async (storage: KeyStorage = sessionOnly ? 'session' : 'keychain') => {
    if (!form) return;
    // A bound that is not a whole number is said at its field before anything is sent.
    const bad = limitProblem(form.run_limits);
    if (bad !== null) {
      const field: Field = `run_limits.${bad}`;
      setStatus({ kind: 'failed', text: t(lang, 'settings.saveFailed', { message: t(lang, `settings.field.${field}` as MessageKey) }), field });
      return;
    }
    setStatus({ kind: 'saving' });
    try {
      const saved = await settingsSave(saveRequest(form, key, storage));
      setForm(formOf(saved));
      setLoaded(saved);
      setKeySet(saved.api_key_set);
      setKeyStorage(saved.api_key_storage ?? null);
      setKeychain(saved.keychain_available);
      // The typed key is dropped from the page as soon as the server holds it.
      setKey({ kind: 'keep' });
      setStatus({ kind: 'saved' });
      if (saved.lang !== lang) onLangChange(saved.lang);
    } catch (err) {
      const details = err instanceof ApiError ? err.details : null;
      const sessionAvailable =
        typeof details === 'object' && details !== null && (details as { session_available?: unknown }).session_available === true;
      if (err instanceof ApiError && err.code === 'KEYCHAIN_UNAVAILABLE' && sessionAvailable) {
        setKeychain(false);
        setSessionOnly(true);
        setStatus({ kind: 'keychainRefused' });
        return;
      }
      setStatus(failure(lang, err, 'settings.saveFailed'));
    }
  };

  const field = (name: Field) => (status.kind === 'failed' && status.field === name ? true : undefined);
  const busy = status.kind === 'saving' || status.kind === 'loading';
  const needsKey = form !== null && form.provider !== 'none';
  const effective = loaded?.effective ?? null;
  // While the environment configures a model, "none" means "use it", never "not set".
  const environmentProvider =
    effective?.provider && (effective.provider.source === 'environment' || effective.provider.source === 'env_file')
      ? effective.provider.value
      : null;

  /** The key typed into the key field: what a save will store; a shown outcome no longer applies. */
  const typeKey = (text: string) => {
    setKey({ kind: 'replace', key: text });
    if (status.kind === 'saved' || status.kind === 'failed' || status.kind === 'keychainRefused') {
      setStatus({ kind: 'idle' });
    }
  };

  const state = { form, effective, keySet, keyStorage, keychain, sessionOnly, key, status, busy, needsKey, environmentProvider };
  return { ...state, field, update, save, setKey, typeKey, setSessionOnly };
}

/** The connection test (`llm_connection_test`): one small real request to the model in effect. */
export function useConnectionTest(lang: Lang) {
  const [test, setTest] = useState<Test>({ kind: 'idle' });
  const run = async () => {
    setTest({ kind: 'testing' });
    try {
      setTest({ kind: 'done', result: await llmConnectionTest({ lang }) });
    } catch (err) {
      setTest({ kind: 'failed', text: errorText(lang, err instanceof ApiError ? err.code : 'INTERNAL') });
    }
  };
  return { test, run };
}
