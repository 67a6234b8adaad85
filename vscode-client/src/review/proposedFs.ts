/**
 * The right side of a review diff: an in-memory, writable file system, so the user can change
 * the proposal before accepting it. Files live as long as their review.
 */
import * as vscode from 'vscode';

export const proposedScheme = 'plansight-proposed';

interface Entry {
  path: string;
  data: Uint8Array;
  ctime: number;
  mtime: number;
}

/** Review documents differ only in their query (the review id): key them by path and query. */
function key(uri: vscode.Uri): string {
  return `${uri.path}?${uri.query}`;
}

export class ProposedFileSystem implements vscode.FileSystemProvider {
  private readonly files = new Map<string, Entry>();
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  set(uri: vscode.Uri, text: string): void {
    const now = Date.now();
    const existed = this.files.has(key(uri));
    this.files.set(key(uri), { path: uri.path, data: new TextEncoder().encode(text), ctime: now, mtime: now });
    this.emitter.fire([
      { type: existed ? vscode.FileChangeType.Changed : vscode.FileChangeType.Created, uri },
    ]);
  }

  text(uri: vscode.Uri): string | undefined {
    const entry = this.files.get(key(uri));
    return entry ? new TextDecoder().decode(entry.data) : undefined;
  }

  remove(uri: vscode.Uri): void {
    if (this.files.delete(key(uri))) {
      this.emitter.fire([{ type: vscode.FileChangeType.Deleted, uri }]);
    }
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const entry = this.files.get(key(uri));
    if (entry) {
      return { type: vscode.FileType.File, ctime: entry.ctime, mtime: entry.mtime, size: entry.data.byteLength };
    }
    const prefix = uri.path.replace(/\/?$/, '/');
    if ([...this.files.values()].some((e) => e.path.startsWith(prefix))) {
      return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
    }
    throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(uri: vscode.Uri): [string, vscode.FileType][] {
    const prefix = uri.path.replace(/\/?$/, '/');
    const names = new Map<string, vscode.FileType>();
    for (const { path } of this.files.values()) {
      if (path.startsWith(prefix)) {
        const rest = path.slice(prefix.length);
        const [first, ...more] = rest.split('/');
        if (first) {
          names.set(first, more.length ? vscode.FileType.Directory : vscode.FileType.File);
        }
      }
    }
    return [...names];
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const entry = this.files.get(key(uri));
    if (!entry) {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
    return entry.data;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const entry = this.files.get(key(uri));
    if (!entry) {
      // Only the review's own document can be written: no new files here.
      throw vscode.FileSystemError.NoPermissions(uri);
    }
    entry.data = content;
    entry.mtime = Date.now();
    this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): void {
    this.remove(uri);
  }

  rename(oldUri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(oldUri);
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** The left side (and past reviews): read-only text served by review id. */
export const originalScheme = 'plansight-original';

export class OriginalContentProvider implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.emitter.fire(uri);
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
