// The contributions the issue asks for, checked against package.json.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(__dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const contributes = pkg.contributes;

describe('package.json', () => {
  it('contributes the Plansight container: the conversation first, then the plan, changes and scratchpad', () => {
    expect(contributes.viewsContainers.activitybar[0].id).toBe('plansight');
    expect(contributes.views.plansight.map((v: { id: string; type?: string }) => [v.id, v.type ?? 'tree'])).toEqual([
      ['plansight.conversation', 'webview'],
      ['plansight.plan', 'tree'],
      ['plansight.changes', 'tree'],
      ['plansight.scratchpad', 'webview'],
    ]);
  });

  it('offers Undo Step on each plan item and on each step of the Changes view, Undo File on each file', () => {
    const items = contributes.menus['view/item/context'] as { command: string; when: string; group: string }[];
    const where = (command: string) => items.filter((m) => m.command === command).map((m) => m.when);
    expect(where('plansight.changes.undoStep')).toEqual(
      expect.arrayContaining([expect.stringMatching(/view == plansight\.plan && viewItem =~/), expect.stringMatching(/changes\.step/)]),
    );
    expect(where('plansight.changes.undoFile').every((w) => w.includes('changes\\.file'))).toBe(true);
    const titles = contributes.menus['view/title'] as { command: string; when: string }[];
    expect(titles.some((m) => m.command === 'plansight.changes.restoreCheckpoint' && m.when === 'view == plansight.changes')).toBe(true);
  });

  it('lets several plan items be picked for Run in Parallel, and puts worker actions on the items', () => {
    const items = contributes.menus['view/item/context'] as { command: string; when: string; group: string }[];
    const where = (command: string) => items.filter((m) => m.command === command).map((m) => m.when);
    expect(where('plansight.plan.runParallel')).toEqual([expect.stringContaining('view == plansight.plan')]);
    expect(where('plansight.plan.cancelWorker').every((w) => w.includes('worker\\.running'))).toBe(true);
    for (const command of ['plansight.plan.takeIn', 'plansight.plan.dropChanges']) {
      expect(where(command).length, command).toBeGreaterThan(0);
      expect(where(command).every((w) => w.includes('worker\\.changes')), command).toBe(true);
    }
    const titles = contributes.menus['view/title'] as { command: string; when: string }[];
    expect(titles.some((m) => m.command === 'plansight.plan.runParallel' && m.when === 'view == plansight.plan')).toBe(true);
    const viewSource = readFileSync(join(root, 'src', 'plan', 'planView.ts'), 'utf8');
    expect(viewSource).toMatch(/canSelectMany: true/);
  });

  it('packages the webview script, its icons and its style', () => {
    const ignore = readFileSync(join(root, '.vscodeignore'), 'utf8');
    for (const kept of ['!dist/extension.js', '!dist/conversation.js', '!dist/codicons/**', '!media/**']) {
      expect(ignore).toContain(kept);
    }
  });

  it('contributes the commands, with icons', () => {
    const commands = new Map<string, { title: string; icon?: string }>(
      contributes.commands.map((c: { command: string }) => [c.command, c]),
    );
    for (const id of [
      'plansight.ask',
      'plansight.cancel',
      'plansight.newSession',
      'plansight.setApiKey',
      'plansight.acceptEdit',
      'plansight.rejectEdit',
      'plansight.runDemo',
    ]) {
      expect(commands.get(id)?.title, id).toBeTruthy();
      expect(commands.get(id)?.icon, id).toMatch(/^\$\([a-z-]+\)$/);
    }
  });

  it('declares every command used in a menu or keybinding', () => {
    const declared = new Set(contributes.commands.map((c: { command: string }) => c.command));
    const used = [
      ...Object.values(contributes.menus).flat(),
      ...contributes.keybindings,
    ].map((m) => (m as { command: string }).command);
    for (const command of used) {
      expect(declared.has(command), command).toBe(true);
    }
  });

  it('shows Accept / Reject in the diff editor title only during a review', () => {
    const titles = contributes.menus['editor/title'];
    expect(titles.map((m: { command: string }) => m.command)).toEqual(['plansight.acceptEdit', 'plansight.rejectEdit']);
    for (const m of titles) {
      expect(m.when).toContain('plansight.reviewOpen');
    }
  });

  it('contributes plan mode where users look: Plan…, the decisions of a proposed plan, Run This Step', () => {
    const title = contributes.menus['view/title'] as { command: string; when: string; group: string }[];
    const inPlanTitle = (command: string) => title.find((m) => m.command === command && m.when.includes('view == plansight.plan'));
    for (const command of ['plansight.plan.approve', 'plansight.plan.revise', 'plansight.plan.cancelReview']) {
      expect(inPlanTitle(command)?.when, command).toContain('plansight.planReviewOpen');
      expect(inPlanTitle(command)?.group, command).toMatch(/^navigation/);
    }
    expect(inPlanTitle('plansight.planFirst')?.group).toMatch(/^navigation/);
    expect(title.some((m) => m.command === 'plansight.planFirst' && m.when.includes('plansight.conversation'))).toBe(true);
    expect(inPlanTitle('plansight.plan.openMarkdown')).toBeTruthy();
    const inline = (contributes.menus['view/item/context'] as { command: string; when: string; group: string }[]).find(
      (m) => m.command === 'plansight.plan.runStep' && m.group.startsWith('inline'),
    );
    expect(inline?.when).toContain('(pending|in_progress|failed)');
    const titles = new Map(contributes.commands.map((c: { command: string; title: string }) => [c.command, c.title]));
    expect(titles.get('plansight.planFirst')).toBe('Plan…');
    expect(titles.get('plansight.plan.revise')).toBe('Revise Plan…');
    expect(titles.get('plansight.plan.runStep')).toBe('Run This Step');
    expect(titles.get('plansight.plan.openMarkdown')).toBe('Open Plan as Markdown');
  });

  it('contributes the settings', () => {
    expect(Object.keys(contributes.configuration.properties).sort()).toEqual([
      'plansight.autoApprove.commands',
      'plansight.autoApprove.edits',
      'plansight.autoApprove.sandboxedCommands',
      'plansight.baseUrl',
      'plansight.maxRounds',
      'plansight.model',
      'plansight.parallel.max',
      'plansight.plansDirectory',
      'plansight.python',
      'plansight.review.openDiff',
      'plansight.sandbox.enabled',
      'plansight.thinking',
      'plansight.thinkingBudgetTokens',
    ]);
  });

  it('registers in code every command it declares', () => {
    const source = (dir: string): string =>
      readdirSync(dir, { withFileTypes: true })
        .map((e) => (e.isDirectory() ? source(join(dir, e.name)) : readFileSync(join(dir, e.name), 'utf8')))
        .join('\n');
    const code = source(join(root, 'src'));
    for (const { command } of contributes.commands) {
      expect(code.includes(`'${command}'`), command).toBe(true);
    }
  });
});

describe('pure modules', () => {
  it('do not import vscode', () => {
    for (const file of [
      'protocol.ts',
      'text.ts',
      'session.ts',
      'plan/planModel.ts',
      'plan/planEdits.ts',
      'conversation/model.ts',
      'conversation/render.ts',
      'conversation/cards.ts',
      'conversation/markdown.ts',
      'conversation/diff.ts',
      'conversation/page.ts',
      'conversation/composer.ts',
      'conversation/history.ts',
      'status/statusText.ts',
      'commands/prompt.ts',
      'server/options.ts',
      'server/serverLog.ts',
      'review/reviewModel.ts',
      'scratchpad/scratchpadHtml.ts',
      'sessions/sessionsModel.ts',
    ]) {
      const text = readFileSync(join(root, 'src', file), 'utf8');
      expect(text, file).not.toMatch(/from ['"]vscode['"]/);
    }
  });
});

describe('keyboard shortcuts (issue 31)', () => {
  const bindings = contributes.keybindings as { command: string; key: string; mac?: string; when?: string }[];
  const commands = new Set((contributes.commands as { command: string }[]).map((c) => c.command));

  it('binds accept, reject, approve, stop, new session and focus, each to a command that exists', () => {
    for (const command of [
      'plansight.acceptEdit',
      'plansight.rejectEdit',
      'plansight.plan.approve',
      'plansight.approveCommand',
      'plansight.cancel',
      'plansight.newSession',
      'plansight.focusConversation',
    ]) {
      expect(bindings.some((b) => b.command === command), command).toBe(true);
    }
    for (const b of bindings) {
      expect(commands.has(b.command), b.command).toBe(true);
      expect(b.when, `${b.command} has a when clause`).toBeTruthy();
    }
  });

  it('never takes a key a user types in an editor, unless the key is an unusual chord', () => {
    const unusual = /^(ctrl|cmd)\+(alt\+)?(enter|backspace|escape)$|^(ctrl|cmd)\+alt\+/;
    for (const b of bindings) {
      const guarded = /focusedView == plansight\.conversation|!textInputFocus/.test(b.when ?? '');
      expect(unusual.test(b.key) || guarded, `${b.key} → ${b.command} when ${b.when}`).toBe(true);
    }
    // A plain key (Escape) only in the Conversation view, while a run goes on.
    expect(bindings.find((b) => b.key === 'escape')?.when).toBe('plansight.running && focusedView == plansight.conversation');
  });

  it('gives Ctrl+Alt+Enter to one thing at a time: the edit, else the plan, else the command, else the question', () => {
    const yes = bindings.filter((b) => b.key === 'ctrl+alt+enter').map((b) => [b.command, b.when]);
    expect(yes).toEqual([
      ['plansight.acceptEdit', 'plansight.reviewOpen'],
      ['plansight.plan.approve', 'plansight.planReviewOpen && !plansight.reviewOpen'],
      ['plansight.approveCommand', 'plansight.approvalOpen && !plansight.reviewOpen && !plansight.planReviewOpen'],
      ['plansight.answerQuestion', 'plansight.questionOpen && !plansight.approvalOpen && !plansight.reviewOpen && !plansight.planReviewOpen'],
    ]);
  });
});
