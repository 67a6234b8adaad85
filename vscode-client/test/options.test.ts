import { describe, expect, it } from 'vitest';
import { expandPath, initializationOptions, type PlansightSettings, serverEnv } from '../src/server/options';

const settings: PlansightSettings = {
  model: '',
  baseUrl: '',
  python: '',
  maxRounds: 0,
  autoApproveEdits: false,
  autoApproveCommands: true,
};

describe('initializationOptions', () => {
  it('always sends autoApprove; model and maxRounds only when set', () => {
    expect(initializationOptions(settings)).toEqual({ autoApprove: { edits: false, commands: true } });
    expect(initializationOptions({ ...settings, model: ' claude-x ', maxRounds: 30 })).toEqual({
      model: 'claude-x',
      maxRounds: 30,
      autoApprove: { edits: false, commands: true },
    });
  });

  it('sends plansDirectory and parallel.max only when they differ from the server default', () => {
    expect(initializationOptions({ ...settings, plansDirectory: '.plansight/plans' }).plansDirectory).toBeUndefined();
    expect(initializationOptions({ ...settings, plansDirectory: 'docs/plans' }).plansDirectory).toBe('docs/plans');
    expect(initializationOptions({ ...settings, plansDirectory: '  ' }).plansDirectory).toBe(false);
    expect(initializationOptions({ ...settings, parallelMax: 3 }).parallel).toBeUndefined();
    expect(initializationOptions({ ...settings, parallelMax: 5 }).parallel).toEqual({ max: 5 });
    expect(initializationOptions({ ...settings, parallelMax: 0 }).parallel).toBeUndefined();
  });

  it('sends plansight.sandbox.enabled as the server option sandbox.enabled; auto sends nothing', () => {
    expect(initializationOptions({ ...settings, sandbox: 'auto' })).toEqual({ autoApprove: { edits: false, commands: true } });
    expect(initializationOptions({ ...settings, sandbox: 'off' }).sandbox).toEqual({ enabled: false });
    expect(initializationOptions({ ...settings, sandbox: 'required' }).sandbox).toEqual({ enabled: true });
    expect(initializationOptions({ ...settings, sandbox: 'nonsense' }).sandbox).toBeUndefined();
  });

  it("sends the demo's own storage folder", () => {
    expect(initializationOptions(settings, { baseUrl: 'http://x', storageDir: '/tmp/demo-state' })).toEqual({
      storageDir: '/tmp/demo-state',
      autoApprove: { edits: false, commands: true },
    });
  });
});

describe('serverEnv', () => {
  it('keeps the editor environment and adds the key and base URL', () => {
    const env = serverEnv({ PATH: '/bin', ANTHROPIC_API_KEY: 'from-env', GONE: undefined }, { baseUrl: 'http://x' }, {
      apiKey: 'secret',
    });
    expect(env).toEqual({
      PATH: '/bin',
      ANTHROPIC_API_KEY: 'secret',
      ANTHROPIC_BASE_URL: 'http://x',
      PYTHONUNBUFFERED: '1',
    });
  });
  it('keeps an inherited key when none is stored, and overrides the base URL for the demo', () => {
    const env = serverEnv({ ANTHROPIC_API_KEY: 'from-env' }, { baseUrl: 'http://settings' }, { baseUrl: 'http://demo' });
    expect(env['ANTHROPIC_API_KEY']).toBe('from-env');
    expect(env['ANTHROPIC_BASE_URL']).toBe('http://demo');
  });
  it('sets no base URL when none is configured', () => {
    expect(serverEnv({}, { baseUrl: ' ' })['ANTHROPIC_BASE_URL']).toBeUndefined();
  });
});

describe('expandPath', () => {
  it('expands ~, ${userHome} and ${workspaceFolder}', () => {
    expect(expandPath('~/venv/bin/python', '/w', '/home/u')).toBe('/home/u/venv/bin/python');
    expect(expandPath('${workspaceFolder}/.venv/bin/python', '/w', '/home/u')).toBe('/w/.venv/bin/python');
    expect(expandPath('${userHome}/py', undefined, '/home/u')).toBe('/home/u/py');
    expect(expandPath(' python3 ', undefined, '/h')).toBe('python3');
  });
});

describe('autoApprove.sandboxedCommands', () => {
  it('is sent only when the setting is on', () => {
    expect(initializationOptions({ ...settings, autoApproveSandboxedCommands: true }).autoApprove).toEqual({
      edits: false,
      commands: true,
      sandboxedCommands: true,
    });
    expect(initializationOptions({ ...settings, autoApproveSandboxedCommands: false }).autoApprove).toEqual({
      edits: false,
      commands: true,
    });
  });
});
