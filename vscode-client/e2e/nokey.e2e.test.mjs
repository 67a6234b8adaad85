// No API key (issue 12): the user asks from the conversation; nothing is sent to the model, the
// prompt stays on screen with a card offering "Set API Key"; once the key is set the same prompt
// goes out by itself and the run succeeds, without retyping it. Issue 31: a key the API refuses
// (HTTP 401) is said in words with Set API Key first on the card and in a notification, at 300
// and 440 px; a new key set from the card, Retry sends the same prompt and it runs.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/nokey.json');
const { prompt, followUp } = JSON.parse(readFileSync(recording, 'utf8'));

test('no API key: Set API Key on the card, and the kept prompt runs; a refused key offers Set API Key', { timeout: 5 * 60_000 }, async (t) => {
  let fake;
  const { page, passed } = await openWorkbench(t, {
    name: 'nokey',
    env: { ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '' },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  await wb.openPlansight();
  log('asking without a key');
  await wb.ask(prompt);
  const card = await wb.openCard('apiKey');
  const frame = await wb.conversation();
  const log1 = await frame.locator('#log').innerText();
  assert.ok(!/\bround\b|Error/.test(log1), `no run was reported: ${log1}`);
  assert.equal((await fake.requests()).length, 0, 'nothing went to the API at all');
  await wb.shot('15-window-no-key');

  log('Set API Key from the card');
  await card.locator('button[data-action="setKey"]').click();
  await wb.answerInput('Anthropic API key', 'sk-ant-e2e-typed-key');
  await wb.conversationShows('the kept prompt to run and finish', /Hello, world![\s\S]*Done\s*1 round · [\d,]+ in/);
  await wb.conversationShows('the card to say the key was saved', /API key saved: your request was sent/);
  const requests = await fake.messages();
  assert.equal(requests.length, 1, 'one request, after the key was set');
  assert.ok(JSON.stringify(requests[0].body).includes(prompt), 'the prompt the user typed before the key, not retyped');
  assert.equal(await frame.locator('.entry.user').count(), 1, 'the prompt shows once');

  log('a follow-up meets a 401: Set API Key first on the card, and in a notification');
  await wb.sidebarWidth(300);
  await wb.ask(followUp);
  const refused = await wb.openCard('retry', 'refused the API key');
  assert.match(await refused.innerText(), /The model API refused the API key \(HTTP 401\)/);
  await frame.locator('.entry.result.error').last().waitFor();
  const said = await frame.locator('#log').innerText();
  assert.doesNotMatch(said, /authentication_error|x-api-key/, 'the API\'s raw words are not shown above the card (issue 31)');
  assert.equal(said.match(/refused the API key/g)?.length, 1, 'said once, in words, on the card');
  assert.deepEqual(
    await refused.locator('button').evaluateAll((buttons) => buttons.map((b) => b.dataset.action)),
    ['setKey', 'retry', 'showOutput'],
    'Set API Key first',
  );
  const toast = wb.toast('the model API refused the API key');
  await toast.waitFor();
  await toast.locator('.monaco-button', { hasText: /^Set API Key$/ }).waitFor();
  await wb.shot('31-key-refused-300px', wb.sidebar);
  await wb.sidebarWidth(440);
  await wb.shot('31-key-refused-440px');

  log('a new key from the card, then Retry: the same prompt runs');
  await refused.locator('button[data-action="setKey"]').click();
  await wb.answerInput('Anthropic API key', 'sk-ant-e2e-second-key');
  const retry = await wb.openCard('retry', 'refused the API key');
  await retry.locator('button[data-action="retry"]').click();
  await wb.conversationShows('the follow-up to run and finish', /checks that greet says[\s\S]*Done\s*1 round/);
  const asked = await fake.messages();
  assert.equal(asked.length, 3, 'the first prompt, the refused follow-up, and its retry');
  assert.ok(JSON.stringify(asked[2].body).includes(followUp), 'the retry sent the same prompt');
  passed();
});
