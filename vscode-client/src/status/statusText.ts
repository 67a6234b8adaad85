/** The status bar item's text: "$(sync~spin) 2/5 · current item". Pure: no `vscode` import. */
import { currentItem, progressText } from '../plan/planModel';
import type { TodoState } from '../protocol';
import { escapeIcons, oneLine, truncate } from '../text';

export interface StatusText {
  text: string;
  tooltip: string;
}

export function statusText(state: TodoState, running: boolean, maxItemChars = 40): StatusText {
  const icon = running ? '$(sync~spin)' : '$(checklist)';
  const progress = progressText(state);
  const item = currentItem(state);
  const itemText = item ? oneLine(item.text) : '';
  const parts = [progress, item ? escapeIcons(truncate(itemText, maxItemChars)) : '']
    .filter(Boolean)
    .join(' · ');
  const text = `${icon} ${parts || 'Plansight'}`;
  const tooltipLines = [running ? 'Plansight is running' : 'Plansight'];
  if (progress) {
    tooltipLines.push(`${progress} completed`);
  }
  if (item) {
    tooltipLines.push(`${item.status === 'in_progress' ? 'Now' : 'Next'}: #${item.id} ${itemText}`);
  }
  tooltipLines.push('Click to show the plan');
  return { text, tooltip: tooltipLines.join('\n') };
}
