/**
 * Plansight for VS Code: renders what the Plansight language server sends (the conversation,
 * plan, scratchpad, edit reviews, command approvals) and forwards what the user decides.
 */
import * as vscode from 'vscode';
import { registerChanges } from './changes/changesView';
import { DemoRunner } from './commands/demo';
import { registerModelCommands } from './commands/models';
import { editorContext, registerRunCommands, RunController, runningContextKey } from './commands/run';
import { apiKeyCard, approvalCard, autoAcceptCard, registerCoreCards, reviewCard } from './conversation/cards';
import type { ComposerContext } from './conversation/composer';
import { ConversationView, draftStore, registerConversationView } from './conversation/conversationView';
import { editFromEvent, editsFromHistory, loadHistory } from './conversation/history';
import { instructionsHtml } from './conversation/instructions';
import { ConversationModel } from './conversation/model';
import { ConversationRenderer } from './conversation/render';
import { registerRunCards, retryCard, serverDownCard } from './conversation/runCards';
import { progressText } from './plan/planModel';
import { PlanReviews } from './plan/planReview';
import { planReviewCard, renderPlanReviewCard } from './plan/planReviewModel';
import { registerPlanView } from './plan/planView';
import { applyWorkerEvent, isWorkerEvent } from './plan/workersModel';
import { Questions } from './questions/askUser';
import { questionCard, renderQuestionCard } from './questions/questionModel';
import { CommandApprovals } from './review/approveCommand';
import { ReviewManager } from './review/reviewManager';
import { registerScratchpadView } from './scratchpad/scratchpadView';
import { PlansightServer, readSettings } from './server/client';
import { settingsDiffer, userValue } from './server/userSettings';
import { onDidChangePython } from './server/python';
import { readOnlyStatus } from './server/secondWindow';
import { SessionStore } from './session';
import { registerSessionCommands, SessionsUi } from './sessions/sessions';
import { sessionOf, sessionTitle } from './sessions/sessionsModel';
import { registerStatusBar } from './status/statusBar';
import { McpUi } from './mcp/mcp';
import { mcpToolCard, renderMcpToolCard } from './mcp/mcpModel';
import type { McpServerStatus } from './protocol';

let server: PlansightServer | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel('Plansight', { log: true });
  const store = new SessionStore();
  const model = new ConversationModel();
  const renderer = new ConversationRenderer();
  registerCoreCards(renderer);
  registerRunCards(renderer);
  renderer.registerCard(planReviewCard, renderPlanReviewCard);
  renderer.registerCard(questionCard, renderQuestionCard);
  renderer.registerCard(mcpToolCard, renderMcpToolCard);
  const conversation = new ConversationView(context.extensionUri, model, renderer, output, draftStore(context, output));
  registerConversationView(context, conversation);
  const surface = { model, visible: () => conversation.visible, onDidChangeVisibility: conversation.onDidChangeVisibility };

  server = new PlansightServer(context, output, store);
  const reviews = new ReviewManager(store, output, surface);
  const approvals = new CommandApprovals(output, store, surface);
  const planReviews = new PlanReviews(output, store, surface);
  const questions = new Questions(output, store, surface);
  const mcp = new McpUi(output, server, surface);
  context.subscriptions.push(output, server, reviews, approvals, planReviews, questions, mcp);
  mcp.registerCommands(context);
  reviews.registerCommands(context);
  approvals.registerCommands(context);
  planReviews.registerCommands(context);

  registerPlanView(context, store, server, reviews);
  const changes = registerChanges(context, server, store, (text) =>
    model.addNotice({ icon: 'history', text: text.charAt(0).toUpperCase() + text.slice(1) }),
  );
  registerScratchpadView(context, store);
  registerStatusBar(context, store);

  const running = server;
  let startedWith = readSettings();
  let demo: DemoRunner | undefined;
  const runs = new RunController({
    server,
    store,
    model,
    output,
    visible: () => conversation.visible,
    beforeAsk: () => demo?.leave() ?? Promise.resolve(),
  });
  demo = new DemoRunner(context, server, runs, output);
  context.subscriptions.push(demo, runs);
  registerRunCommands(context, { server, store, runs, model, focusConversation: () => conversation.reveal(true) });
  registerModelCommands(context, server, store);
  const sessions = new SessionsUi({
    server,
    store,
    model,
    output,
    draw: (html) => {
      conversation.setSessions(html);
      updateComposer(); // the status line names a run going on in another session
    },
  });
  registerSessionCommands(context, sessions);

  let lastNewSession = 0;
  conversation.setHandlers({
    send: (text, includeContext, mode) => runs.ask(text, includeContext ? editorContext() : {}, { mode }),
    cancel: () => runs.cancel(),
    newSession: () => {
      // Once per key press: the view's own Ctrl+Alt+N and a keybinding may both deliver it.
      const now = Date.now();
      if (now - lastNewSession < 1000) return undefined;
      lastNewSession = now;
      return vscode.commands.executeCommand('plansight.newSession');
    },
    session: (action, id) => sessions.action(action, id),
  });
  context.subscriptions.push(
    conversation.registerCardActions(reviewCard, (card, action, fields) => reviews.cardAction(card, action, fields)),
    conversation.registerCardActions(autoAcceptCard, (card, action) => reviews.autoAcceptCardAction(card, action)),
    conversation.registerCardActions(approvalCard, (card, action, fields) => approvals.cardAction(card, action, fields)),
    conversation.registerCardActions(apiKeyCard, (card, action) => runs.apiKeyCardAction(card, action)),
    conversation.registerCardActions(retryCard, (card, action) => runs.retryCardAction(card, action)),
    conversation.registerCardActions(serverDownCard, (card, action) => runs.serverDownCardAction(card, action)),
    conversation.registerCardActions(planReviewCard, (card, action, fields) => planReviews.cardAction(card, action, fields)),
    conversation.registerCardActions(questionCard, (card, action) => questions.cardAction(card, action)),
    conversation.registerCardActions(mcpToolCard, (card, action, fields) => mcp.cardAction(card, action, fields)),
  );

  server.setHandlers({
    reviewEdit: (params, token) => reviews.review(params, token),
    approveCommand: (params, token) => approvals.request(params, token),
    reviewPlan: (params, token) => planReviews.request(params, token),
    askUser: (params, token) => questions.request(params, token),
    approveTool: (params, token) => mcp.approveTool(params, token),
    approveMcpServer: (params, token) => mcp.trust(params, token),
    event: (event) => {
      if (event.type === 'mcp') {
        mcp.update((event as { servers: McpServerStatus[] }).servers ?? []);
        return;
      }
      if (event.type === 'history') {
        sessions.historyEvent(event['runs'], sessionOf(event)); // a session opened
        return;
      }
      if (event.type === 'runStarted' || event.type === 'runFinished' || event.type === 'planProposed') {
        void sessions.refresh(); // a session's status changed (or its title, from its first prompt)
      }
      if (isWorkerEvent(event)) {
        // A worker's events carry its own session's id: they are drawn on the plan item.
        store.setWorkers(applyWorkerEvent(store.workers, event));
        return;
      }
      if (!store.sessions.isShown(sessionOf(event))) {
        return; // another session's run: its list row says how it goes, its conversation is its own
      }
      model.apply(event);
      changes.onEvent(event);
      const edit = editFromEvent(event);
      if (edit && !store.findEdit(edit.id)) {
        store.addEdit(edit); // reviewed elsewhere (autoApprove.edits): still under its item
      }
      if (event.type === 'runFinished') {
        // The server asks only during a run: whatever is still open has nobody waiting for it
        // (a server that cancels its requests has closed them already).
        reviews.runFinished();
        approvals.cancelAll('The run ended before the command was approved.');
        planReviews.cancelAll();
        questions.cancelAll();
        mcp.cancelAll('The run ended before the tool call was approved.');
      }
    },
    history: ({ runs: past }) => {
      // Once per window: a server restarted mid-window (new settings, a key) changes nothing shown.
      if (model.runs.length > 0) {
        return;
      }
      loadHistory(model, past);
      for (const edit of editsFromHistory(past)) {
        if (!store.findEdit(edit.id)) {
          store.addEdit(edit);
        }
      }
      output.info(`History: ${past.length} earlier runs.`);
    },
  });

  // The composer's status line and context chip follow the session and the editor.
  const composerContext = (): ComposerContext | null => {
    const editor = editorContext();
    if (!editor.path) {
      return null;
    }
    return {
      path: editor.path,
      ...(editor.selection ? { selection: { startLine: editor.selection.startLine, endLine: editor.selection.endLine } } : {}),
    };
  };
  const updateComposer = (): void => {
    const progress = progressText(store.todos);
    const elsewhere = store.sessions.runningElsewhere();
    const status = store.waitingFor
      ? `Plansight is ${store.waitingFor}.`
      : store.running && elsewhere && store.sessions.current?.status === 'idle'
        ? `Working in another session: “${sessionTitle(elsewhere)}”.`
        : store.running
          ? `Working…${progress ? ` ${progress}` : ''}`
          : store.serverStatus === 'failed' || store.serverStatus === 'crashed'
            ? 'The Plansight server is not running: your next request starts it (see the Plansight output).'
            : store.readOnly && store.serverStatus === 'running'
              ? readOnlyStatus
              : '';
    conversation.setState(store.running, status, composerContext());
  };
  updateComposer();

  context.subscriptions.push(
    store.onDidChange((change) => {
      if (change === 'running') {
        void vscode.commands.executeCommand('setContext', runningContextKey, store.running);
      }
      if (change === 'instructions') {
        conversation.setInstructions(instructionsHtml(store.instructions));
      }
      if (change === 'waiting') {
        // For the approve shortcut (package.json's keybindings).
        void vscode.commands.executeCommand('setContext', 'plansight.approvalOpen', store.waiting.approvals > 0);
      }
      if (change === 'server' && store.serverStatus === 'running') {
        void sessions.serverStarted(); // a (re)started server: its current session is shown
      }
      if (change === 'server' && store.serverStatus !== 'running' && store.serverStatus !== 'starting') {
        reviews.cancelAll('The Plansight server stopped.');
        approvals.cancelAll('The Plansight server stopped.');
        planReviews.cancelAll();
        questions.cancelAll();
        mcp.cancelAll('The Plansight server stopped.');
        mcp.update([]);
        model.serverStopped(store.serverCrash);
      }
      updateComposer();
    }),
    vscode.window.onDidChangeActiveTextEditor(updateComposer),
    vscode.window.onDidChangeTextEditorSelection(updateComposer),
    vscode.commands.registerCommand('plansight.runDemo', () => demo?.run()),
    vscode.commands.registerCommand('plansight.restartServer', () => running.restart()),
    vscode.commands.registerCommand('plansight.showOutput', () => output.show()),
    vscode.commands.registerCommand('plansight.showConversation', () => conversation.reveal(false)),
    vscode.commands.registerCommand('plansight.focusConversation', () => conversation.reveal(true)),
    vscode.commands.registerCommand('plansight.answerQuestion', () => questions.answerOldest()),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('plansight') || e.affectsConfiguration('plansight.review')) {
        return;
      }
      // Only a change in what the server starts with restarts it: a workspace's value of a
      // user-level setting (say `plansight.python` written into .vscode/settings.json by a
      // command) changes nothing the server gets, so it neither restarts nor ends a run.
      const now = readSettings();
      if (!settingsDiffer(now, startedWith)) {
        return;
      }
      startedWith = now;
      if (store.serverStatus !== 'stopped') {
        output.info('Settings changed: restarting the server.');
        void running.restart();
      }
    }),
  );
  void onDidChangePython(() => {
    const configured = userValue(vscode.workspace.getConfiguration('plansight'), 'python', '');
    if (!configured.trim()) {
      output.info('The Python interpreter changed: restarting the server.');
      void running.restart();
    }
  }).then((disposable) => disposable && context.subscriptions.push(disposable));
  void vscode.commands.executeCommand('setContext', runningContextKey, false);
  void server.start().then(() => {
    void mcp.refresh();
    return demo?.resumePending();
  });
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
