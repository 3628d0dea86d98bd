import { describe, expect, it } from 'vitest';
import { readableNotes } from './GeneratePanel';

describe('readableNotes', () => {
  const offline =
    'composed offline from templates without an LLM; configuring an LLM (OPENAI_API_KEY, or KEIRI_LLM_BASE_URL) gives better plans';
  const composed = '指示にある「Excelのレポート」のため、テンプレート exception_report を加えました';

  it('keeps English administrator notes out of the Japanese window', () => {
    expect(readableNotes('ja', [offline, composed])).toEqual({ shown: [composed], technical: [offline] });
  });

  it('shows every note in English mode', () => {
    expect(readableNotes('en', [offline, composed])).toEqual({ shown: [offline, composed], technical: [] });
  });
});
