// The register step's names: the file stem the server will use, the name proposed from the
// instruction, and the plan's id rewritten in the text.

import { describe, expect, it } from 'vitest';
import { fileStem, nameFromInstruction, planIdOf, proposedName, targetFileName, withPlanId } from './register';

describe('fileStem (as keiri-plan makes it)', () => {
  it.each([
    ['月次/締め', '月次_締め'],
    ['invoice review', 'invoice_review'],
    ['..hidden', 'hidden'],
    ['   ', 'plan'],
    ['請求書-2026.v2', '請求書-2026.v2'],
  ])('%s → %s', (id, stem) => {
    expect(fileStem(id)).toBe(stem);
  });

  it('keeps at most 100 characters', () => {
    expect(fileStem('あ'.repeat(120))).toBe('あ'.repeat(100));
  });

  it('names the file with the stamp it is given, not the clock', () => {
    expect(targetFileName('月次/締め', '202604010930')).toBe('designs/月次_締め_202604010930.yaml');
  });
});

describe('nameFromInstruction', () => {
  it.each([
    ['請求書CSVから重複を検出してExcelレポートにする。担当者に通知', '請求書CSVから重複を検出してExcelレポートにする'],
    ['経費精算の 領収書 を確認', '経費精算の_領収書_を確認'],
    ['Find duplicate invoices!', 'Find_duplicate_invoices'],
    ['　', ''],
    // Whole phrases only: the second would pass 30 characters.
    ['銀行明細と売掛金を照合して、未入金の取引先を一覧にしてメールで送る', '銀行明細と売掛金を照合して'],
    ['請求書CSVから重複している請求書を見つけて、Excelのレポートにまとめる', '請求書CSVから重複している請求書を見つけて'],
    // One phrase longer than 30 characters is cut.
    ['あ'.repeat(40), 'あ'.repeat(30)],
  ])('%s → %s', (instruction, name) => {
    expect(nameFromInstruction(instruction)).toBe(name);
  });
});

describe('proposedName', () => {
  it('keeps a plan id someone chose', () => {
    expect(proposedName('id: 月次締め\ngraph: []\n', '請求書の確認')).toBe('月次締め');
  });
  it('replaces the planner default with the instruction', () => {
    expect(proposedName('id: generated_plan\ngraph: []\n', '請求書の確認')).toBe('請求書の確認');
  });
  it('falls back to the default when the instruction has nothing usable', () => {
    expect(proposedName('id: generated_plan\n', '')).toBe('generated_plan');
  });
});

describe('withPlanId', () => {
  it('replaces the top-level id only, keeping its comment', () => {
    const yaml = 'apiVersion: v1\nid: generated_plan # from the planner\ngraph:\n  - id: read\n';
    expect(withPlanId(yaml, '請求書の確認')).toBe('apiVersion: v1\nid: 請求書の確認 # from the planner\ngraph:\n  - id: read\n');
  });
  it('adds an id after apiVersion when there is none', () => {
    expect(withPlanId('apiVersion: v1\ngraph: []\n', 'p')).toBe('apiVersion: v1\nid: p\ngraph: []\n');
  });
  it('quotes a name YAML would read as a number or boolean', () => {
    expect(withPlanId('id: x\n', '2026')).toBe('id: "2026"\n');
    expect(withPlanId('id: x\n', 'yes')).toBe('id: "yes"\n');
    expect(planIdOf(withPlanId('id: x\n', '2026'))).toBe('2026');
  });
});
