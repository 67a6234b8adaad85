// Drives the Plansight server over stdio with the same wire calls the extension makes, against
// the fake API serving fixtures/vscode-e2e/recording.json. A quick protocol check with no editor.
//   node scripts/lsp-smoke.mjs [workspace]   (PLANSIGHT_PYTHON, default <repo>/.venv/bin/python)
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
const python = process.env.PLANSIGHT_PYTHON ?? join(repo, '.venv/bin/python');
const workspace = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'plansight-smoke-'));
if (!process.argv[2]) cpSync(join(repo, 'fixtures/hello'), workspace, { recursive: true });

const fake = spawn(python, ['-m', 'plansight.fakeapi', '--script', join(repo, 'fixtures/vscode-e2e/recording.json')], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
process.on('exit', () => fake.kill());
const baseUrl = await new Promise((ok) => fake.stdout.once('data', (d) => ok(JSON.parse(String(d)).baseUrl)));
console.error('fake API at', baseUrl);

const server = spawn(python, ['-m', 'plansight', 'lsp'], {
  cwd: workspace,
  env: { ...process.env, ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: 'smoke' },
  stdio: ['pipe', 'pipe', 'inherit'],
});
const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(server.stdout),
  new rpc.StreamMessageWriter(server.stdin),
);
const log = (...a) => console.log(...a.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))));
conn.onNotification('plansight/todos', (p) => log('todos', `${p.completed}/${p.total} v${p.version} ${p.source}`, p.items.map((i) => `${i.id}:${i.status}`).join(' ')));
conn.onNotification('plansight/scratchpad', (p) => log('scratchpad', p.content.slice(0, 60)));
conn.onNotification('plansight/event', (p) => log('event', p.type === 'textDelta' ? { type: p.type } : p));
conn.onNotification('textDocument/publishDiagnostics', (p) => log('diagnostics', p.uri, p.diagnostics.map((d) => [d.source, d.code, d.severity, d.message])));
conn.onNotification('window/logMessage', (p) => log('log', p.message.slice(0, 200)));
let review = 0;
conn.onRequest('plansight/reviewEdit', (p) => {
  review += 1;
  log('reviewEdit', { id: p.id, uri: p.uri, todoId: p.todoId, description: p.description, oldLen: p.oldText.length, newLen: p.newText.length });
  if (review === 2) return { accepted: false, feedback: 'No docstrings please: keep hello.py short' };
  if (review === 3) return { accepted: true, newText: p.newText + '# Reviewed in VS Code\n' };
  return { accepted: true };
});
conn.onRequest('plansight/approveCommand', (p) => (log('approveCommand', p), { approved: false, feedback: 'smoke' }));
conn.onRequest((method, params) => log('other request', method, params));
conn.listen();

const init = await conn.sendRequest('initialize', {
  processId: process.pid,
  rootUri: pathToFileURL(workspace).href,
  workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'ws' }],
  capabilities: { experimental: { plansight: { reviewEdit: true, approveCommand: true } }, window: { workDoneProgress: true } },
  initializationOptions: { autoApprove: { edits: false, commands: false } },
});
log('initialize', init.capabilities.experimental, 'textDocumentSync', init.capabilities.textDocumentSync);
await conn.sendNotification('initialized', {});
log('state', await conn.sendRequest('plansight/state', {}));
const result = await conn.sendRequest('plansight/run', { prompt: 'Refactor hello.py', newSession: true });
log('run result', result);
console.log('--- hello.py ---\n' + readFileSync(join(workspace, 'hello.py'), 'utf8'));
const requests = await (await fetch(baseUrl + '/_fake/requests')).json();
log('fake requests', requests.length);
// The user's plan edits: a stale version is refused (-32803), a broken rule too (-32602).
const { version } = (await conn.sendRequest('plansight/state', {})).todos;
const items = [{ id: '1', text: 'Smoke item', status: 'pending' }];
log('editPlan', await conn.sendRequest('plansight/editPlan', { items, version }).then((r) => `ok v${r.version}`));
for (const params of [
  { items, version },
  { items: [...items, { id: '2', text: 'a', status: 'in_progress' }, { id: '3', text: 'b', status: 'in_progress' }] },
]) {
  await conn.sendRequest('plansight/editPlan', params).then(
    (r) => log('editPlan UNEXPECTEDLY accepted', r),
    (e) => log('editPlan refused', e.code, e.message),
  );
}
await conn.sendRequest('shutdown');
await conn.sendNotification('exit');
fake.kill();
setTimeout(() => process.exit(0), 500);
