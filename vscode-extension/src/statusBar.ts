/**
 * Status bar: how many instruction files apply to the active editor (a click opens the
 * inspector), or a warning while the sidecar cannot run (a click says why again).
 */
import * as vscode from 'vscode';
import { type ActiveScopes, type ActiveScopesState, applyingFiles } from './inspector/activeScopes';
import type { ScopesResult } from './protocol';
import type { StartupProblems } from './startupProblem';

export class InstructionStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly scopes: ActiveScopes,
    private readonly problems: StartupProblems,
  ) {
    this.item = vscode.window.createStatusBarItem('dsh.instructions', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'DSH Instructions';
    this.subscriptions = [scopes.onDidChange(() => this.render()), problems.onDidChange(() => this.render())];
    this.render();
  }

  render(): void {
    const problem = this.problems.current;
    if (problem !== undefined) {
      this.item.text = '$(warning) DSH';
      this.item.tooltip = `DSH Sidecar is not running: ${problem.message} Click for the fix.`;
      this.item.accessibilityInformation = { label: 'DSH Sidecar is not running' };
      this.item.command = 'dsh.server.showProblem';
      this.item.show();
      return;
    }
    this.item.command = 'dsh.inspector.show';
    this.renderScopes(this.scopes.current);
  }

  private renderScopes(state: ActiveScopesState): void {
    if (state.uri === undefined) {
      this.item.hide();
      return;
    }
    const name = state.uri.path.split('/').pop() ?? '';
    if (state.result === undefined) {
      this.item.text = '$(book) ?';
      this.item.tooltip = state.error !== undefined ? `DSH: ${state.error}` : 'DSH: instruction files not known yet';
      this.item.accessibilityInformation = { label: 'DSH instruction files: unknown' };
    } else {
      const count = applyingFiles(state.result);
      const unread = notReadText(state.result);
      this.item.text = unread === undefined ? `$(book) ${count}` : `$(book) ${count} $(warning)`;
      this.item.tooltip = `${appliesText(count)} to ${name}.${unread === undefined ? '' : ` ${unread}`} Click to open the DSH context inspector.`;
      this.item.accessibilityInformation = { label: `${appliesText(count)} to ${name}${unread === undefined ? '' : `; ${unread}`}` };
    }
    this.item.show();
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.item.dispose();
  }
}

/** "1 instruction file", "2 instruction files", "no instruction file". */
export function statusText(count: number): string {
  if (count === 0) return 'no instruction file';
  return count === 1 ? '1 instruction file' : `${count} instruction files`;
}

/** The sentence's subject and verb agree: "1 instruction file applies", "2 instruction files apply". */
export function appliesText(count: number): string {
  const subject = statusText(count);
  return `${subject.charAt(0).toUpperCase()}${subject.slice(1)} ${count === 1 || count === 0 ? 'applies' : 'apply'}`;
}

/** The repository's instruction files that the settings do not read, with what would read them:
 *  never a silent count over instructions written for other agents. */
export function notReadText(result: ScopesResult): string | undefined {
  const found = result.notRead ?? [];
  if (found.length === 0) return undefined;
  return `Not read: ${found.map((n) => `${n.paths.join(', ')} (${n.agent}; ${n.enable})`).join('; ')}.`;
}
