/** The status bar item's text: "$(sync~spin) 2/5 · current item". Pure: no `vscode` import. */
import { currentItem, planCounts, progressText } from '../plan/planModel';
import type { TodoState } from '../protocol';
import { escapeIcons, oneLine, truncate } from '../text';

export interface StatusText {
  text: string;
  tooltip: string;
}

/**
 * `waitingFor` ("waiting for your review") wins over the current item: the run does not go on
 * until the user acts.
 */
export function statusText(
  state: TodoState,
  running: boolean,
  maxItemChars = 40,
  waitingFor?: string,
  server?: { status: string; problem?: string | undefined },
): StatusText {
  // A server that is not running is said first: the plan shown is then the last one known.
  if (server && (server.status === 'failed' || server.status === 'crashed')) {
    const what = server.status === 'crashed' ? 'server stopped' : 'server not running';
    return {
      text: `$(error) Plansight: ${what}`,
      tooltip: [server.problem ?? 'The Plansight server is not running.', 'Click to restart the server'].join('\n'),
    };
  }
  const icon = waitingFor ? '$(bell-dot)' : running ? '$(sync~spin)' : '$(checklist)';
  const progress = progressText(state);
  const item = currentItem(state);
  const itemText = item ? oneLine(item.text) : '';
  const parts = [progress, waitingFor ? `Plansight: ${waitingFor}` : item ? escapeIcons(truncate(itemText, maxItemChars)) : '']
    .filter(Boolean)
    .join(' · ');
  const text = `${icon} ${parts || 'Plansight'}`;
  const tooltipLines = [waitingFor ? `Plansight is ${waitingFor}` : running ? 'Plansight is running' : 'Plansight'];
  if (progress) {
    const { done, total, cancelled } = planCounts(state);
    tooltipLines.push(`${done} of ${total} done${cancelled ? ` (${cancelled} cancelled)` : ''}`);
  }
  if (item) {
    tooltipLines.push(`${item.now ? 'Now' : 'Next'}: #${item.id} ${itemText}`);
  }
  tooltipLines.push(
    waitingFor === 'waiting for your answer' ? 'Click to answer' : waitingFor ? 'Click to show the conversation' : 'Click to show the plan',
  );
  return { text, tooltip: tooltipLines.join('\n') };
}
