// Reading and driving the VS Code workbench through the page (what a user sees and clicks).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, screenshotDir } from './harness.mjs';

export const WAIT = Number(process.env.E2E_WAIT_MS ?? 60_000);

/** Polls `probe` until it returns a truthy value; fails with what it last saw (or threw). */
export async function waitFor(what, probe, timeout = WAIT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) {
        return last;
      }
    } catch (error) {
      last = `error: ${error.message}`;
    }
    if (Date.now() > deadline) {
      throw new Error(`Timed out after ${timeout} ms waiting for ${what}; last saw: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** In the page: whether a value in the workbench's IndexedDB storage holds `text`. */
async function storedText(text) {
  for (const { name } of await indexedDB.databases()) {
    const db = await new Promise((resolve, reject) => {
      const open = indexedDB.open(name);
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    try {
      for (const store of db.objectStoreNames) {
        const values = await new Promise((resolve) => {
          const all = db.transaction(store, 'readonly').objectStore(store).getAll();
          all.onsuccess = () => resolve(all.result);
          all.onerror = () => resolve([]);
        });
        if (values.some((v) => typeof v === 'string' && v.includes(text))) return true;
      }
    } finally {
      db.close();
    }
  }
  return false;
}

/**
 * Whether what a reload reads back holds `text`: the file the extension keeps the composer's
 * draft in (in its workspace storage folder, under `userData`), or the workbench's storage,
 * which the workbench writes lazily (a reload the instant after a keystroke can come before).
 */
export async function keptForReload(page, userData, text) {
  const storage = join(userData, 'User/workspaceStorage');
  const files = existsSync(storage)
    ? readdirSync(storage).map((id) => join(storage, id, 'plansight.plansight/conversation-draft.json')).filter(existsSync)
    : [];
  return files.some((file) => readFileSync(file, 'utf8').includes(text)) || page.evaluate(storedText, text);
}

export function workbench(page) {
  const sidebar = page.locator('#workbench\\.parts\\.sidebar');
  const quickInput = page.locator('.quick-input-widget input');
  const pane = (title) =>
    sidebar
      .locator('.pane')
      .filter({ has: page.locator('.pane-header h3.title', { hasText: new RegExp(`^${title}$`, 'i') }) });

  const wb = {
    page,
    sidebar,
    quickInput,
    pane,

    async shot(name, locator = page) {
      const path = join(screenshotDir, `${name}.png`);
      await locator.screenshot({ path });
      log(`screenshot ${path}`);
    },

    /** Opens the Plansight container and widens the sidebar so plan items read in full. */
    async openPlansight() {
      const container = page
        .locator('.activitybar .action-item', { has: page.locator('[aria-label^="Plansight"]') })
        .first();
      await container.waitFor({ timeout: WAIT });
      // After a reload the container may come back open but still be restoring its views: a
      // click then would close it. Click only while the container is not the one shown.
      await waitFor('the Plansight container with its Plan view', async () => {
        if (await pane('Plan').isVisible()) return true;
        if (!/\bchecked\b/.test((await container.getAttribute('class')) ?? '')) await container.click();
        return false;
      });
      const box = await sidebar.boundingBox();
      if (box.width < 400) {
        await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
        await page.mouse.down();
        await page.mouse.move(box.x + box.width + 140, box.y + box.height / 2, { steps: 5 });
        await page.mouse.up();
      }
    },

    /** Drags the sidebar's edge until it is `width` px wide (300 is VS Code's default). */
    async sidebarWidth(width) {
      await waitFor(`the sidebar to be ${width} px wide`, async () => {
        const box = await sidebar.boundingBox();
        if (Math.abs(box.width - width) <= 2) return true;
        await page.mouse.move(box.x + box.width + 1, box.y + box.height / 2);
        await page.mouse.down();
        await page.mouse.move(box.x + width + 1, box.y + box.height / 2, { steps: 5 });
        await page.mouse.up();
        return false;
      });
    },

    /** Expands a collapsed view of the Plansight container (e.g. the Scratchpad). */
    async expandPane(title) {
      const header = pane(title).locator('.pane-header');
      await header.waitFor({ timeout: WAIT });
      if ((await header.getAttribute('aria-expanded')) === 'false') {
        await header.click();
      }
    },

    async runCommand(title) {
      await page.keyboard.press('F1');
      await quickInput.waitFor({ state: 'visible' });
      await quickInput.fill(`>${title}`);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
      await page.keyboard.press('Enter');
    },

    async quickOpen(file) {
      await page.keyboard.press('F1');
      await quickInput.waitFor({ state: 'visible' });
      await quickInput.fill(file);
      await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor();
      await page.keyboard.press('Enter');
      await page.locator('.tabs-container .tab', { hasText: file }).first().waitFor();
    },

    /**
     * Answers the open quick input (an input box) whose widget shows `title`; with `showing`,
     * first waits until the widget also shows that text (e.g. the context that goes along).
     */
    async answerInput(title, text, showing) {
      const widget = page.locator('.quick-input-widget', { hasText: title });
      await widget.waitFor();
      if (showing) {
        await waitFor(`the input box to show ${JSON.stringify(showing)}`, async () => {
          const shown = await widget.innerText();
          if (!shown.includes(showing)) throw new Error(`it shows ${JSON.stringify(shown)}`);
          return true;
        });
      }
      await quickInput.fill(text);
      await page.keyboard.press('Enter');
    },

    /** The plan view's item rows (level 1): label and icon classes. */
    planItems() {
      return pane('Plan')
        .locator('.monaco-list-row[aria-level="1"]')
        .evaluateAll((rows) =>
          rows.map((row) => ({
            label: row.querySelector('.label-name')?.textContent ?? row.textContent,
            icon: row.querySelector('.custom-view-tree-node-item-icon')?.className ?? '',
          })),
        );
    },

    /**
     * `entry` from the context menu of the plan item row holding `item`, until `shown` (what the
     * entry opens: a dialog, an InputBox) is visible. A context menu ignores a click that comes
     * right as it opens: the row is right-clicked and the entry clicked until it is.
     */
    async planItemMenu(item, entry, shown) {
      const row = pane('Plan').locator('.monaco-list-row[aria-level="1"]', { hasText: item }).first();
      const action = page.locator('.monaco-menu .action-label', { hasText: new RegExp(`^${entry}$`) }).first();
      await waitFor(`"${entry}" of "${item}" to open`, async () => {
        if (await shown.isVisible()) return true;
        if (await action.isVisible()) {
          await action.hover();
          await action.click({ timeout: 2000 });
        } else {
          await row.click({ button: 'right' });
        }
        return false;
      });
    },

    /** Waits until the plan header shows `progress` and each item has its codicon classes. */
    async planAt(progress, icons, labels) {
      return waitFor(`the plan to show ${progress} with icons ${JSON.stringify(icons)}`, async () => {
        const header = await pane('Plan').locator('.pane-header').innerText();
        const items = await wb.planItems();
        const iconsOk =
          items.length === icons.length &&
          items.every((item, i) => icons[i].every((cls) => item.icon.split(/\s+/).includes(cls)));
        if (!iconsOk || !header.includes(progress)) {
          throw new Error(`header ${JSON.stringify(header)}, items ${JSON.stringify(items)}`);
        }
        if (labels && JSON.stringify(items.map((i) => i.label)) !== JSON.stringify(labels)) {
          throw new Error(`labels ${JSON.stringify(items.map((i) => i.label))}`);
        }
        return items;
      });
    },

    viewAction(view, label) {
      return pane(view).locator(`.pane-header .action-label[aria-label^="${label}"]`).first();
    },

    /**
     * Clicks an action in the title bar of the proposal's diff. The diff opens beside, in a
     * group that is not active, and a group shows its editor's actions once active: so, as a
     * user would, first click the diff's tab.
     */
    async diffTitleAction(label, { timeout = WAIT } = {}) {
      await wb.diffTab().first().click({ timeout });
      await page
        .locator(`.editor-group-container.active .editor-actions .action-label[aria-label^="${label}"]`)
        .first()
        .click({ timeout });
    },

    editorAction(label) {
      return page.locator(`.editor-actions .action-label[aria-label^="${label}"]`).first();
    },

    diffTab() {
      return page.locator('.tabs-container .tab', { hasText: 'Plansight proposal' });
    },

    /** The text of the visible diff editor's proposed (right) side; Monaco renders spaces as NBSP. */
    async proposedSide() {
      const text = await page
        .locator('.monaco-diff-editor')
        .filter({ visible: true })
        .locator('.editor.modified .view-lines')
        .first()
        .innerText();
      return text.replace(/\u00a0/g, ' ');
    },

    async problems() {
      return page
        .locator('.markers-panel .monaco-list-row')
        .evaluateAll((rows) => rows.map((row) => row.innerText.replace(/\s+/g, ' ')));
    },

    /** The scratchpad webview's text if it includes `needle`. Webviews live in nested iframes
     *  outside the sidebar's DOM: look through every frame. */
    async scratchpadText(needle) {
      for (const frame of page.frames()) {
        const text = await frame
          .evaluate(() => (document.querySelector('#content') instanceof HTMLElement && document.querySelector('#content').innerText) || null)
          .catch(() => null);
        if (text?.includes(needle)) return text;
      }
      return false;
    },

    /** The conversation webview's frame (webviews live in nested iframes outside the sidebar). */
    async conversation() {
      return waitFor('the conversation view', async () => {
        for (const frame of page.frames()) {
          const found = await frame.evaluate(() => Boolean(document.getElementById('composer'))).catch(() => false);
          if (found) return frame;
        }
        return false;
      });
    },

    /** Types a prompt into the conversation's box and presses Enter (Shift+Enter for new lines). */
    async ask(text, { showing } = {}) {
      const frame = await wb.conversation();
      if (showing) {
        await waitFor(`the composer to show ${JSON.stringify(showing)}`, async () => {
          const chips = await frame.locator('#context').innerText();
          if (!chips.includes(showing)) throw new Error(`the context chip says ${JSON.stringify(chips)}`);
          return true;
        });
      }
      const box = frame.locator('#prompt');
      await box.click();
      const lines = text.split('\n');
      for (const [i, line] of lines.entries()) {
        await box.pressSequentially(line);
        if (i < lines.length - 1) await box.press('Shift+Enter');
      }
      await box.press('Enter');
    },

    /** The conversation's log as text, when it matches `pattern`. */
    async conversationShows(what, pattern, timeout = WAIT) {
      const frame = await wb.conversation();
      return waitFor(what, async () => {
        const text = await frame.locator('#log').innerText();
        if (!pattern.test(text)) throw new Error(`the conversation says …${JSON.stringify(text.slice(-400))}`);
        return text;
      }, timeout);
    },

    /** An open card of `kind` (review, approval, apiKey) in the conversation, once there. */
    async openCard(kind, hasText) {
      const frame = await wb.conversation();
      const card = frame.locator(`.card-${kind}.open`, hasText ? { hasText } : {}).last();
      await card.waitFor({ timeout: WAIT });
      return card;
    },

    /**
     * How the composer is laid out (issue 31: at a 300 px sidebar its status wrapped to lines
     * of their own and its buttons to a second row): the status's lines of text, the rows its
     * shown buttons take, and any that runs past the view's edge or shows no name.
     */
    async composerLayout() {
      const frame = await wb.conversation();
      return frame.evaluate(() => {
        const status = document.getElementById('status');
        const range = document.createRange();
        range.selectNodeContents(status);
        const lineTops = [...range.getClientRects()].map((r) => Math.round(r.top));
        const buttons = [...document.querySelectorAll('#composer .bar button')].filter((b) => b.getClientRects().length > 0);
        const tops = buttons.map((b) => b.getBoundingClientRect().top).sort((a, b) => a - b);
        const rows = tops.filter((top, i) => i === 0 || top - tops[i - 1] > 4).length;
        const edge = document.documentElement.clientWidth;
        const prompt = document.getElementById('prompt');
        return {
          // The prompt box's text (or placeholder) cut: it needs more height than it has.
          promptCut: prompt.scrollHeight > prompt.clientHeight + 1,
          status: status.textContent,
          statusLines: new Set(lineTops).size,
          statusTitle: status.title,
          buttons: buttons.map((b) => b.id),
          rows,
          pastTheEdge: buttons.filter((b) => b.getBoundingClientRect().right > edge).map((b) => b.id),
          nameless: buttons.filter((b) => !(b.getAttribute('aria-label') || b.innerText.trim())).map((b) => b.id),
          labelsShown: buttons.filter((b) => (b.querySelector('.label')?.getClientRects().length ?? 0) > 0).map((b) => b.id),
        };
      });
    },

    toast(text) {
      return page.locator('.notifications-toasts .notification-toast', { hasText: text });
    },

    /**
     * Waits until a toast has slid in, then fails unless each of its links `labels` is in sight:
     * a toast shows one line cut with an ellipsis, and a link past the cut cannot be seen.
     */
    async toastLinksInSight(toast, labels) {
      await waitFor('the notification to finish sliding in', async () =>
        /notification-fade-in-done/.test((await toast.getAttribute('class')) ?? ''),
      );
      const line = await toast.locator('.notification-list-item-message').boundingBox();
      for (const label of labels) {
        const box = await toast.locator('a', { hasText: new RegExp(`^${label}$`) }).boundingBox();
        if (!box || box.x + box.width > line.x + line.width + 1) {
          throw new Error(`${label} is not in sight on the notification's line: ${JSON.stringify({ box, line })}`);
        }
      }
    },
  };
  return wb;
}
