/**
 * A small syntax highlighter for the code blocks of the conversation: comments, strings,
 * numbers and keywords of the languages an agent writes most, marked with `hl-*` classes that
 * the page colours from the theme. Offline and dependency-free; a language it does not know is
 * left plain (escaped). Pure: no `vscode` import.
 */
import { escapeHtml } from '../text';

interface Grammar {
  keywords: ReadonlySet<string>;
  /** Line comment starts, e.g. `#`, `//`. */
  line: readonly string[];
  /** Block comment delimiters, e.g. `/*` … `*\/`. */
  block?: readonly [string, string];
  /** Triple-quoted strings (Python). */
  triple?: boolean;
  /** Backquoted template strings (JavaScript). */
  backtick?: boolean;
}

const words = (text: string): ReadonlySet<string> => new Set(text.split(/\s+/).filter(Boolean));

const python: Grammar = {
  keywords: words(
    'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case self',
  ),
  line: ['#'],
  triple: true,
};
const script: Grammar = {
  keywords: words(
    'abstract any as async await boolean break case catch class const constructor continue debugger declare default delete do else enum export extends false finally for from function get if implements import in instanceof interface let new null number of private protected public readonly return set static string super switch this throw true try type typeof undefined var void while with yield',
  ),
  line: ['//'],
  block: ['/*', '*/'],
  backtick: true,
};
const shell: Grammar = {
  keywords: words('if then else elif fi for while until do done case esac in function return export local set unset echo cd exit source'),
  line: ['#'],
};
const cLike: Grammar = {
  keywords: words(
    'auto break case catch char class const continue default delete do double else enum extern false final float for fn func go if impl import int let long loop match mod mut namespace new nil null package private protected pub public return self short static struct super switch this throw true try type typedef union unsigned use using var void volatile where while',
  ),
  line: ['//'],
  block: ['/*', '*/'],
};
const json: Grammar = { keywords: words('true false null'), line: [] };
const yaml: Grammar = { keywords: words('true false null yes no'), line: ['#'] };
const sql: Grammar = {
  keywords: words(
    'select from where and or not insert into values update set delete create table index drop alter join left right inner outer on group by order having limit as null is in like distinct primary key',
  ),
  line: ['--'],
  block: ['/*', '*/'],
};

const grammars: Readonly<Record<string, Grammar>> = {
  python, py: python,
  javascript: script, js: script, jsx: script, typescript: script, ts: script, tsx: script, mjs: script,
  bash: shell, sh: shell, shell: shell, zsh: shell, console: shell,
  c: cLike, cpp: cLike, 'c++': cLike, java: cLike, go: cLike, rust: cLike, rs: cLike, csharp: cLike, cs: cLike, kotlin: cLike, swift: cLike,
  json, jsonc: json,
  yaml, yml: yaml, toml: yaml,
  sql,
};

/** Whether `lang` (a fence's info string's first word) is one the highlighter knows. */
export function knowsLanguage(lang: string): boolean {
  return Object.prototype.hasOwnProperty.call(grammars, lang.toLowerCase());
}

const span = (kind: string, text: string): string => `<span class="hl-${kind}">${escapeHtml(text)}</span>`;

/** `code` as HTML, highlighted for `lang` (escaped and otherwise plain when unknown). */
export function highlight(code: string, lang: string): string {
  const grammar = knowsLanguage(lang) ? grammars[lang.toLowerCase()] : undefined;
  if (!grammar) {
    return escapeHtml(code);
  }
  const out: string[] = [];
  let plain = '';
  const flush = (): void => {
    if (plain) {
      out.push(escapeHtml(plain));
      plain = '';
    }
  };
  let i = 0;
  while (i < code.length) {
    const rest = code.slice(i);
    const line = grammar.line.find((start) => rest.startsWith(start));
    if (line !== undefined) {
      const end = code.indexOf('\n', i);
      const stop = end < 0 ? code.length : end;
      flush();
      out.push(span('comment', code.slice(i, stop)));
      i = stop;
      continue;
    }
    if (grammar.block && rest.startsWith(grammar.block[0])) {
      const end = code.indexOf(grammar.block[1], i + grammar.block[0].length);
      const stop = end < 0 ? code.length : end + grammar.block[1].length;
      flush();
      out.push(span('comment', code.slice(i, stop)));
      i = stop;
      continue;
    }
    const ch = code[i]!;
    if (grammar.triple && (rest.startsWith('"""') || rest.startsWith("'''"))) {
      const quote = rest.slice(0, 3);
      const end = code.indexOf(quote, i + 3);
      const stop = end < 0 ? code.length : end + 3;
      flush();
      out.push(span('string', code.slice(i, stop)));
      i = stop;
      continue;
    }
    if (ch === '"' || ch === "'" || (ch === '`' && grammar.backtick)) {
      let j = i + 1;
      while (j < code.length && code[j] !== ch && !(code[j] === '\n' && ch !== '`')) {
        j += code[j] === '\\' ? 2 : 1;
      }
      const stop = Math.min(code.length, j + 1);
      flush();
      out.push(span('string', code.slice(i, stop)));
      i = stop;
      continue;
    }
    const number = /^(?:0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(rest);
    if (number && !/[\w$]/.test(code[i - 1] ?? '')) {
      flush();
      out.push(span('number', number[0]));
      i += number[0].length;
      continue;
    }
    const word = /^[A-Za-z_$][\w$]*/.exec(rest);
    if (word) {
      const w = word[0];
      const isKeyword = grammar.keywords.has(grammar === sql ? w.toLowerCase() : w);
      if (isKeyword) {
        flush();
        out.push(span('keyword', w));
      } else if (code[i + w.length] === '(') {
        flush();
        out.push(span('function', w));
      } else {
        plain += w;
      }
      i += w.length;
      continue;
    }
    plain += ch;
    i += 1;
  }
  flush();
  return out.join('');
}
