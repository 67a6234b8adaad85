// The conversation view in a real VS Code (issue 12): a run asked from the view's box with the
// active file as context, a review accepted from its card, a command approved from its card, the
// model's Markdown answer rendered (a heading, a list, a code block), the token usage, a
// follow-up in the same session (its edit accepted with "Accept All in This Run"), the same
// conversation and plan edits after a window reload (plansight/history), and a new session. The fake API replays fixtures/vscode-e2e/conversation.json.
// Issue 31: the settled card shows what was written and, after the reload, the same line-level
// diff; the code block's def and greet in the colours the editor gives them in hello.py; the
// list_files row counts the files; at 440 px and 300 px the composer keeps one row of buttons.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { log, openWorkbench, repoDir, startFakeApi } from './harness.mjs';
import { WAIT, keptForReload, waitFor, workbench } from './workbench.mjs';

const recording = join(repoDir, 'fixtures/vscode-e2e/conversation.json');
const script = JSON.parse(readFileSync(recording, 'utf8'));
const FOLLOW_UP = 'Now add a docstring to greet.';

test('the conversation view: ask, review and approve from cards, Markdown, a follow-up', { timeout: 8 * 60_000 }, async (t) => {
  let fake;
  const { dirs, page, passed } = await openWorkbench(t, {
    name: 'conversation',
    env: { ANTHROPIC_API_KEY: 'e2e-test-key' },
    async beforeStart(sandbox, cleanups) {
      fake = await startFakeApi(recording, join(sandbox.root, 'fakeapi.log'));
      cleanups.push(fake.stop);
      return { settings: { 'plansight.baseUrl': fake.baseUrl } };
    },
  });
  const wb = workbench(page);
  const hello = () => readFileSync(join(dirs.workspace, 'hello.py'), 'utf8');
  await wb.openPlansight();
  await wb.quickOpen('hello.py');

  log('asking from the conversation view (a two-line prompt: Shift+Enter is a new line)');
  await wb.ask(`${script.prompt}\nKeep the names as they are.`, { showing: 'hello.py' });
  const frame = await wb.conversation();
  const prompt = frame.locator('.entry.user .bubble').first();
  await prompt.waitFor();
  assert.equal(await prompt.innerText(), `${script.prompt}\nKeep the names as they are.`, 'the prompt is shown as typed, without the editor-context markup');
  assert.match(await frame.locator('.entry.user .chips').first().innerText(), /hello\.py/, 'the context goes along as a chip');

  log('the edit arrives as a card (and a diff beside); accepting it from the card');
  const review = await wb.openCard('review', 'hello.py');
  assert.match(await review.innerText(), /def greet\(name: str\) -> str:/, 'the card shows the change');
  await wb.diffTab().waitFor();
  await review.locator('button[data-action="accept"]').click();
  await waitFor('hello.py on disk to have the type hints', () => hello().includes('def greet(name: str) -> str:'));
  await waitFor('the review card to say accepted', async () => /Accepted/.test(await frame.locator('.card-review').first().innerText()));
  // What the settled card shows, line by line, to compare with the card after a reload (issue 31).
  const liveDiff = await frame.locator('.card-review pre.diff').first().innerText();
  assert.match(liveDiff, /def greet\(name: str\) -> str:/, 'the settled card shows what was written');

  log('the test command arrives as a card; approving it');
  const approval = await wb.openCard('approval', 'unittest');
  await approval.locator('button[data-action="approve"]').click();
  await wb.conversationShows('the bash row with its result', /bash\s+\$ python3 -m unittest -q test_hello/);

  log('waiting for the Markdown answer and the token usage');
  await wb.conversationShows('the run to finish with its usage', /Done\s*\d+ rounds · [\d,]+ in \([\d,]+ cached[^)]*\) · [\d,]+ out/);
  const answer = frame.locator('.entry.text.md').last();
  assert.equal(await answer.locator('h2').innerText(), 'What changed', 'a heading');
  assert.equal(await answer.locator('ul > li').count(), 2, 'a list');
  assert.match(await answer.locator('pre > code').innerText(), /def greet\(name: str\) -> str:/, 'a code block');
  assert.ok(!(await answer.innerText()).includes('##'), 'no raw Markdown');
  const tool = frame.locator('details.tool', { hasText: 'read_file' }).first();
  await tool.locator('summary').click();
  await waitFor('the tool row to expand to its input and result', async () => /Result/.test(await tool.innerText()));
  await tool.locator('summary').click();
  await answer.scrollIntoViewIfNeeded();
  await wb.shot('08-window-conversation');

  log('code blocks take the editor\'s colours: def and greet as hello.py shows them');
  const editorColour = (word) =>
    page.locator('.editor-group-container .monaco-editor .view-lines span > span', { hasText: new RegExp(`^${word}$`) }).first().evaluate((e) => getComputedStyle(e).color);
  const blockColour = (cls, word) =>
    answer.locator(`pre > code .hl-${cls}`, { hasText: new RegExp(`^${word}$`) }).first().evaluate((e) => getComputedStyle(e).color);
  await waitFor('the editor to colour def as a keyword (its grammar loaded)', async () => (await editorColour('def')) !== (await editorColour('greet')));
  assert.equal(await blockColour('keyword', 'def'), await editorColour('def'), 'def: the editor\'s keyword colour');
  assert.equal(await blockColour('function', 'greet'), await editorColour('greet'), 'greet: the editor\'s function colour');

  log('the list_files row says how many files it found');
  const listing = frame.locator('details.tool', { hasText: 'list_files' }).first();
  assert.match(await listing.locator('summary').innerText(), /→ 2 files\b/, 'the row counts the files (not "→ hello.py")');

  log('a follow-up in the same session; its edit is accepted with Accept All in This Run');
  const before = (await fake.messages()).length;
  // Typed in two parts, the first kept by the workbench before the rest: a reload once brought
  // such a part back as a draft, the prompt long sent (issue 31).
  const FRAGMENT = FOLLOW_UP.slice(0, 24);
  const box = frame.locator('#prompt');
  await box.click();
  await box.pressSequentially(FRAGMENT);
  await waitFor('the part typed so far kept for a reload', () => keptForReload(page, dirs.userData, FRAGMENT));
  await box.pressSequentially(FOLLOW_UP.slice(FRAGMENT.length));
  await box.press('Enter');
  const second = await wb.openCard('review', 'hello.py');
  await second.locator('button[data-action="acceptAll"]').click();
  await waitFor('hello.py on disk to have the docstring', () => hello().includes('"""Return a friendly greeting for name."""'));
  await wb.conversationShows('the follow-up to finish', /Added a docstring[\s\S]*Done\s*\d+ rounds/);
  await wb.conversationShows('the auto-accept card, off with the run', /Accepted every edit of this run/);
  const followUp = (await fake.messages()).slice(before).map((r) => JSON.stringify(r.body ?? ''));
  assert.ok(followUp[0].includes(FOLLOW_UP) && followUp[0].includes('Keep the names as they are.'), 'the follow-up continues the conversation');
  log(`the follow-up took ${followUp.length} requests`);

  log('the plan shows 2/2 with the edits under their items (the follow-up ran with no item open)');
  await wb.planAt('2/2', [['codicon-pass'], ['codicon-pass'], ['codicon-files']]);
  const editRows = await wb.pane('Plan').locator('.monaco-list-row[aria-level="2"]').count();
  assert.ok(editRows >= 1, 'the first edit is under its item');
  await wb.shot('09-sidebar-conversation', wb.sidebar);

  log('each server log line is in the Plansight output once');
  const outputLog = readdirSync(join(dirs.userData, 'logs'), { recursive: true })
    .map(String)
    .find((p) => p.endsWith(join('plansight.plansight', 'Plansight.log')));
  assert.ok(outputLog, 'the extension writes its output channel to the logs folder');
  const output = readFileSync(join(dirs.userData, 'logs', outputLog), 'utf8');
  const started = output.split('\n').filter((line) => line.includes('plansight.lsp.server: workspace '));
  assert.equal(started.length, 1, `the server's first line, once: ${JSON.stringify(started)}`);
  assert.match(started[0], /\[info\] plansight\.lsp\.server: workspace /, 'at its level, with one timestamp');

  log('a prompt typed and not sent: it comes back after the reload, the sent follow-up does not (issue 31)');
  const DRAFT = 'Then rename shout to yell';
  const composer = frame.locator('#prompt');
  assert.equal(await composer.inputValue(), '', 'the sent follow-up left the box');
  await composer.click();
  await composer.pressSequentially(DRAFT);
  // A reload the instant after the last keystroke can come before the write (seen: the box empty).
  await waitFor('the draft kept for a reload', () => keptForReload(page, dirs.userData, DRAFT));

  log('reloading the window: the conversation and the plan come back from plansight/history');
  await page.reload();
  await page.locator('.monaco-workbench').waitFor({ timeout: WAIT });
  await wb.openPlansight();
  await waitFor('the unsent prompt back in the box, and nothing of the sent one', async () => {
    const kept = await (await wb.conversation()).locator('#prompt').inputValue();
    if (kept !== DRAFT) throw new Error(`the box holds ${JSON.stringify(kept)}`);
    return true;
  });
  await wb.conversationShows('the past runs after the reload', /Add type hints to hello\.py[\s\S]*What changed[\s\S]*Now add a docstring[\s\S]*Added a docstring/);
  const reloaded = await wb.conversation();
  assert.equal(await reloaded.locator('.entry.text.md h2').first().innerText(), 'What changed', 'the Markdown answer again');
  assert.equal(await reloaded.locator('.entry.user').count(), 2, 'both prompts, once each');
  await wb.planAt('2/2', [['codicon-pass'], ['codicon-pass'], ['codicon-files']]);
  await waitFor('the first edit under its item again', async () =>
    (await wb.pane('Plan').locator('.monaco-list-row[aria-level="2"]', { hasText: 'hello.py' }).count()) >= 1,
  );
  await wb.shot('16-window-history-after-reload');
  log('the reloaded edit card reads line by line as the live one did (issue 31)');
  // The changed lines, each removed line beside its added one: the context around them differs
  // (the live card had the file, the history has the edit's own text).
  const changed = (diff) => diff.split('\n').filter((line) => /^[+−]/.test(line));
  const reloadedDiff = await reloaded.locator('.card-pastReview pre.diff').first().innerText();
  assert.deepEqual(changed(reloadedDiff), changed(liveDiff), 'the same line-level diff after the reload');
  assert.equal(changed(liveDiff).length, 4, `two lines changed, each −/+: ${liveDiff}`);
  await reloaded.locator('.card-pastReview').first().scrollIntoViewIfNeeded();
  // Scrolled up to read the card, nothing new below: no "Jump to latest" over its last line.
  const notCovered = async (view, width) => {
    const line = view.locator('.card-pastReview .outcome').first();
    await line.waitFor();
    const jump = view.locator('#jump');
    const over = async () => {
      if (await jump.isHidden()) return false;
      const [a, b] = [await line.boundingBox(), await jump.boundingBox()];
      return !!a && !!b && a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
    };
    assert.equal(await over(), false, `at ${width}, Jump to latest covers the card's "${await line.innerText()}"`);
  };
  await notCovered(reloaded, '440 px');
  await wb.shot('31-history-card-440px', wb.sidebar);
  await wb.sidebarWidth(300);
  await waitFor('the composer on one row at 300 px, nothing past the view\'s edge', async () => {
    const layout = await wb.composerLayout();
    const wide = await reloaded.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);
    if (layout.rows !== 1 || layout.pastTheEdge.length || wide) throw new Error(JSON.stringify({ layout, wide }));
    return true;
  });
  await reloaded.locator('.card-pastReview').first().scrollIntoViewIfNeeded();
  await notCovered(reloaded, '300 px');
  await wb.shot('31-history-card-300px', wb.sidebar);

  log('New Session from the conversation');
  const frameNow = await wb.conversation();
  await frameNow.locator('#prompt').fill(''); // the draft is the user's: cleared by hand
  await frameNow.locator('#newSession').click();
  await waitFor('the plan to empty', async () => (await wb.planItems()).length === 0);
  await wb.conversationShows('the session break', /New session: the conversation, plan and scratchpad start over/);
  passed();
});
