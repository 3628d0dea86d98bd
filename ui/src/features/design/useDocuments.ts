// The reference documents attached to a generation: each file's journey from the browser's
// bytes, the desktop dialog or a drop to an extracted text, ready or failed.

import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, asApiError, documentsExtract, documentsMetrics, documentsUpload, isTauri, pickFiles } from '../../api';
import { MAX_UPLOAD_BYTES, baseName, errorFor, toBase64, type DocumentEntry } from './documents';

/** What the desktop shell announces after importing dropped files (src-tauri/src/import.rs). */
const DOCUMENTS_IMPORTED_EVENT = 'documents-imported';
interface DocumentsImported {
  /** The imported files; `path` is workspace-relative. */
  files: { source: string; path: string; size_bytes: number }[];
  /** The dropped paths that were not imported, with their error code. */
  errors: { source: string; code: string; message: string }[];
}

/** The file a failed import names in `details.source`, if any. */
function importSource(error: ApiError): string | null {
  if (typeof error.details !== 'object' || error.details === null) return null;
  const source = (error.details as { source?: unknown }).source;
  return typeof source === 'string' && source !== '' ? source : null;
}

export function useDocuments() {
  const [documents, setDocuments] = useState<DocumentEntry[]>([]);
  const documentCounter = useRef(0);

  const updateDocument = (key: string, patch: Partial<DocumentEntry>) =>
    setDocuments((list) => list.map((entry) => (entry.key === key ? { ...entry, ...patch } : entry)));

  const readDocument = useCallback(async (key: string, path: string) => {
    updateDocument(key, { path, status: 'reading' });
    try {
      const [extracted, metrics] = await Promise.all([
        documentsExtract({ file_paths: [path] }),
        documentsMetrics({ file_paths: [path] }).catch(() => null),
      ]);
      const error = errorFor(extracted.errors, path) ?? extracted.errors[0] ?? null;
      updateDocument(key, {
        status: error === null ? 'ready' : 'failed',
        text: extracted.files[0] ?? null,
        metrics: metrics?.files[0] ?? null,
        error: error === null ? null : { code: error.code, message: error.message },
      });
    } catch (err) {
      const error = asApiError(err);
      updateDocument(key, { status: 'failed', error: { code: error.code, message: error.message } });
    }
  }, []);

  const newEntry = (name: string, status: DocumentEntry['status']): DocumentEntry => {
    documentCounter.current += 1;
    return { key: `${name}#${documentCounter.current}`, name, path: null, status, text: null, metrics: null, error: null };
  };

  /** Files the browser holds as bytes: upload each to `<workspace>/inputs/`, then read it. */
  const addFiles = useCallback(
    (files: File[]) => {
      for (const file of files) {
        const entry = newEntry(file.name, 'uploading');
        setDocuments((list) => [...list, entry]);
        if (file.size > MAX_UPLOAD_BYTES) {
          updateDocument(entry.key, { status: 'failed', error: { code: 'FILE_TOO_LARGE', message: `${file.size} bytes` } });
          continue;
        }
        void (async () => {
          try {
            const bytes = new Uint8Array(await file.arrayBuffer());
            const uploaded = await documentsUpload({ name: file.name, content_base64: toBase64(bytes) });
            await readDocument(entry.key, uploaded.path);
          } catch (err) {
            const error = asApiError(err);
            // The HTTP server's own body limit answers 413 before the API sees the request.
            const status = (error.details as { status?: unknown } | undefined)?.status;
            const code = status === 413 ? 'FILE_TOO_LARGE' : error.code;
            updateDocument(entry.key, { status: 'failed', error: { code, message: error.message } });
          }
        })();
      }
    },
    [readDocument],
  );

  /**
   * Workspace paths the desktop shell gives once it has imported the files of the dialog or a
   * drop (into `<workspace>/inputs/`, unless already in the workspace): read them.
   */
  const addPaths = useCallback(
    (paths: string[]) => {
      for (const path of paths) {
        const entry = newEntry(baseName(path), 'reading');
        setDocuments((list) => [...list, entry]);
        void readDocument(entry.key, path);
      }
    },
    [readDocument],
  );

  /** A file the shell could not import: shown as a failed entry with its code. */
  const addFailure = useCallback((source: string | null, code: string, message: string) => {
    const entry = newEntry(source === null ? '—' : baseName(source), 'failed');
    setDocuments((list) => [...list, { ...entry, error: { code, message } }]);
  }, []);

  const pickDocuments = useCallback(async () => {
    try {
      const paths = await pickFiles();
      if (paths.length > 0) addPaths(paths);
    } catch (err) {
      // The shell refuses the whole pick, naming the file in `details.source`.
      const error = asApiError(err);
      addFailure(importSource(error), error.code || 'TRANSPORT_ERROR', error.message || String(err));
    }
  }, [addPaths, addFailure]);

  const removeDocument = (key: string) => setDocuments((list) => list.filter((entry) => entry.key !== key));

  // In the desktop window the shell handles a drop from the file manager itself: it imports
  // the files and announces the outcome, so only workspace paths ever reach the UI.
  useEffect(() => {
    if (!isTauri()) return undefined;
    let unlisten: (() => void) | null = null;
    let disposed = false;
    void import('@tauri-apps/api/event')
      .then(({ listen }) =>
        listen<DocumentsImported>(DOCUMENTS_IMPORTED_EVENT, (event) => {
          const paths = event.payload.files.map((file) => file.path);
          if (paths.length > 0) addPaths(paths);
          for (const error of event.payload.errors) addFailure(error.source, error.code, error.message);
        }),
      )
      .then((stop) => {
        if (disposed) stop();
        else unlisten = stop;
      })
      .catch(() => undefined);
    return () => {
      disposed = true;
      unlisten?.();
    };
  }, [addPaths, addFailure]);

  const readyDocs = documents.filter((entry) => entry.status === 'ready' && entry.path !== null).map((entry) => entry.path as string);
  // A generation waits for the documents still on their way (it would run without them).
  const pending = documents.some((entry) => entry.status === 'uploading' || entry.status === 'reading');

  return { documents, readyDocs, pending, addFiles, pickDocuments, removeDocument };
}
