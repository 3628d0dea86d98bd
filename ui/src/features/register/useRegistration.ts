// Registering the plan to designs/ (`plan_register`): the step that asks for its name, the
// save itself, and the notice that says where it went or why it was refused.

import { useCallback, useState, type RefObject } from 'react';
import { asApiError, planRegister } from '../../api';
import type { Finding, Lang } from '../../api/types';
import type { YamlEditorHandle } from '../design/usePlanText';
import { fileStem, planIdOf, proposedName, stampOf, withPlanId } from './register';

export type Notice =
  | { kind: 'saved'; fileName: string; path: string }
  | { kind: 'error'; code: string; message: string };

export interface RegistrationOptions {
  lang: Lang;
  /** The instruction, whose words name a plan that has no id yet. */
  instruction: string;
  /** The plan's text at this instant. */
  textRef: RefObject<string>;
  /** Where a plan renamed for its file is put (the editor then reports it as an edit). */
  editor: RefObject<Pick<YamlEditorHandle, 'setText'> | null>;
  /**
   * The edit sequence (`usePlanText`): the same before and after the request means the text
   * was neither edited nor validated again, so a refusal's findings still fit it.
   */
  sequence: RefObject<number>;
  /** The server refused the plan as invalid, with its findings, and the text is unchanged. */
  onRefused(findings: Finding[]): void;
}

function findingsFromDetails(details: unknown): Finding[] | null {
  if (typeof details !== 'object' || details === null) return null;
  const findings = (details as { findings?: unknown }).findings;
  return Array.isArray(findings) ? (findings as Finding[]) : null;
}

export function useRegistration({ lang, instruction, textRef, sequence, editor, onRefused }: RegistrationOptions) {
  const [registering, setRegistering] = useState(false);
  // The open register step: the proposed name and the stamp its file name shows.
  const [step, setStep] = useState<{ name: string; stamp: string } | null>(null);
  const [notice, setNotice] = useState<Notice | null>(null);

  /** 登録 (or Ctrl+S): asks the plan's name first; pressed again while asking, it confirms. */
  const open = () => {
    if (textRef.current.trim() === '') return;
    if (step !== null) {
      if (step.name.trim() !== '') void confirm(step.name.trim());
      return;
    }
    setNotice(null);
    setStep({ name: proposedName(textRef.current, instruction), stamp: stampOf(new Date()) });
  };

  /**
   * Saves the plan under `name`: the plan's id becomes the name's file-safe form (so the id,
   * the file and what the step showed agree), and the stamp the step showed is sent along.
   */
  const confirm = async (name: string) => {
    if (step === null || registering) return;
    const planId = fileStem(name);
    let yaml = textRef.current;
    if (planIdOf(yaml) !== planId) {
      yaml = withPlanId(yaml, planId);
      editor.current?.setText(yaml);
    }
    const id = sequence.current;
    setRegistering(true);
    setNotice(null);
    try {
      const response = await planRegister({ yaml, lang, stamp: step.stamp });
      setStep(null);
      setNotice({ kind: 'saved', fileName: response.file_name, path: response.path });
    } catch (err) {
      const error = asApiError(err);
      setStep(null);
      setNotice({ kind: 'error', code: error.code, message: error.message });
      const findings = error.code === 'PLAN_INVALID' ? findingsFromDetails(error.details) : null;
      if (findings !== null && id === sequence.current) onRefused(findings);
    } finally {
      setRegistering(false);
    }
  };

  const rename = (name: string) => setStep((current) => (current === null ? null : { ...current, name }));
  const cancel = () => setStep(null);
  // A saved/failed notice describes the text as it was; once edited it would mislead.
  const clearNotice = useCallback(() => setNotice(null), []);

  return { registering, step, notice, open, confirm, rename, cancel, clearNotice };
}
