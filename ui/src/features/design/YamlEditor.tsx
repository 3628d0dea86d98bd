// The plan editor: CodeMirror 6 with YAML highlighting and the validator's findings as lint
// diagnostics. React owns nothing inside the editor: the view is created once and driven
// through the handle, because re-creating it on every render would lose the cursor, the
// selection and the undo history.

import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { yaml } from '@codemirror/lang-yaml';
import {
  bracketMatching,
  defaultHighlightStyle,
  foldGutter,
  indentOnInput,
  syntaxHighlighting,
} from '@codemirror/language';
import { lintGutter, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { useEffect, useImperativeHandle, useRef, type Ref } from 'react';
import type { Lang, ShownFinding } from '../../api/types';
import { findingRange, findingsToDiagnostics } from './diagnostics';
import { nodeIdAtLine, nodeIdLine } from './graph';
import type { YamlEditorHandle } from './usePlanText';

interface Props {
  initialText: string;
  /** The findings of the text currently in the editor (stale ones are filtered by the caller). */
  findings: readonly ShownFinding[];
  lang: Lang;
  label: string;
  onChange(text: string): void;
  /** The id of the plan node under the cursor, whenever it changes (null outside nodes). */
  onCursorNode?(id: string | null): void;
  ref?: Ref<YamlEditorHandle>;
}

const theme = EditorView.theme({
  '&': { height: '100%', fontSize: '13.5px', backgroundColor: 'var(--surface)' },
  '.cm-scroller': {
    fontFamily: 'var(--font-mono)',
    lineHeight: '1.6',
  },
  '.cm-content': { padding: '10px 0' },
  '.cm-gutters': {
    backgroundColor: 'var(--surface-muted)',
    color: 'var(--text-faint)',
    borderRight: '1px solid var(--border)',
  },
  '.cm-activeLine': { backgroundColor: 'var(--accent-faint)' },
  '.cm-activeLineGutter': { backgroundColor: 'var(--accent-faint)', color: 'var(--text)' },
  '&.cm-focused': { outline: 'none' },
  '.cm-tooltip-lint': { maxWidth: '480px', whiteSpace: 'pre-wrap' },
});

function lineTexts(state: EditorState): string[] {
  const lines: string[] = [];
  for (let n = 1; n <= state.doc.lines; n += 1) lines.push(state.doc.line(n).text);
  return lines;
}

export function YamlEditor({ initialText, findings, lang, label, onChange, onCursorNode, ref }: Props) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  // The listener is captured once by the editor; a ref keeps it pointing at the latest prop.
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  const onCursorNodeRef = useRef(onCursorNode);
  onCursorNodeRef.current = onCursorNode;
  // The last node reported, so moving inside one node does not report it again.
  const cursorNode = useRef<string | null>(null);

  useEffect(() => {
    if (host.current === null) return undefined;
    const editor = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: initialText,
        extensions: [
          lineNumbers(),
          foldGutter(),
          lintGutter(),
          highlightActiveLineGutter(),
          highlightActiveLine(),
          drawSelection(),
          history(),
          indentOnInput(),
          bracketMatching(),
          syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
          yaml(),
          EditorState.tabSize.of(2),
          keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
          EditorView.contentAttributes.of({ 'aria-label': label, 'data-testid': 'editor-content' }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) onChangeRef.current(update.state.doc.toString());
            if ((update.docChanged || update.selectionSet) && onCursorNodeRef.current !== undefined) {
              const state = update.state;
              const line = state.doc.lineAt(state.selection.main.head).number;
              const id = nodeIdAtLine(lineTexts(state), line);
              if (id !== cursorNode.current) {
                cursorNode.current = id;
                onCursorNodeRef.current(id);
              }
            }
          }),
          theme,
        ],
      }),
    });
    view.current = editor;
    return () => {
      editor.destroy();
      view.current = null;
    };
    // The editor is created once; later text arrives through the handle, and the initial
    // text and label are read only here on purpose.
  }, []);

  useEffect(() => {
    const editor = view.current;
    if (editor === null) return;
    editor.dispatch(setDiagnostics(editor.state, findingsToDiagnostics(editor.state.doc, findings, lang)));
  }, [findings, lang]);

  useEffect(() => {
    const content = view.current?.contentDOM;
    content?.setAttribute('aria-label', label);
  }, [label]);

  useImperativeHandle(
    ref,
    () => ({
      reveal(finding) {
        const editor = view.current;
        if (editor === null) return;
        const { from } = findingRange(editor.state.doc, finding);
        editor.dispatch({ selection: { anchor: from }, scrollIntoView: true });
        editor.focus();
      },
      setText(text, cursor) {
        const editor = view.current;
        if (editor === null) return;
        const anchor = Math.max(0, Math.min(cursor ?? text.length, text.length));
        editor.dispatch({
          changes: { from: 0, to: editor.state.doc.length, insert: text },
          selection: { anchor },
          scrollIntoView: true,
        });
        editor.focus();
      },
      getText() {
        return view.current?.state.doc.toString() ?? '';
      },
      revealNode(id) {
        const editor = view.current;
        if (editor === null) return false;
        const number = nodeIdLine(lineTexts(editor.state), id);
        if (number === null) return false;
        const line = editor.state.doc.line(number);
        const from = line.from + (line.text.length - line.text.trimStart().length);
        editor.dispatch({
          selection: { anchor: from, head: line.to },
          effects: EditorView.scrollIntoView(from, { y: 'center' }),
        });
        return true;
      },
    }),
    [],
  );

  return <div className="editor-host" ref={host} data-testid="editor" />;
}
