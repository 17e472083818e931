/**
 * Settings the sidecar refused (`dsh/settings/didCheck`): a refused key keeps its default or
 * previous value on the server while everything else runs, so this is a warning, not a failure.
 *
 * One notification at a time names every refused key, the value and the expected form, with an
 * "Open Setting" link per key. VS Code's API cannot close a message toast, so it is shown as a
 * progress notification, which closes when its promise settles: the next report (an empty one
 * once the user fixed the setting) takes it down, so no toast outlives the problem. Its progress
 * is reported at 0 %, so no bar moves under a notice.
 */
import * as vscode from 'vscode';
import type { SettingRefusal } from './protocol';

/** The `dsh.` setting id of a server key ("dsh" alone is the whole tree). */
export function settingId(key: string): string {
  return key === 'dsh' ? 'dsh' : `dsh.${key}`;
}

/**
 * The text of the notification. A toast shows one line until it is expanded, so the text opens
 * with a sentence short enough for that line (which key, or how many); then, for each key, the
 * value, why, what the sidecar does instead and the link.
 */
export function refusalText(refused: readonly SettingRefusal[]): string {
  const head = refused.length === 1 ? `DSH: ${settingId(refused[0]!.key)} was refused.` : `DSH: ${refused.length} settings were refused.`;
  const details = refused.map((r) => {
    const id = settingId(r.key);
    const args = encodeURIComponent(JSON.stringify([id]));
    return `${id} = ${JSON.stringify(r.value)}: ${r.message}. The sidecar keeps the default or the previous value. ` +
      `[Open Setting](command:workbench.action.openSettings?${args})`;
  });
  return `${head} ${details.join(' ')}`;
}

export class SettingRefusals implements vscode.Disposable {
  private refused: readonly SettingRefusal[] = [];
  private closeShown: (() => void) | undefined;

  constructor(private readonly output: vscode.OutputChannel) {}

  /** Whether the sidecar refused `key` (e.g. "timeContext.timeZone") in its last check. */
  isRefused(key: string): boolean {
    return this.refused.some((r) => r.key === key);
  }

  get current(): readonly SettingRefusal[] {
    return this.refused;
  }

  /** A `dsh/settings/didCheck` report: replaces what is shown. */
  update(refused: readonly SettingRefusal[]): void {
    this.refused = refused;
    this.closeShown?.();
    this.closeShown = undefined;
    if (refused.length === 0) {
      this.output.appendLine('[dsh] every setting is accepted');
      return;
    }
    const text = refusalText(refused);
    this.output.appendLine(`[dsh] ${text}`);
    void vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: text, cancellable: false },
      (progress) => {
        // A notice, not work in progress: a determinate bar at 0 % draws nothing, where an
        // unreported one runs VS Code's busy animation for as long as the toast is up.
        progress.report({ increment: 0 });
        return new Promise<void>((resolve) => {
          this.closeShown = resolve;
        });
      },
    );
  }

  /** The sidecar stopped: its refusals no longer apply (a new one reports again). */
  clear(): void {
    if (this.refused.length > 0 || this.closeShown !== undefined) this.update([]);
  }

  dispose(): void {
    this.closeShown?.();
    this.closeShown = undefined;
  }
}
