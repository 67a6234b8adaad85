/** The activity view (`plansight.activity`): the runs as they happen, from `plansight/event`. */
import * as vscode from 'vscode';
import type { PlansightEvent } from '../protocol';
import { type ActivityLog, type ActivityRow, type ActivityRun, runHeader } from './activityModel';

type RunNode = { kind: 'run'; run: ActivityRun };
type RowNode = { kind: 'row'; row: ActivityRow; run: ActivityRun };
type ActivityNode = RunNode | RowNode;

function icon(id: string, color?: string): vscode.ThemeIcon {
  return new vscode.ThemeIcon(id, color ? new vscode.ThemeColor(color) : undefined);
}

export class ActivityTreeProvider implements vscode.TreeDataProvider<ActivityNode> {
  private readonly changed = new vscode.EventEmitter<ActivityNode | undefined | void>();
  readonly onDidChangeTreeData = this.changed.event;
  private timer: ReturnType<typeof setTimeout> | undefined;
  // The same node object for the same run or row: TreeView.reveal looks elements up by identity.
  private runNodes = new WeakMap<ActivityRun, RunNode>();
  private rowNodes = new WeakMap<ActivityRow, RowNode>();
  /** Called after each refresh (the view reveals the newest row). */
  onRefreshed: (() => void) | undefined;

  constructor(private readonly log: ActivityLog) {}

  private runNode(run: ActivityRun): RunNode {
    let node = this.runNodes.get(run);
    if (!node) {
      node = { kind: 'run', run };
      this.runNodes.set(run, node);
    }
    return node;
  }

  private rowNode(row: ActivityRow, run: ActivityRun): RowNode {
    let node = this.rowNodes.get(row);
    if (!node) {
      node = { kind: 'row', row, run };
      this.rowNodes.set(row, node);
    }
    return node;
  }

  /** The newest row of the newest run, if any. */
  newestRow(): ActivityNode | undefined {
    const run = this.log.runs[0];
    const row = run?.rows[run.rows.length - 1];
    return run && row ? this.rowNode(row, run) : undefined;
  }

  /** Refreshes at most every 100 ms (text deltas can arrive many times a second). */
  refresh(): void {
    if (this.timer) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.changed.fire();
      this.onRefreshed?.();
    }, 100);
  }

  getTreeItem(node: ActivityNode): vscode.TreeItem {
    if (node.kind === 'run') {
      const header = runHeader(node.run);
      const item = new vscode.TreeItem(
        header.label || '(no prompt)',
        node.run === this.log.runs[0]
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.id = header.key;
      item.iconPath = icon(header.iconId, header.iconColor);
      item.description = header.description;
      item.tooltip = header.tooltip;
      item.contextValue = node.run.running ? 'run.running' : 'run';
      return item;
    }
    const row = node.row;
    const item = new vscode.TreeItem(row.label, vscode.TreeItemCollapsibleState.None);
    item.id = row.key;
    item.iconPath = icon(row.iconId, row.iconColor);
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = `activity.${row.kind}`;
    return item;
  }

  getChildren(node?: ActivityNode): ActivityNode[] {
    if (!node) {
      return this.log.runs.map((run) => this.runNode(run));
    }
    if (node.kind === 'run') {
      return node.run.rows.map((row) => this.rowNode(row, node.run));
    }
    return [];
  }

  getParent(node: ActivityNode): ActivityNode | undefined {
    return node.kind === 'row' ? this.runNode(node.run) : undefined;
  }

  dispose(): void {
    if (this.timer) {
      clearTimeout(this.timer);
    }
    this.changed.dispose();
  }
}

export interface ActivityView {
  event(event: PlansightEvent): void;
  error(message: string): void;
  serverStopped(): void;
}

export function registerActivityView(context: vscode.ExtensionContext, log: ActivityLog): ActivityView {
  const provider = new ActivityTreeProvider(log);
  const view = vscode.window.createTreeView('plansight.activity', { treeDataProvider: provider });
  // Follow the run: keep the newest row in sight while the view is visible.
  provider.onRefreshed = () => {
    const newest = provider.newestRow();
    if (view.visible && newest) {
      view.reveal(newest, { select: false, focus: false }).then(undefined, () => undefined);
    }
  };
  context.subscriptions.push(
    view,
    provider,
    vscode.commands.registerCommand('plansight.activity.clear', () => {
      log.clear();
      provider.refresh();
    }),
  );
  return {
    event(event) {
      if (log.apply(event)) {
        provider.refresh();
      }
    },
    error(message) {
      log.addError(message);
      provider.refresh();
    },
    serverStopped() {
      if (log.stopRunning()) {
        provider.refresh();
      }
    },
  };
}
