/**
 * The text editor the user last worked in. While the chat (a webview) has focus VS Code reports
 * no active text editor, so "Insert at cursor" needs the one that was active before.
 */
import * as vscode from 'vscode';

export class LastTextEditor implements vscode.Disposable {
  private last: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private readonly subscription = vscode.window.onDidChangeActiveTextEditor((e) => {
    if (e !== undefined && e.document.uri.scheme !== 'output') this.last = e;
  });

  /** The last active editor if it is still open, else a visible one. */
  get(): vscode.TextEditor | undefined {
    const visible = vscode.window.visibleTextEditors.filter((e) => e.document.uri.scheme !== 'output');
    const last = this.last;
    if (last !== undefined && visible.includes(last)) return last;
    return vscode.window.activeTextEditor ?? visible[0];
  }

  dispose(): void {
    this.subscription.dispose();
  }
}
