// Reference documents of a generation: each file's journey from the dialog or a drop to an
// extracted text (upload in the browser → extraction → ready or failed), and the line that
// says what was read and what was cut.

import { ApiError, documentsUpload, pickFiles } from '../../api';
import type { FileMetrics, FileText, ItemError, Lang } from '../../api/types';
import { t } from '../../shared/i18n';

/** The largest document the server accepts (documents_upload). */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

/**
 * The workspace path of a file a person chose for a question or a run's input: in the desktop
 * app (`file` null) the one picked in its file dialog, in the browser the chosen `File`
 * uploaded into the workspace. `null` when the dialog was closed; throws `ApiError`.
 */
export async function fileForQuestion(file: File | null): Promise<string | null> {
  if (file === null) {
    const paths = await pickFiles();
    return paths[0] ?? null;
  }
  if (file.size > MAX_UPLOAD_BYTES) throw new ApiError('FILE_TOO_LARGE', `${file.size} bytes`);
  const uploaded = await documentsUpload({ name: file.name, content_base64: toBase64(new Uint8Array(await file.arrayBuffer())) });
  return uploaded.path;
}

export type DocumentStatus = 'uploading' | 'reading' | 'ready' | 'failed';

export interface DocumentEntry {
  /** Stable key for the list (the path once known, else the name plus a counter). */
  key: string;
  name: string;
  /** Workspace-relative or absolute path, once the file is on the server's disk. */
  path: string | null;
  status: DocumentStatus;
  text: FileText | null;
  metrics: FileMetrics | null;
  error: { code: string; message: string } | null;
}

/** The file name of a path (either separator). */
export function baseName(path: string): string {
  return path.split(/[\\/]/).pop() || path;
}

/** Reads a browser `File` as standard base64, in chunks (no giant intermediate string). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

/** The first error reported for `path` in an extract/metrics response, if any. */
export function errorFor(errors: readonly ItemError[], path: string): ItemError | null {
  return errors.find((error) => error.file_path === path) ?? null;
}

/** Columns a table summary names before 「…」. */
const SUMMARY_COLUMNS = 5;

/**
 * One line about what was read: rows × columns and the first column names for a CSV, pages
 * (read of total) for a PDF, sheets for a workbook, characters otherwise.
 */
export function extractionSummary(lang: Lang, entry: DocumentEntry): string {
  const text = entry.text;
  const metrics = entry.metrics;
  const parts: string[] = [];
  if (text?.pages_total != null) {
    parts.push(t(lang, 'docs.pages', { read: text.pages_extracted ?? text.pages_total, total: text.pages_total }));
  } else if (metrics?.pages != null) {
    parts.push(t(lang, 'docs.pages', { read: metrics.pages, total: metrics.pages }));
  }
  const sheets = text?.sheet_names?.length ?? metrics?.sheets ?? null;
  if (sheets !== null && sheets !== undefined) {
    parts.push(t(lang, 'docs.sheets', { count: sheets, sheet: text?.sheet ?? '' }));
  }
  const table = text?.table;
  if (table) {
    const shown = table.columns.slice(0, SUMMARY_COLUMNS).join(', ');
    const more = table.columns.length > SUMMARY_COLUMNS ? ', …' : '';
    parts.push(
      t(lang, 'docs.table', {
        rows: table.rows.toLocaleString(),
        columns: table.columns.length,
        names: `${shown}${more}`,
      }),
    );
    return parts.join(' · ');
  }
  const characters = text?.characters ?? metrics?.characters;
  if (characters !== undefined) parts.push(t(lang, 'docs.characters', { count: characters.toLocaleString() }));
  return parts.join(' · ');
}
