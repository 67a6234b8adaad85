/**
 * The conversation webview's script (bundled to dist/conversation.js, loaded by nonce). It
 * only places the HTML fragments the extension renders, keeps what the user is doing while a
 * fragment is replaced (open details, text typed in a card, the scroll position), and turns
 * the user's input into messages: no agent logic, no Markdown, no HTML of its own.
 */
import {
  composerHeight,
  composerKey,
  type ComposerContext,
  contextLabel,
  type FromWebview,
  insertMention,
  mentionAt,
  onFirstLine,
  onLastLine,
  PromptRecall,
  sendAction,
  sendLabel,
  type ToWebview,
} from '../composer';
import { follow, type FollowEvent, initialFollow, revealTop, type ScrollFacts, showJump } from '../follow';

/** What the webview keeps in the workbench's state. Not the draft: the extension keeps it
 * (conversationView.ts, `draftKey`), since the workbench's copy can be an older snapshot. */
interface PageState {
  planFirst?: boolean;
  recall?: string[];
}
interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): PageState | undefined;
  setState(state: PageState): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const log = document.getElementById('log') as HTMLElement;
const welcome = document.getElementById('welcome') as HTMLElement;
const form = document.getElementById('composer') as HTMLFormElement;
const prompt = document.getElementById('prompt') as HTMLTextAreaElement;
const contextBox = document.getElementById('context') as HTMLElement;
const status = document.getElementById('status') as HTMLElement;
const send = document.getElementById('send') as HTMLButtonElement;
const stop = document.getElementById('stop') as HTMLButtonElement;
const newSession = document.getElementById('newSession') as HTMLButtonElement;
const planFirstButton = document.getElementById('planFirst') as HTMLButtonElement;
const sendText = document.getElementById('sendLabel') as HTMLElement;
const jump = document.getElementById('jump') as HTMLButtonElement;
const mentions = document.getElementById('mentions') as HTMLElement;
const sessionsBar = document.getElementById('sessions') as HTMLElement;
const instructionsLine = document.getElementById('instructions') as HTMLElement;

let running = false;
let context: ComposerContext | null = null;
/** The user dropped the context chip for the next message. */
let dropContext = false;
/** "Plan first": requests go out in plan mode (kept until the user turns it off). */
let planFirst = vscode.getState()?.planFirst === true;
/** The prompts sent (ArrowUp recalls them, as in a shell). */
const recall = new PromptRecall(vscode.getState()?.recall ?? []);

function post(message: FromWebview): void {
  vscode.postMessage(message);
}

// ----- following the run (the rules are follow.ts's) ---------------------------------------

let followState = initialFollow;
let lastTop = 0;

function scrollFacts(): ScrollFacts {
  const root = document.documentElement;
  return { scrollTop: root.scrollTop, scrollHeight: root.scrollHeight, clientHeight: root.clientHeight };
}

function scrollToTop(top: number): void {
  window.scrollTo(0, top);
  lastTop = document.documentElement.scrollTop;
}

function onFollow(event: FollowEvent): void {
  const { state, action } = follow(followState, event);
  followState = state;
  if (action.kind === 'bottom') {
    scrollToTop(document.documentElement.scrollHeight);
  } else if (action.kind === 'reveal') {
    const element = log.querySelector(`[data-entry="${CSS.escape(action.entry)}"]`);
    if (element) {
      const box = element.getBoundingClientRect();
      const at = scrollFacts();
      scrollToTop(revealTop(at, { top: box.top + at.scrollTop, height: box.height }, form.offsetHeight));
    }
  }
  jump.hidden = !showJump(followState, scrollFacts());
}

window.addEventListener('scroll', () => {
  const fromTop = lastTop;
  lastTop = document.documentElement.scrollTop;
  onFollow({ kind: 'scrolled', at: scrollFacts(), fromTop });
});
// The composer growing (wrapped status text, a longer prompt), the view resized, a card's
// details opened: while following, the newest stays in sight.
const resized = new ResizeObserver(() => onFollow({ kind: 'resized' }));
// The view itself shrinking (a view below it expanded) keeps the scroll position and changes
// no element's size that the observer sees: the window's resize says it.
window.addEventListener('resize', () => onFollow({ kind: 'resized' }));
resized.observe(log);
resized.observe(form);
resized.observe(document.documentElement);
jump.addEventListener('click', () => {
  onFollow({ kind: 'jump' });
  prompt.focus();
});

/** The ids of the entries in the log that match `selector`. */
function ids(selector: string): Set<string> {
  return new Set([...log.querySelectorAll(selector)].map((e) => e.getAttribute('data-entry') ?? ''));
}

function fragment(html: string): Element | null {
  const template = document.createElement('template');
  template.innerHTML = html;
  return template.content.firstElementChild;
}

/** Replaces `old` with `next`, carrying over open <details> and what was typed in fields. */
function replaceKeeping(old: Element, next: Element): void {
  const open = new Set([...old.querySelectorAll('details[open][data-entry]')].map((d) => d.getAttribute('data-entry')));
  if (old.matches('details[open]')) {
    open.add(old.getAttribute('data-entry'));
  }
  const typed = new Map<string, string>();
  for (const field of old.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('[data-field]')) {
    const owner = field.closest('[data-entry]')?.getAttribute('data-entry');
    typed.set(`${owner}/${field.dataset['field']}`, field.value);
  }
  const focused = document.activeElement instanceof HTMLElement && old.contains(document.activeElement) ? document.activeElement : null;
  const focusKey = focused?.dataset['field'] ? `${focused.closest('[data-entry]')?.getAttribute('data-entry')}/${focused.dataset['field']}` : null;
  old.replaceWith(next);
  for (const details of [next, ...next.querySelectorAll('details[data-entry]')]) {
    if (details instanceof HTMLDetailsElement && open.has(details.getAttribute('data-entry'))) {
      details.open = true;
    }
  }
  for (const field of next.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('[data-field]')) {
    const key = `${field.closest('[data-entry]')?.getAttribute('data-entry')}/${field.dataset['field']}`;
    const value = typed.get(key);
    if (value !== undefined) {
      field.value = value;
    }
    if (key === focusKey) {
      field.focus();
    }
  }
}

function runSection(id: string): Element | null {
  return log.querySelector(`section[data-run="${CSS.escape(id)}"]`);
}

function apply(message: ToWebview): void {
  const users = ids('.entry.user');
  const cards = ids('.card.open');
  switch (message.type) {
    case 'reset':
      log.innerHTML = message.html;
      break;
    case 'run': {
      const next = fragment(message.html);
      const old = runSection(message.id);
      if (next && old) {
        replaceKeeping(old, next);
      } else if (next) {
        log.appendChild(next);
      }
      break;
    }
    case 'entry': {
      const next = fragment(message.html);
      const section = runSection(message.runId);
      if (!next || !section) {
        break;
      }
      const old = section.querySelector(`[data-entry="${CSS.escape(message.id)}"]`);
      if (old) {
        replaceKeeping(old, next);
      } else {
        const working = section.querySelector(':scope > .working');
        section.insertBefore(next, working);
      }
      break;
    }
    case 'removeRun':
      runSection(message.id)?.remove();
      break;
    case 'state':
      running = message.running;
      context = message.context;
      status.textContent = message.status;
      status.title = message.status; // shown on one line, cut where the view is narrow
      renderComposer();
      break;
    case 'focus':
      prompt.focus();
      break;
    case 'setPrompt':
      prompt.value = message.text;
      saveDraft();
      renderComposer();
      break;
    case 'mentionFiles':
      showMentions(message.query, message.paths);
      break;
    case 'draft':
      // The draft kept over a reload: only into an empty box (never over what is being typed).
      if (!prompt.value && message.text) {
        prompt.value = message.text;
        postedDraft = message.text;
        fitPrompt();
        renderComposer();
      }
      break;
    case 'staleDraft':
      // Put back before the history showed it sent: out again, unless the user changed it.
      if (prompt.value === message.text) {
        prompt.value = '';
        postedDraft = '';
        fitPrompt();
        renderComposer();
      }
      break;
    case 'recall':
      for (const text of message.prompts) {
        if (!recall.all.includes(text)) recall.add(text);
      }
      saveDraft();
      break;
    case 'instructions':
      instructionsLine.innerHTML = message.html;
      instructionsLine.hidden = message.html === '';
      break;
    case 'sessions': {
      // Drawn anew as statuses change: a list the user opened stays open; no focus is moved.
      const open = sessionsBar.querySelector('details')?.open === true;
      sessionsBar.innerHTML = message.html;
      const details = sessionsBar.querySelector('details');
      if (details && open) {
        details.open = true;
      }
      sessionsBar.hidden = message.html === '';
      return;
    }
  }
  welcome.hidden = log.childElementCount > 0;
  if (message.type === 'reset') {
    onFollow({ kind: 'reset' });
  } else if (message.type === 'run' || message.type === 'entry' || message.type === 'removeRun') {
    const userMessage = [...ids('.entry.user')].some((id) => !users.has(id));
    const waiting = [...ids('.card.open')].filter((id) => !cards.has(id)).pop();
    onFollow({ kind: 'content', userMessage, ...(waiting !== undefined ? { waitingCard: waiting } : {}) });
  }
}

function renderComposer(): void {
  contextBox.replaceChildren();
  if (context && (context.path || context.selection) && !dropContext) {
    const chip = document.createElement('span');
    chip.className = 'chip';
    chip.title = 'Goes with your request';
    const icon = document.createElement('i');
    icon.className = `codicon codicon-${context.selection ? 'selection' : 'file'}`;
    const label = document.createElement('span');
    label.textContent = contextLabel(context);
    const remove = document.createElement('button');
    remove.type = 'button';
    remove.className = 'icon';
    remove.title = 'Do not send this with the request';
    remove.setAttribute('aria-label', 'Do not send the active file with the request');
    remove.textContent = '×';
    remove.addEventListener('click', () => {
      dropContext = true;
      renderComposer();
    });
    chip.append(icon, label, remove);
    contextBox.append(chip);
  }
  // During a run Stop stands beside Send, which queues the follow-up (Enter does the same).
  stop.hidden = !running;
  send.disabled = sendAction(prompt.value, running) === 'none';
  send.title = running && !send.disabled ? 'Queue this follow-up: it goes out when the current run ends' : '';
  planFirstButton.setAttribute('aria-pressed', String(planFirst));
  planFirstButton.classList.toggle('on', planFirst);
  sendText.textContent = sendLabel(planFirst);
}

/** The draft as the extension last heard it (it keeps the draft over a reload). */
let postedDraft = '';

function saveDraft(): void {
  vscode.setState({ planFirst, recall: [...recall.all] });
  if (prompt.value !== postedDraft) {
    postedDraft = prompt.value;
    vscode.postMessage({ type: 'draft', text: postedDraft });
  }
}

/** The box grows with its text, up to twelve lines (then it scrolls). */
function fitPrompt(): void {
  const style = getComputedStyle(prompt);
  const line = parseFloat(style.lineHeight) || 18;
  const padding = parseFloat(style.paddingTop) + parseFloat(style.paddingBottom) + parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth);
  prompt.style.height = 'auto';
  prompt.style.height = `${composerHeight(prompt.scrollHeight + parseFloat(style.borderTopWidth) + parseFloat(style.borderBottomWidth), line, padding)}px`;
}

function submit(): void {
  if (sendAction(prompt.value, running) === 'none') {
    return;
  }
  // While a run goes on, the extension queues it (shown below the run, marked queued).
  post({ type: 'send', text: prompt.value, includeContext: !dropContext, mode: planFirst ? 'plan' : 'act' });
  recall.add(prompt.value);
  prompt.value = '';
  dropContext = false;
  saveDraft();
  fitPrompt();
  renderComposer();
}

// ----- @ mentions: workspace files, the chosen path inserted as text ------------------------

let mentionQuery: { start: number; query: string } | undefined;
let mentionPaths: string[] = [];
let mentionIndex = 0;

function closeMentions(): void {
  mentionQuery = undefined;
  mentionPaths = [];
  mentions.hidden = true;
  mentions.replaceChildren();
  prompt.removeAttribute('aria-activedescendant');
}

function showMentions(query: string, paths: string[]): void {
  if (!mentionQuery || mentionQuery.query !== query) {
    return; // an answer to an older query
  }
  mentionPaths = paths;
  mentionIndex = 0;
  renderMentions();
}

function renderMentions(): void {
  mentions.replaceChildren();
  if (!mentionPaths.length) {
    const empty = document.createElement('div');
    empty.className = 'mention empty';
    empty.textContent = mentionQuery?.query ? `No file matches “${mentionQuery.query}”` : 'No files';
    mentions.append(empty);
  }
  mentionPaths.forEach((path, i) => {
    const row = document.createElement('div');
    row.className = `mention${i === mentionIndex ? ' selected' : ''}`;
    row.id = `mention-${i}`;
    row.setAttribute('role', 'option');
    row.setAttribute('aria-selected', String(i === mentionIndex));
    const icon = document.createElement('i');
    icon.className = 'codicon codicon-file';
    const name = document.createElement('span');
    name.className = 'name';
    name.textContent = path.slice(path.lastIndexOf('/') + 1);
    const dir = document.createElement('span');
    dir.className = 'dir';
    dir.textContent = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
    row.append(icon, name, dir);
    row.addEventListener('mousedown', (event) => {
      event.preventDefault(); // keep the cursor in the box
      choose(i);
    });
    mentions.append(row);
  });
  mentions.hidden = false;
  prompt.setAttribute('aria-activedescendant', `mention-${mentionIndex}`);
}

function choose(i: number): void {
  const path = mentionPaths[i];
  if (!mentionQuery || path === undefined) {
    closeMentions();
    return;
  }
  const next = insertMention(prompt.value, mentionQuery.start, prompt.selectionStart, path);
  prompt.value = next.value;
  prompt.setSelectionRange(next.cursor, next.cursor);
  closeMentions();
  saveDraft();
  fitPrompt();
  renderComposer();
}

function updateMention(): void {
  const found = prompt.selectionStart === prompt.selectionEnd ? mentionAt(prompt.value, prompt.selectionStart) : undefined;
  if (!found) {
    closeMentions();
    return;
  }
  if (mentionQuery?.query !== found.query || mentionQuery.start !== found.start) {
    mentionQuery = found;
    post({ type: 'mention', query: found.query });
  }
}

prompt.addEventListener('keydown', (event) => {
  if (!mentions.hidden && mentionPaths.length) {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      mentionIndex = (mentionIndex + step + mentionPaths.length) % mentionPaths.length;
      renderMentions();
      return;
    }
    if ((event.key === 'Enter' || event.key === 'Tab') && !event.isComposing) {
      event.preventDefault();
      choose(mentionIndex);
      return;
    }
  }
  if (!mentions.hidden && event.key === 'Escape') {
    event.preventDefault();
    closeMentions();
    return;
  }
  const plainKey = !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey && !event.isComposing;
  if (plainKey && event.key === 'ArrowUp' && prompt.selectionStart === prompt.selectionEnd && onFirstLine(prompt.value, prompt.selectionStart)) {
    const older = recall.up(prompt.value);
    if (older !== undefined) {
      event.preventDefault();
      prompt.value = older;
      prompt.setSelectionRange(0, 0);
      fitPrompt();
      renderComposer();
    }
    return;
  }
  if (plainKey && event.key === 'ArrowDown' && prompt.selectionStart === prompt.selectionEnd && onLastLine(prompt.value, prompt.selectionEnd)) {
    const newer = recall.down();
    if (newer !== undefined) {
      event.preventDefault();
      prompt.value = newer;
      prompt.setSelectionRange(newer.length, newer.length);
      fitPrompt();
      renderComposer();
    }
    return;
  }
  if (composerKey(event) === 'send') {
    event.preventDefault();
    submit();
  }
});
prompt.addEventListener('input', () => {
  recall.typed();
  saveDraft();
  fitPrompt();
  updateMention();
  renderComposer();
});
prompt.addEventListener('blur', () => closeMentions());
form.addEventListener('submit', (event) => {
  event.preventDefault();
  submit();
});
stop.addEventListener('click', () => post({ type: 'cancel' }));
newSession.addEventListener('click', () => post({ type: 'newSession' }));
planFirstButton.addEventListener('click', () => {
  planFirst = !planFirst;
  saveDraft();
  renderComposer();
});

sessionsBar.addEventListener('click', (event) => {
  const button = (event.target as Element).closest<HTMLButtonElement>('button[data-session]');
  if (!button || button.disabled) {
    return;
  }
  const action = button.dataset['session'] ?? '';
  const id = button.dataset['sessionId'];
  if (action === 'open' || action === 'new') {
    sessionsBar.querySelector('details')?.removeAttribute('open');
  }
  post({ type: 'session', action, ...(id !== undefined ? { id } : {}) });
});
// Escape closes the list (the list never takes the keyboard on its own).
sessionsBar.addEventListener('keydown', (event) => {
  const details = sessionsBar.querySelector('details');
  if (event.key === 'Escape' && details?.open) {
    event.preventDefault();
    details.open = false;
    details.querySelector('summary')?.focus();
  }
});

// The view's own shortcuts (issue 31), here because a keybinding's `focusedView` is not set
// while a webview view has the focus: Escape stops the run (unless it closed a list first),
// Ctrl/Cmd+Shift+Alt+N starts a new session when nothing runs (Ctrl+Alt+N is VS Code for the
// Web's New Untitled File: the page passes every key press on to the workbench as well).
document.addEventListener('keydown', (event) => {
  if (event.defaultPrevented || event.isComposing) {
    return;
  }
  if (event.key === 'Escape' && running && mentions.hidden) {
    event.preventDefault();
    post({ type: 'cancel' });
  } else if ((event.ctrlKey || event.metaKey) && event.altKey && event.shiftKey && event.code === 'KeyN' && !running) {
    // Kept from the workbench: in VS Code for the Web the same keys are New Window, and a
    // second, empty window opened beside the new session (seen in the shortcuts e2e).
    event.preventDefault();
    event.stopPropagation();
    post({ type: 'newSession' });
  }
});

document.addEventListener('click', (event) => {
  const target = event.target as Element;
  const command = target.closest<HTMLButtonElement>('button[data-command]');
  if (command) {
    post({ type: 'command', command: command.dataset['command'] ?? '' });
  }
});

log.addEventListener('click', (event) => {
  const target = event.target as Element;
  const copy = target.closest<HTMLButtonElement>('button[data-copy]');
  if (copy) {
    const code = copy.parentElement?.querySelector('pre code');
    post({ type: 'copy', text: code?.textContent ?? '' });
    const label = copy.lastChild;
    if (label && label.nodeType === Node.TEXT_NODE) {
      label.textContent = 'Copied';
      setTimeout(() => (label.textContent = 'Copy'), 1500);
    }
    return;
  }
  const link = target.closest('a[href]');
  if (link) {
    event.preventDefault();
    post({ type: 'openLink', href: link.getAttribute('href') ?? '' });
    return;
  }
  const button = target.closest<HTMLButtonElement>('button[data-action]');
  const entry = button?.closest('[data-entry]');
  if (!button || !entry) {
    return;
  }
  const fields: Record<string, string> = {};
  for (const field of entry.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('[data-field]')) {
    fields[field.dataset['field'] ?? ''] = field.value;
  }
  post({ type: 'action', entry: entry.getAttribute('data-entry') ?? '', action: button.dataset['action'] ?? '', fields });
});

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  if (event.data && typeof event.data.type === 'string') {
    apply(event.data);
  }
});

// The view getting focus (Plansight: Ask, a click on its title) puts the cursor in the box,
// unless the user is in a card's field.
window.addEventListener('focus', () => {
  if (!(document.activeElement instanceof HTMLInputElement || document.activeElement instanceof HTMLTextAreaElement)) {
    prompt.focus();
  }
});

// Typing while nothing in the page has the cursor (the view just took focus, its page just
// loaded) goes into the box: the key's character lands in the element focused during keydown.
document.addEventListener('keydown', (event) => {
  const nowhere = document.activeElement === null || document.activeElement === document.body;
  if (nowhere && event.key.length === 1 && !event.ctrlKey && !event.metaKey && !event.altKey) {
    prompt.focus();
  }
});

fitPrompt();
// A narrower view wraps the text (or the placeholder) onto more lines: fit the box again, or
// its last line is cut (seen at 300 px after the sidebar was narrowed from 440 px).
let promptWidth = prompt.clientWidth;
window.addEventListener('resize', () => {
  if (prompt.clientWidth !== promptWidth) {
    promptWidth = prompt.clientWidth;
    fitPrompt();
  }
});
renderComposer();
if (document.hasFocus()) {
  prompt.focus(); // the view had focus before this script ran (its window's focus event is gone)
}
// Ask for the conversation: messages sent before this script ran are lost.
post({ type: 'ready' });
