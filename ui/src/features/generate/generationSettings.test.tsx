// The generation's advanced settings: only what the user changed is sent, and the controls
// change the value they show.

import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { GenerationSettings } from './GenerationSettings';
import { DEFAULT_GENERATION_SETTINGS, generationRequestFields, type GenerationSettingsValue } from './generation';

afterEach(cleanup);

describe('generationRequestFields', () => {
  it('sends nothing for the defaults', () => {
    expect(generationRequestFields(DEFAULT_GENERATION_SETTINGS)).toEqual({});
  });

  it('sends each changed option under its API name', () => {
    const value: GenerationSettingsValue = {
      topkPerCategory: 8,
      maxDocsChars: 2000,
      suggestWhen: false,
      suggestForeach: false,
      foreachVarName: ' row ',
    };
    expect(generationRequestFields(value)).toEqual({
      topk_per_category: 8,
      max_docs_chars: 2000,
      suggest_when: false,
      suggest_foreach: false,
      foreach_var_name: 'row',
    });
  });

  it('does not send an empty loop variable name', () => {
    expect(generationRequestFields({ ...DEFAULT_GENERATION_SETTINGS, foreachVarName: '  ' })).toEqual({});
  });
});

describe('GenerationSettings', () => {
  it('reports changes and keeps the candidate count within 5 to 8', () => {
    let value = DEFAULT_GENERATION_SETTINGS;
    const { rerender } = render(
      <GenerationSettings lang="ja" value={value} onChange={(next) => (value = next)} />,
    );
    expect(screen.getByText('詳細設定')).toBeTruthy();
    fireEvent.change(screen.getByTestId('generation-topk'), { target: { value: '12' } });
    expect(value.topkPerCategory).toBe(8);
    fireEvent.click(screen.getByTestId('generation-suggest-foreach'));
    expect(value.suggestForeach).toBe(false);
    rerender(<GenerationSettings lang="ja" value={value} onChange={(next) => (value = next)} />);
    expect((screen.getByTestId('generation-foreach-var') as HTMLInputElement).disabled).toBe(true);
  });
});
