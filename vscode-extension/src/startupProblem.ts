/**
 * Why the sidecar is not running, told once. A failed start shows ONE notification that says
 * what is missing and offers the setting that fixes it; the status bar keeps a warning until the
 * sidecar runs, and clicking it shows the notification again. Nothing else toasts about it (the
 * language client's own start/crash notifications are routed to the output channel).
 */
import * as vscode from 'vscode';

export interface StartupProblem {
  /** What is wrong, in one or two sentences, without the "DSH Sidecar:" prefix. */
  message: string;
  /** The setting (or settings-editor query) that fixes it; "Open Setting" opens it. */
  setting: string;
}

export const OPEN_SETTING = 'Open Setting';
export const RETRY = 'Retry';
export const SHOW_OUTPUT = 'Show Output';

export class StartupProblems implements vscode.Disposable {
  private problem: StartupProblem | undefined;
  /** The message of the problem the user has already been told about. */
  private told: string | undefined;
  private readonly changed = new vscode.EventEmitter<StartupProblem | undefined>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly output: vscode.OutputChannel) {}

  get current(): StartupProblem | undefined {
    return this.problem;
  }

  /** Record a problem; notify unless the user was already told this very problem. */
  report(problem: StartupProblem, options: { force?: boolean } = {}): void {
    this.problem = problem;
    this.changed.fire(problem);
    this.output.appendLine(`[dsh] ${problem.message}`);
    if (options.force !== true && this.told === problem.message) return;
    this.told = problem.message;
    void this.notify(problem);
  }

  /** The sidecar runs: forget the problem (a new one will be told again). */
  clear(): void {
    if (this.problem === undefined && this.told === undefined) return;
    this.problem = undefined;
    this.told = undefined;
    this.changed.fire(undefined);
  }

  /** The status bar's warning was clicked. */
  showAgain(): void {
    if (this.problem !== undefined) void this.notify(this.problem);
  }

  dispose(): void {
    this.changed.dispose();
  }

  private async notify(problem: StartupProblem): Promise<void> {
    const choice = await vscode.window.showErrorMessage(
      `DSH Sidecar: ${problem.message}`,
      OPEN_SETTING,
      RETRY,
      SHOW_OUTPUT,
    );
    if (choice === OPEN_SETTING) await vscode.commands.executeCommand('workbench.action.openSettings', problem.setting);
    else if (choice === RETRY) await vscode.commands.executeCommand('dsh.server.restart');
    else if (choice === SHOW_OUTPUT) this.output.show(true);
  }
}
