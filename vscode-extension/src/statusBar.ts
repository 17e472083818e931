/** Status bar: how many instruction files apply to the active editor; a click opens the inspector. */
import * as vscode from 'vscode';
import { type ActiveScopes, type ActiveScopesState, applyingFiles } from './inspector/activeScopes';

export class InstructionStatus implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: vscode.Disposable;

  constructor(scopes: ActiveScopes) {
    this.item = vscode.window.createStatusBarItem('dsh.instructions', vscode.StatusBarAlignment.Right, 100);
    this.item.name = 'DSH Instructions';
    this.item.command = 'dsh.inspector.show';
    this.subscription = scopes.onDidChange((s) => this.render(s));
    this.render(scopes.current);
  }

  render(state: ActiveScopesState): void {
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
      this.item.text = `$(book) ${count}`;
      this.item.tooltip = `${statusText(count)} apply to ${name}. Click to open the DSH context inspector.`;
      this.item.accessibilityInformation = { label: `${statusText(count)} apply to ${name}` };
    }
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}

export function statusText(count: number): string {
  return count === 1 ? '1 instruction file' : `${count} instruction files`;
}
