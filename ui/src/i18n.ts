// The one message catalog of the UI. Every string a person reads comes from here, in
// Japanese (the default: the studio is made for 経理 teams) and English. Messages take
// `{name}` placeholders filled by `t`. The validator's own messages are not here: they come
// from the API in the chosen language (`lang` in each request).

import type { Lang } from './api/types';

const ja = {
  'app.title': 'Keiri Studio',
  'app.tagline': '経理ワークフローの設計スタジオ',
  'tab.design': '設計',
  'lang.label': '表示言語',
  'lang.ja': '日本語',
  'lang.en': 'English',
  'mode.desktop': 'デスクトップ',
  'mode.browser': 'ブラウザ',

  'catalog.title': 'ブロックカタログ',
  'catalog.search': 'ID・名前・説明で検索',
  'catalog.count': '{shown} / {total} 件',
  'catalog.loading': 'カタログを読み込んでいます…',
  'catalog.empty': 'カタログにブロックがありません。block_specs/ を確認してください。',
  'catalog.noMatch': '「{query}」に一致するブロックはありません',
  'catalog.failed': 'カタログを読み込めませんでした: {message}',
  'catalog.issues': '{count} 件のブロック定義を読み込めませんでした',
  'catalog.inputs': '入力',
  'catalog.noInputs': '入力なし',
  'catalog.required': '必須',
  'catalog.insert': 'ノードをエディタに追加',

  'category.input': '入力',
  'category.transforms': '変換',
  'category.matching': '照合',
  'category.ai': 'AI',
  'category.control': '統制・チェック',
  'category.output': '出力',
  'category.integration': '連携',
  'category.ui': '画面・確認',

  'editor.title': 'プラン (YAML)',
  'editor.label': 'プランのYAMLエディタ',
  'editor.hint': '入力すると自動で検証します',

  'action.validate': '検証',
  'action.register': '登録',
  'action.validateTitle': 'プランを今すぐ検証します',
  'action.registerTitle': '検証してから designs/ に保存します',

  'status.validating': '検証中…',
  'status.registering': '登録中…',
  'status.valid': '問題ありません',
  'status.counts': 'エラー {errors} 件・警告 {warnings} 件',

  'findings.title': '検証結果',
  'findings.none': '問題は見つかりませんでした',
  'findings.emptyDoc': 'YAMLを入力すると検証結果がここに表示されます',
  'findings.pending': '検証を待っています…',
  'findings.error': 'エラー',
  'findings.warning': '警告',
  'findings.node': 'ノード',
  'findings.hint': 'ヒント',
  'findings.line': '{line} 行目',
  'findings.lineColumn': '{line} 行 {column} 列',
  'findings.noLocation': '位置不明',
  'findings.goTo': 'この位置へ移動',

  'register.saved': '登録しました: {file}',
  'notice.close': '閉じる',
  'register.failed': '登録できませんでした: {message}',
  'validate.failed': '検証できませんでした: {message}',

  'error.PLAN_INVALID': 'プランにエラーがあります。検証結果を確認してください',
  'error.YAML_PARSE': 'YAMLを読み取れません',
  'error.INVALID_REQUEST': 'リクエストの形式が正しくありません',
  'error.NOT_FOUND': '見つかりません',
  'error.PATH_DENIED': '許可されていない場所です',
  'error.ALREADY_EXISTS': '同じ名前のファイルが既にあります',
  'error.IO_ERROR': 'ファイルの読み書きに失敗しました',
  'error.INTERNAL': '内部エラーが発生しました',
  'error.TRANSPORT_ERROR': 'Keiri サーバーに接続できません',
  'error.INVALID_RESPONSE': 'サーバーの応答を読み取れません',
  'error.unknown': '予期しないエラーです ({code})',
} as const;

export type MessageKey = keyof typeof ja;

// Typed as a full record so a key missing in English is a compile error, not a blank label.
const en: Record<MessageKey, string> = {
  'app.title': 'Keiri Studio',
  'app.tagline': 'Design studio for accounting workflows',
  'tab.design': 'Design',
  'lang.label': 'Language',
  'lang.ja': '日本語',
  'lang.en': 'English',
  'mode.desktop': 'Desktop',
  'mode.browser': 'Browser',

  'catalog.title': 'Block catalog',
  'catalog.search': 'Search id, title or description',
  'catalog.count': '{shown} of {total}',
  'catalog.loading': 'Loading the catalog…',
  'catalog.empty': 'The catalog has no blocks. Check block_specs/.',
  'catalog.noMatch': 'No block matches “{query}”',
  'catalog.failed': 'Could not load the catalog: {message}',
  'catalog.issues': '{count} block specs failed to load',
  'catalog.inputs': 'Inputs',
  'catalog.noInputs': 'No inputs',
  'catalog.required': 'required',
  'catalog.insert': 'Insert a node into the editor',

  'category.input': 'Input',
  'category.transforms': 'Transforms',
  'category.matching': 'Matching',
  'category.ai': 'AI',
  'category.control': 'Controls',
  'category.output': 'Output',
  'category.integration': 'Integration',
  'category.ui': 'User interaction',

  'editor.title': 'Plan (YAML)',
  'editor.label': 'Plan YAML editor',
  'editor.hint': 'Validated as you type',

  'action.validate': 'Validate',
  'action.register': 'Register',
  'action.validateTitle': 'Validate the plan now',
  'action.registerTitle': 'Validate, then save to designs/',

  'status.validating': 'Validating…',
  'status.registering': 'Registering…',
  'status.valid': 'No problems',
  'status.counts': '{errors} errors, {warnings} warnings',

  'findings.title': 'Findings',
  'findings.none': 'No problems found',
  'findings.emptyDoc': 'Type a plan and its findings appear here',
  'findings.pending': 'Waiting for validation…',
  'findings.error': 'Error',
  'findings.warning': 'Warning',
  'findings.node': 'Node',
  'findings.hint': 'Hint',
  'findings.line': 'line {line}',
  'findings.lineColumn': 'line {line}, column {column}',
  'findings.noLocation': 'no location',
  'findings.goTo': 'Go to this position',

  'register.saved': 'Registered: {file}',
  'notice.close': 'Close',
  'register.failed': 'Could not register: {message}',
  'validate.failed': 'Could not validate: {message}',

  'error.PLAN_INVALID': 'The plan has errors; see the findings',
  'error.YAML_PARSE': 'The YAML cannot be read',
  'error.INVALID_REQUEST': 'The request is malformed',
  'error.NOT_FOUND': 'Not found',
  'error.PATH_DENIED': 'That location is not allowed',
  'error.ALREADY_EXISTS': 'A file with that name already exists',
  'error.IO_ERROR': 'Reading or writing a file failed',
  'error.INTERNAL': 'An internal error occurred',
  'error.TRANSPORT_ERROR': 'Cannot reach the Keiri server',
  'error.INVALID_RESPONSE': 'The server’s answer could not be read',
  'error.unknown': 'Unexpected error ({code})',
};

export const messages: Record<Lang, Record<MessageKey, string>> = { ja, en };

export const LANGS: readonly Lang[] = ['ja', 'en'];

/** The message `key` in `lang` with `{name}` placeholders replaced from `params`. */
export function t(lang: Lang, key: MessageKey, params: Record<string, string | number> = {}): string {
  return messages[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.prototype.hasOwnProperty.call(params, name) ? String(params[name]) : whole,
  );
}

/** A message split at its placeholders, for rendering a placeholder as an element. */
export type MessagePart = { text: string } | { placeholder: string };

export function messageParts(lang: Lang, key: MessageKey): MessagePart[] {
  const parts: MessagePart[] = [];
  let rest = messages[lang][key];
  for (let match = /\{(\w+)\}/.exec(rest); match !== null; match = /\{(\w+)\}/.exec(rest)) {
    if (match.index > 0) parts.push({ text: rest.slice(0, match.index) });
    parts.push({ placeholder: match[1] ?? '' });
    rest = rest.slice(match.index + match[0].length);
  }
  if (rest !== '') parts.push({ text: rest });
  return parts;
}

/** The placeholder names a message uses, for checking both languages agree. */
export function placeholders(message: string): string[] {
  return [...message.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '').sort();
}

/**
 * A person-readable sentence for an API error: known codes get a message from this catalog
 * (the UI branches on the code, never on the server's text); unknown ones name the code.
 */
export function errorText(lang: Lang, code: string): string {
  const key = `error.${code}`;
  // Codes are SCREAMING_SNAKE_CASE; the check keeps a code such as "unknown" from reaching
  // the catalog's own `error.unknown` template.
  if (/^[A-Z][A-Z0-9_]*$/.test(code) && Object.prototype.hasOwnProperty.call(messages[lang], key)) {
    return messages[lang][key as MessageKey];
  }
  return t(lang, 'error.unknown', { code });
}

/** The display name of a catalog category (its directory name), or the name itself. */
export function categoryLabel(lang: Lang, category: string): string {
  const key = `category.${category}`;
  return Object.prototype.hasOwnProperty.call(messages[lang], key) ? messages[lang][key as MessageKey] : category;
}

/**
 * The language to start in: the person's saved choice, else Japanese. The browser's own
 * language is deliberately ignored: the studio is Japanese-first and English is opt-in.
 */
export function initialLang(saved: string | null): Lang {
  return saved === 'en' ? 'en' : 'ja';
}
