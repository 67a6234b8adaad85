/**
 * The project's instruction files the session's model reads (`plansight/state`'s
 * `instructions`: the workspace's AGENTS.md, else its CLAUDE.md), as one line in the
 * Conversation view's header: "Reads AGENTS.md (2.1 kB)". The server decides which files and
 * how much of them; the client only says so. Pure: no `vscode` import.
 */
import { escapeHtml } from '../text';

export interface InstructionFile {
  path: string;
  bytes?: number;
  /** How many of its bytes were left out at the server's limit. */
  cut?: number;
}

/** The list from `plansight/state`, keeping only well-formed entries (an older server has none). */
export function instructionFiles(raw: unknown): InstructionFile[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.flatMap((item): InstructionFile[] => {
    const entry = item as { path?: unknown; bytes?: unknown; cut?: unknown } | null;
    if (!entry || typeof entry.path !== 'string' || !entry.path) {
      return [];
    }
    return [
      {
        path: entry.path,
        ...(typeof entry.bytes === 'number' ? { bytes: entry.bytes } : {}),
        ...(typeof entry.cut === 'number' && entry.cut > 0 ? { cut: entry.cut } : {}),
      },
    ];
  });
}

/** The terminal's wording (cli/render.py), so both clients say the same. */
export function sizeText(count: number): string {
  return count < 1024 ? `${count} bytes` : `${(count / 1024).toFixed(1)} kB`;
}

export function fileText(file: InstructionFile): string {
  const about = [
    ...(file.bytes !== undefined ? [sizeText(file.bytes)] : []),
    ...(file.cut ? [`${sizeText(file.cut)} of it left out (limit 32 kB)`] : []),
  ].join(', ');
  return about ? `${file.path} (${about})` : file.path;
}

/** The header line's HTML; '' (hidden) when the model reads no instruction file. */
export function instructionsHtml(files: readonly InstructionFile[]): string {
  if (!files.length) {
    return '';
  }
  const said = files.map(fileText).join(', ');
  const title = `Project instructions the model reads: ${said}`;
  const names = files.map((f) => `<strong>${escapeHtml(f.path)}</strong>${f.cut ? ' (cut)' : ''}`).join(', ');
  return (
    `<div class="instructions" title="${escapeHtml(title)}">` +
    `<i class="codicon codicon-book" aria-hidden="true"></i>` +
    `<span class="text">Reads ${names}</span></div>`
  );
}
