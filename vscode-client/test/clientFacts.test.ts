// The same plan and run, as the server sends them (fixtures/plan-counts/wire.json, made by the
// server's own code in tests/test_client_facts.py), shown by VS Code as the terminal client
// shows them: the strings both must show are in expected.json, once.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConversationModel } from '../src/conversation/model';
import { ConversationRenderer } from '../src/conversation/render';
import { addItem } from '../src/plan/planEdits';
import { currentItem, planViewDescription, progressText } from '../src/plan/planModel';
import type { RunResult, TodoState, ToolCallEvent } from '../src/protocol';
import { statusText } from '../src/status/statusText';

const fixture = join(__dirname, '..', '..', 'fixtures', 'plan-counts');
const read = (name: string): unknown => JSON.parse(readFileSync(join(fixture, name), 'utf8'));

interface Wire {
  todos: TodoState;
  toolCalls: ToolCallEvent[];
  result: RunResult;
}
interface Expected {
  count: string;
  cancelled: number;
  current: string;
  nextId: string;
  toolCalls: string[];
  inputTokens: string;
}

const expected = read('expected.json') as Expected;
const wire = read('wire.json') as Wire;

/** The same, as a server without the optional fields sends it. */
function version1(w: Wire): Wire {
  const { items, completed, total, rendered, source, version } = w.todos;
  const { inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens } = w.result.usage;
  return {
    todos: { items, completed, total, rendered, source, version },
    toolCalls: w.toolCalls.map(({ type, id, name, input }) => ({ type, id, name, input })),
    result: { ...w.result, usage: { inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens } },
  };
}

/** A tool row's visible line: the tool's name and its summary, as the user reads them. */
function rowLine(html: string): string {
  const summary = /<summary>(.*?)<\/summary>/s.exec(html)?.[1] ?? '';
  const name = /<span class="name">(.*?)<\/span>/.exec(summary)?.[1] ?? '';
  const input = /<span class="input">(.*?)<\/span>/.exec(summary)?.[1];
  const unescape = (text: string): string =>
    text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
  return unescape(input === undefined ? name : `${name} ${input}`);
}

describe.each([
  ['this server', wire],
  ['a version 1 server', version1(wire)],
])('what VS Code shows of the plan from %s', (_, shown) => {
  it('counts the items done of all, and names the item in progress', () => {
    expect(progressText(shown.todos)).toBe(expected.count);
    expect(planViewDescription(shown.todos)).toBe(`${expected.count} · ${expected.cancelled} cancelled`);
    expect(statusText(shown.todos, true).text).toBe(`$(sync~spin) ${expected.count} · ${expected.current}`);
    expect(currentItem(shown.todos)).toMatchObject({ text: expected.current, now: true });
  });

  it('gives an added item the id the terminal gives a line added in the editor', () => {
    expect(addItem(shown.todos, 'Tell the users').items.at(-1)).toEqual({ id: expected.nextId, text: 'Tell the users', status: 'pending' });
  });

  it("shows the run's whole input", () => {
    const model = new ConversationModel();
    model.apply({ type: 'runFinished', result: shown.result });
    const html = new ConversationRenderer().entry(model.current!.entries.at(-1)!);
    expect(html).toContain(`${expected.inputTokens} in`);
  });
});

describe('what VS Code shows of the tool calls', () => {
  it('shows each call as its tool summarized it on the server', () => {
    const model = new ConversationModel();
    wire.toolCalls.forEach((event) => model.apply(event));
    const renderer = new ConversationRenderer();
    expect(model.current!.entries.map((entry) => rowLine(renderer.entry(entry)))).toEqual(expected.toolCalls);
  });
});
