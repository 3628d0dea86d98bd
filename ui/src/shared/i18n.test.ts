import { describe, expect, it } from 'vitest';
import { LANGS, categoryLabel, errorText, initialLang, messageParts, messages, placeholders, t, type MessageKey } from './i18n';

const jaKeys = Object.keys(messages.ja).sort();

describe('message catalog', () => {
  it('has the same keys in every language', () => {
    for (const lang of LANGS) {
      expect(Object.keys(messages[lang]).sort()).toEqual(jaKeys);
    }
  });

  it.each(jaKeys)('%s is non-empty and has the same placeholders in ja and en', (key) => {
    const ja = messages.ja[key as MessageKey];
    const en = messages.en[key as MessageKey];
    expect(ja.trim()).not.toBe('');
    expect(en.trim()).not.toBe('');
    expect(placeholders(en)).toEqual(placeholders(ja));
  });

  it('has a message for every error code the API documents', () => {
    const codes = ['INVALID_REQUEST', 'YAML_PARSE', 'PLAN_INVALID', 'NOT_FOUND', 'PATH_DENIED', 'ALREADY_EXISTS', 'IO_ERROR', 'INTERNAL'];
    for (const lang of LANGS) {
      for (const code of codes) {
        expect(errorText(lang, code)).not.toContain(code);
      }
    }
  });
});

describe('t', () => {
  const cases: [Parameters<typeof t>, string][] = [
    [['ja', 'action.register'], '登録'],
    [['en', 'action.register'], 'Register'],
    [['ja', 'action.validate'], '検証'],
    [['ja', 'status.counts', { errors: 2, warnings: 0 }], 'エラー 2 件・警告 0 件'],
    [['en', 'status.counts', { errors: 2, warnings: 1 }], '2 errors, 1 warnings'],
    [['en', 'register.saved', { file: 'p_202601011200.yaml' }], 'Registered: p_202601011200.yaml'],
    // A missing parameter stays visible instead of silently vanishing.
    [['en', 'register.saved'], 'Registered: {file}'],
  ];
  it.each(cases)('%j → %s', (args, expected) => {
    expect(t(...args)).toBe(expected);
  });
});

describe('errorText', () => {
  const cases: [Parameters<typeof errorText>, string][] = [
    [['ja', 'PLAN_INVALID'], 'プランにエラーがあります。検証結果を確認してください'],
    [['en', 'ALREADY_EXISTS'], 'A file with that name already exists'],
    [['en', 'TRANSPORT_ERROR'], 'Cannot reach the Keiri server'],
    [['ja', 'SOMETHING_NEW'], '予期しないエラーです (SOMETHING_NEW)'],
    [['en', 'unknown'], 'Unexpected error (unknown)'],
  ];
  it.each(cases)('%j → %s', (args, expected) => {
    expect(errorText(...args)).toBe(expected);
  });
});

describe('messageParts', () => {
  it('splits at placeholders', () => {
    expect(messageParts('ja', 'register.saved')).toEqual([{ text: '登録しました: ' }, { placeholder: 'file' }]);
    expect(messageParts('en', 'catalog.count')).toEqual([
      { placeholder: 'shown' },
      { text: ' of ' },
      { placeholder: 'total' },
    ]);
    expect(messageParts('en', 'action.register')).toEqual([{ text: 'Register' }]);
  });
});

describe('initialLang', () => {
  const cases: [string | null, 'ja' | 'en'][] = [
    [null, 'ja'],
    ['en', 'en'],
    ['ja', 'ja'],
    ['fr', 'ja'],
    ['', 'ja'],
  ];
  it.each(cases)('%j → %s', (saved, expected) => {
    expect(initialLang(saved)).toBe(expected);
  });
});

describe('categoryLabel', () => {
  const cases: [Parameters<typeof categoryLabel>, string][] = [
    [['ja', 'input'], '入力'],
    [['en', 'transforms'], 'Transforms'],
    [['ja', 'custom_blocks'], 'custom_blocks'],
  ];
  it.each(cases)('%j → %s', (args, expected) => {
    expect(categoryLabel(...args)).toBe(expected);
  });
});
