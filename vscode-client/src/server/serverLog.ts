/**
 * The server's stderr → the Plansight output channel, each line once at its own level.
 *
 * The server logs every record to stderr and mirrors Plansight's own (INFO and up) to the client
 * as `window/logMessage`; vscode-languageclient would print both into the same channel, so
 * every line appeared twice. The client reads stderr itself (it has everything: the mirrored
 * records, other libraries' warnings, tracebacks) and drops the mirror. Lines in the server's
 * format (`2026-12-01 09:30:00,123 INFO plansight.session: …`) keep their level; other lines (a
 * traceback) go at the level of the record they follow. Pure: no `vscode` import.
 */

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';

export interface LogLine {
  level: LogLevel;
  text: string;
}

const levels: Readonly<Record<string, LogLevel>> = {
  DEBUG: 'debug',
  INFO: 'info',
  WARNING: 'warn',
  ERROR: 'error',
  CRITICAL: 'error',
};

// logging.basicConfig's format in plansight.lsp.server.serve: "%(asctime)s %(levelname)s %(name)s: %(message)s"
const record = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;

export class ServerLogLines {
  private partial = '';
  // A line before any record (Python's own complaint at start-up, say) is worth seeing.
  private level: LogLevel = 'warn';

  /** Feeds a chunk of stderr; returns the complete lines it ended, parsed. */
  push(chunk: string): LogLine[] {
    const text = this.partial + chunk;
    const lines = text.split(/\r?\n/);
    this.partial = lines.pop() ?? '';
    return lines.filter((line) => line.trim()).map((line) => this.parse(line));
  }

  /** What is left when the stream ends (a last line without a newline). */
  end(): LogLine[] {
    const rest = this.partial;
    this.partial = '';
    return rest.trim() ? [this.parse(rest)] : [];
  }

  private parse(line: string): LogLine {
    const match = record.exec(line);
    if (match) {
      this.level = levels[match[1]!] ?? 'info';
      return { level: this.level, text: match[2]! };
    }
    return { level: this.level, text: line };
  }
}
