/**
 * The conversation webview's script (bundled to dist/conversation.js, loaded by nonce). It
 * only places the HTML fragments the extension renders, keeps what the user is doing while a
 * fragment is replaced (open details, text typed in a card, the scroll position), and turns
 * the user's input into messages: no agent logic, no Markdown, no HTML of its own.
 */
import { canSend, composerKey, type ComposerContext, contextLabel, type FromWebview, sendLabel, type ToWebview } from '../composer';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): { draft?: string; planFirst?: boolean } | undefined;
  setState(state: { draft?: string; planFirst?: boolean }): void;
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

let running = false;
let context: ComposerContext | null = null;
/** The user dropped the context chip for the next message. */
let dropContext = false;
/** "Plan first": requests go out in plan mode (kept until the user turns it off). */
let planFirst = vscode.getState()?.planFirst === true;

function post(message: FromWebview): void {
  vscode.postMessage(message);
}

function atBottom(): boolean {
  return document.documentElement.scrollHeight - window.scrollY - window.innerHeight < 40;
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
  const follow = atBottom();
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
  }
  welcome.hidden = log.childElementCount > 0;
  if (follow && message.type !== 'state') {
    window.scrollTo(0, document.documentElement.scrollHeight);
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
  send.hidden = running;
  stop.hidden = !running;
  send.disabled = !canSend(prompt.value, running);
  planFirstButton.setAttribute('aria-pressed', String(planFirst));
  planFirstButton.classList.toggle('on', planFirst);
  sendText.textContent = sendLabel(planFirst);
}

function saveDraft(): void {
  vscode.setState({ draft: prompt.value, planFirst });
}

function submit(): void {
  if (!canSend(prompt.value, running)) {
    return;
  }
  post({ type: 'send', text: prompt.value, includeContext: !dropContext, mode: planFirst ? 'plan' : 'act' });
  prompt.value = '';
  dropContext = false;
  saveDraft();
  renderComposer();
}

prompt.addEventListener('keydown', (event) => {
  if (composerKey(event) === 'send') {
    event.preventDefault();
    submit();
  }
});
prompt.addEventListener('input', () => {
  saveDraft();
  renderComposer();
});
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

log.addEventListener('click', (event) => {
  const target = event.target as Element;
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

prompt.value = vscode.getState()?.draft ?? '';
renderComposer();
// Ask for the conversation: messages sent before this script ran are lost.
post({ type: 'ready' });
