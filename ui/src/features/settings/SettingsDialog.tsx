// The settings dialog: the AI model's provider, model and API key, the embedding source, the
// language and the workspace folder. The API key goes to the OS keychain through
// `settings_save` — or, where there is no keychain, into the server's memory for this session
// only; once saved the dialog only ever shows "保存済み" or "このセッションのみ" — the key
// never comes back from the API, so it cannot be shown even by mistake.
//
// The dialog also says what is actually in effect (the environment may configure a model the
// form does not show) and where each part comes from, tests the connection with one small
// real request, and states plainly what is sent out of the computer. Its state is
// `useSettings`'s; this component draws it.

import { useEffect, useId, useRef } from 'react';
import type { EffectiveSettings, EmbeddingChoice, Lang, ProviderChoice, Source } from '../../api/types';
import { errorText, t, type MessageKey } from '../../shared/i18n';
import { LIMITS, useConnectionTest, useSettings, type Form } from './useSettings';

interface Props {
  lang: Lang;
  open: boolean;
  onClose(): void;
  /** Called after a save that changed the language. */
  onLangChange(lang: Lang): void;
}

const PROVIDERS: readonly ProviderChoice[] = ['none', 'openai', 'azure', 'compatible'];
const EMBEDDINGS: readonly (EmbeddingChoice | 'auto')[] = ['auto', 'local', 'openai', 'azure', 'bm25-only'];

/** Whether `url` points at this computer (a local llama.cpp or Ollama server). */
export function isLocalUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || host.startsWith('127.');
  } catch {
    return false;
  }
}

const sourceText = (lang: Lang, source: Source) => t(lang, `settings.source.${source}` as MessageKey);
const kindText = (lang: Lang, kind: string) => t(lang, `settings.providerKind.${kind}` as MessageKey);

/** What is in effect and where each part came from; the connection test beside it. */
function Effective({ lang, effective }: { lang: Lang; effective: EffectiveSettings }) {
  const { test, run } = useConnectionTest(lang);
  const row = (label: MessageKey, value: string, source: Source | null, testId: string) => (
    <div className="settings-effective-row" style={{ display: 'flex', gap: 8, flexWrap: 'wrap' }}>
      <dt style={{ minWidth: '6em', color: 'var(--text-muted)' }}>{t(lang, label)}</dt>
      <dd style={{ margin: 0 }} data-testid={testId} data-source={source ?? undefined}>
        {value}
        {source ? <small className="settings-hint">（{sourceText(lang, source)}）</small> : null}
      </dd>
    </div>
  );
  return (
    <section className="settings-field" data-testid="settings-effective" aria-labelledby="settings-effective-title">
      <span id="settings-effective-title">{t(lang, 'settings.effective.title')}</span>
      {effective.configured && effective.provider ? (
        <dl style={{ margin: 0, display: 'flex', flexDirection: 'column', gap: 2 }}>
          {row('settings.effective.provider', kindText(lang, effective.provider.value), effective.provider.source, 'settings-effective-provider')}
          {effective.deployment
            ? row('settings.effective.deployment', effective.deployment.value, effective.deployment.source, 'settings-effective-deployment')
            : row('settings.effective.model', effective.model.value, effective.model.source, 'settings-effective-model')}
          {effective.base_url ? row('settings.effective.url', effective.base_url.value, effective.base_url.source, 'settings-effective-url') : null}
          {row(
            'settings.effective.apiKey',
            effective.api_key ? '●●●●' : t(lang, 'settings.effective.noKey'),
            effective.api_key,
            'settings-effective-key',
          )}
        </dl>
      ) : (
        <p className="settings-warning" data-testid="settings-effective-provider" data-source="none">
          {t(lang, 'settings.effective.notConfigured')}
          {effective.problem && effective.problem.code !== 'LLM_NOT_CONFIGURED' ? `（${errorText(lang, effective.problem.code)}）` : ''}
        </p>
      )}
      {effective.settings_overridden ? (
        <p className="settings-warning" data-testid="settings-effective-overridden">
          {t(lang, 'settings.effective.overridden')}
        </p>
      ) : null}
      <div style={{ display: 'flex', alignItems: 'center', gap: 8, flexWrap: 'wrap' }}>
        <button type="button" className="button" data-testid="settings-test" disabled={test.kind === 'testing'} onClick={() => void run()}>
          {test.kind === 'testing' ? t(lang, 'settings.testing') : t(lang, 'settings.test')}
        </button>
        <small className="settings-hint">{t(lang, 'settings.testHint')}</small>
      </div>
      {test.kind === 'done' || test.kind === 'failed' ? (
        <p
          className="settings-status"
          role="status"
          data-testid="settings-test-result"
          data-ok={test.kind === 'done' && test.result.ok ? 'true' : 'false'}
          data-code={test.kind === 'done' ? (test.result.code ?? undefined) : undefined}
          data-tone={test.kind === 'done' && test.result.ok ? 'ok' : 'error'}
        >
          {test.kind === 'done' ? test.result.message : test.text}
        </p>
      ) : null}
      <details className="settings-hint" data-testid="settings-admin">
        <summary>{t(lang, 'settings.effective.admin')}</summary>
        <p style={{ margin: '4px 0' }}>
          {effective.variables.length > 0
            ? t(lang, 'settings.effective.variables', { names: effective.variables.join(', ') })
            : t(lang, 'settings.effective.noVariables')}
        </p>
        {test.kind === 'done' && test.result.detail ? <p style={{ margin: '4px 0' }}>{test.result.detail}</p> : null}
        {effective.problem ? <p style={{ margin: '4px 0' }}>{effective.problem.message}</p> : null}
      </details>
    </section>
  );
}

/** A plain statement of what leaves the computer, for the settings as they stand in the form. */
function Privacy({ lang, form, effective }: { lang: Lang; form: Form; effective: EffectiveSettings }) {
  const fromEnvironment = effective.embedding.source === 'environment' || effective.embedding.source === 'env_file';
  const cloud = fromEnvironment
    ? effective.cloud_embeddings
    : form.embedding === 'openai' || form.embedding === 'azure';
  const cloudName = fromEnvironment ? effective.embedding.value : form.embedding;
  const local = effective.configured && effective.provider?.value === 'openai_compatible' && isLocalUrl(effective.base_url?.value);
  return (
    <section className="settings-field" data-testid="settings-privacy" aria-labelledby="settings-privacy-title">
      <span id="settings-privacy-title">{t(lang, 'settings.privacy.title')}</span>
      <ul className="settings-hint" style={{ margin: 0, paddingLeft: '1.2em', fontSize: '0.85rem', color: 'var(--text)' }}>
        <li>
          {t(lang, 'settings.privacy.llm')}
          {local ? t(lang, 'settings.privacy.llmLocal') : ''}
        </li>
        <li>{t(lang, 'settings.privacy.runsAi')}</li>
        <li data-testid="settings-privacy-embedding" data-cloud={cloud ? 'true' : 'false'}>
          {cloud
            ? t(lang, 'settings.privacy.embedCloud', { provider: cloudName === 'azure' ? 'Azure OpenAI' : 'OpenAI' })
            : t(lang, 'settings.privacy.embedLocal')}
        </li>
        <li>{t(lang, 'settings.privacy.runs')}</li>
      </ul>
    </section>
  );
}

export function SettingsDialog({ lang, open, onClose, onLangChange }: Props) {
  const settings = useSettings({ lang, open, onLangChange });
  const { form, effective, keySet, keyStorage, keychain, sessionOnly, key, status, busy, needsKey, environmentProvider } = settings;
  const { field, update, save, setKey, typeKey, setSessionOnly } = settings;
  const id = useId();
  const first = useRef<HTMLSelectElement>(null);

  useEffect(() => {
    if (open && form) first.current?.focus();
  }, [open, form === null]);

  if (!open) return null;

  return (
    <div className="settings-backdrop" onMouseDown={(e) => e.target === e.currentTarget && onClose()}>
      <div
        className="settings-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={`${id}-title`}
        data-testid="settings-dialog"
        onKeyDown={(e) => {
          if (e.key === 'Escape') onClose();
        }}
      >
        <h2 id={`${id}-title`} className="settings-title">
          {t(lang, 'settings.title')}
        </h2>
        {form === null ? (
          <p className="settings-status" data-testid="settings-status" data-tone={status.kind === 'failed' ? 'error' : 'info'}>
            {status.kind === 'failed' ? status.text : t(lang, 'settings.loading')}
          </p>
        ) : (
          <form
            className="settings-form"
            onSubmit={(e) => {
              e.preventDefault();
              void save();
            }}
          >
            {effective ? <Effective key={JSON.stringify(effective)} lang={lang} effective={effective} /> : null}

            <label className="settings-field">
              <span>{t(lang, 'settings.provider')}</span>
              <select
                ref={first}
                data-testid="settings-provider"
                value={form.provider}
                onChange={(e) => update({ provider: e.target.value as ProviderChoice })}
              >
                {PROVIDERS.map((p) => (
                  <option key={p} value={p}>
                    {p === 'none' && environmentProvider
                      ? t(lang, 'settings.provider.environment', { provider: kindText(lang, environmentProvider) })
                      : t(lang, `settings.provider.${p}` as MessageKey)}
                  </option>
                ))}
              </select>
            </label>

            {form.provider === 'compatible' || form.provider === 'openai' ? (
              <label className="settings-field">
                <span>{t(lang, 'settings.baseUrl')}</span>
                <input
                  type="url"
                  data-testid="settings-base-url"
                  aria-invalid={field('base_url')}
                  placeholder={t(lang, 'settings.baseUrlPlaceholder')}
                  value={form.base_url}
                  onChange={(e) => update({ base_url: e.target.value })}
                />
              </label>
            ) : null}

            {form.provider === 'azure' ? (
              <>
                <label className="settings-field">
                  <span>{t(lang, 'settings.azureEndpoint')}</span>
                  <input
                    type="url"
                    data-testid="settings-azure-endpoint"
                    aria-invalid={field('azure_endpoint')}
                    placeholder="https://example.openai.azure.com"
                    value={form.azure_endpoint}
                    onChange={(e) => update({ azure_endpoint: e.target.value })}
                  />
                </label>
                <label className="settings-field">
                  <span>{t(lang, 'settings.azureDeployment')}</span>
                  <input
                    data-testid="settings-azure-deployment"
                    aria-invalid={field('azure_deployment')}
                    value={form.azure_deployment}
                    onChange={(e) => update({ azure_deployment: e.target.value })}
                  />
                </label>
                <label className="settings-field">
                  <span>{t(lang, 'settings.azureApiVersion')}</span>
                  <input
                    data-testid="settings-azure-api-version"
                    placeholder="2024-10-21"
                    value={form.azure_api_version}
                    onChange={(e) => update({ azure_api_version: e.target.value })}
                  />
                </label>
              </>
            ) : null}

            {form.provider !== 'none' ? (
              <label className="settings-field">
                <span>{t(lang, 'settings.model')}</span>
                <input
                  data-testid="settings-model"
                  placeholder={t(lang, 'settings.modelPlaceholder')}
                  value={form.model}
                  onChange={(e) => update({ model: e.target.value })}
                />
              </label>
            ) : null}

            {needsKey ? (
              <div className="settings-field">
                <span id={`${id}-key`}>{t(lang, 'settings.apiKey')}</span>
                {!keychain ? (
                  <p className="settings-warning" data-testid="settings-keychain-unavailable">
                    {t(lang, 'settings.keychainUnavailable')}
                  </p>
                ) : null}
                {keySet && key.kind === 'keep' ? (
                  <div className="settings-key-saved">
                    <span className="settings-badge" data-testid="settings-api-key-saved" data-storage={keyStorage ?? undefined}>
                      {keyStorage === 'session' ? t(lang, 'settings.apiKeySession') : t(lang, 'settings.apiKeySaved')}
                    </span>
                    <button type="button" className="button" data-testid="settings-api-key-replace" onClick={() => setKey({ kind: 'replace', key: '' })}>
                      {t(lang, 'settings.apiKeyReplace')}
                    </button>
                    <button type="button" className="button" data-testid="settings-api-key-delete" onClick={() => setKey({ kind: 'delete' })}>
                      {t(lang, 'settings.apiKeyDelete')}
                    </button>
                  </div>
                ) : key.kind === 'delete' ? (
                  <p className="settings-hint">{t(lang, 'settings.apiKeyDelete')}…</p>
                ) : (
                  <input
                    type="password"
                    autoComplete="off"
                    spellCheck={false}
                    aria-labelledby={`${id}-key`}
                    aria-invalid={field('api_key')}
                    data-testid="settings-api-key"
                    placeholder={t(lang, 'settings.apiKeyPlaceholder')}
                    value={key.kind === 'replace' ? key.key : ''}
                    onChange={(e) => typeKey(e.target.value)}
                  />
                )}
                {key.kind === 'replace' ? (
                  <label className="settings-hint" style={{ display: 'flex', gap: 6, alignItems: 'center' }}>
                    <input
                      type="checkbox"
                      data-testid="settings-key-session"
                      checked={sessionOnly}
                      onChange={(e) => setSessionOnly(e.target.checked)}
                    />
                    {t(lang, 'settings.keySession')}
                  </label>
                ) : null}
                <small className="settings-hint">
                  {sessionOnly || keyStorage === 'session' ? t(lang, 'settings.keySessionHint') : t(lang, 'settings.apiKeyHint')}
                </small>
              </div>
            ) : null}

            <label className="settings-field">
              <span>{t(lang, 'settings.embedding')}</span>
              <select
                data-testid="settings-embedding"
                value={form.embedding}
                onChange={(e) => update({ embedding: e.target.value as EmbeddingChoice | 'auto' })}
              >
                {EMBEDDINGS.map((source) => (
                  <option key={source} value={source}>
                    {t(lang, `settings.embedding.${source}` as MessageKey)}
                  </option>
                ))}
              </select>
            </label>

            {effective ? <Privacy lang={lang} form={form} effective={effective} /> : null}

            <label className="settings-field">
              <span>{t(lang, 'settings.lang')}</span>
              <select data-testid="settings-lang" value={form.lang} onChange={(e) => update({ lang: e.target.value as Lang })}>
                <option value="ja">{t(lang, 'lang.ja')}</option>
                <option value="en">{t(lang, 'lang.en')}</option>
              </select>
            </label>

            <label className="settings-field">
              <span>{t(lang, 'settings.workspace')}</span>
              <input
                data-testid="settings-workspace"
                aria-invalid={field('workspace')}
                placeholder={t(lang, 'settings.workspacePlaceholder')}
                value={form.workspace}
                onChange={(e) => update({ workspace: e.target.value })}
              />
              <small className="settings-hint">{t(lang, 'settings.workspaceHint')}</small>
            </label>

            <label className="settings-field">
              <span>{t(lang, 'settings.allowHosts')}</span>
              <textarea
                data-testid="settings-allow-hosts"
                aria-invalid={field('allow_hosts')}
                rows={3}
                placeholder="hooks.slack.com"
                value={form.allow_hosts}
                onChange={(e) => update({ allow_hosts: e.target.value })}
              />
              <small className="settings-hint">{t(lang, 'settings.allowHostsHint')}</small>
            </label>

            <fieldset className="settings-field settings-limits" data-testid="settings-run-limits">
              <legend>{t(lang, 'settings.runLimits')}</legend>
              {LIMITS.map(({ key, builtIn }) => (
                <label key={key} className="settings-limit">
                  <span>{t(lang, `settings.limit.${key}` as MessageKey)}</span>
                  <input
                    data-testid={`settings-limit-${key}`}
                    inputMode="numeric"
                    aria-invalid={field(`run_limits.${key}`)}
                    placeholder={builtIn.toLocaleString('ja-JP')}
                    value={form.run_limits[key]}
                    onChange={(e) => update({ run_limits: { ...form.run_limits, [key]: e.target.value } })}
                  />
                </label>
              ))}
              <small className="settings-hint">{t(lang, 'settings.runLimitsHint')}</small>
            </fieldset>

            <p
              className="settings-status"
              role="status"
              data-testid="settings-status"
              data-tone={status.kind === 'failed' || status.kind === 'keychainRefused' ? 'error' : status.kind === 'saved' ? 'ok' : 'info'}
            >
              {status.kind === 'failed'
                ? status.text
                : status.kind === 'keychainRefused'
                  ? t(lang, 'settings.keychainRefused')
                  : status.kind === 'saved'
                    ? t(lang, 'settings.saved')
                    : status.kind === 'saving'
                      ? t(lang, 'settings.saving')
                      : ''}
            </p>

            <div className="settings-actions">
              <button type="button" className="button" data-testid="settings-cancel" onClick={onClose}>
                {t(lang, 'settings.cancel')}
              </button>
              {status.kind === 'keychainRefused' ? (
                <button type="button" className="button" data-testid="settings-keep-for-session" onClick={() => void save('session')}>
                  {t(lang, 'settings.keepForSession')}
                </button>
              ) : null}
              <button type="submit" className="button button-primary" data-testid="settings-save" disabled={busy}>
                {status.kind === 'saving' ? t(lang, 'settings.saving') : t(lang, 'settings.save')}
              </button>
            </div>
          </form>
        )}
      </div>
    </div>
  );
}
