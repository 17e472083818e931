/**
 * Entry point: wires the sidecar client, the chat panels, the context inspector, the status
 * bar item and the commands. Each piece lives in its own module; this file only connects them.
 */
import * as vscode from 'vscode';
import { EditApprovals } from './chat/approvals';
import { CHAT_VIEW_ID, type ChatPanel, ChatPanels } from './chat/panel';
import { ChatSessions, type LiveSession } from './chat/sessions';
import { type Sidecar, SidecarClient } from './client';
import { ActiveScopes } from './inspector/activeScopes';
import { showScopesOf } from './inspector/scopesPick';
import { INSPECTOR_VIEW_ID, InspectorView } from './inspector/view';
import { askApiKey, configureModel } from './model/configure';
import { API_KEY_SECRET } from './model/select';
import { SettingRefusals } from './settingRefusals';
import { StartupProblems } from './startupProblem';
import { LastTextEditor } from './lastEditor';
import { InstructionStatus } from './statusBar';
import type { InspectorState } from './shared/inspectorMessages';

/** What `activate` returns: used by the extension-host tests, stable enough for other extensions. */
export interface DshApi {
  sidecar: Sidecar;
  /** Resolves once the sidecar answered `initialize` (rejects if it could not start). */
  ready: Promise<void>;
  openChat(folder?: vscode.WorkspaceFolder): Promise<ChatPanel | undefined>;
  session(folder: vscode.WorkspaceFolder): LiveSession | undefined;
  refreshInspector(): Promise<InspectorState | undefined>;
  readonly inspectorState: InspectorState | undefined;
}

let running: SidecarClient | undefined;

export function activate(context: vscode.ExtensionContext): DshApi {
  const output = vscode.window.createOutputChannel('DSH Sidecar');
  const problems = new StartupProblems(output);
  const refusals = new SettingRefusals(output);
  const sidecar = new SidecarClient(output, context.extensionUri, problems, refusals);
  running = sidecar;
  const sessions = new ChatSessions(sidecar, context.workspaceState);
  const scopes = new ActiveScopes(sidecar);
  const status = new InstructionStatus(scopes, problems);
  const approvals = new EditApprovals();
  const editors = new LastTextEditor();
  const panels = new ChatPanels({
    sidecar,
    sessions,
    extensionUri: context.extensionUri,
    secrets: context.secrets,
    output,
    approvals,
    editors,
    onSessionChanged: () => {
      scopes.schedule(0);
      inspector.schedule(0);
    },
    isSettingRefused: (key) => refusals.isRefused(key),
  }, defaultFolder);
  const openChat = async (folder?: vscode.WorkspaceFolder): Promise<ChatPanel | undefined> => {
    const target = folder ?? (await pickFolder());
    return target === undefined ? undefined : panels.open(target);
  };
  const inspector = new InspectorView(context.extensionUri, sidecar, sessions, scopes, () => void openChat());

  context.subscriptions.push(
    output,
    problems,
    refusals,
    sidecar,
    sessions,
    scopes,
    status,
    approvals,
    editors,
    panels,
    inspector,
    vscode.window.registerWebviewViewProvider(INSPECTOR_VIEW_ID, inspector),
    // Kept alive while hidden: a running turn goes on streaming into it.
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, panels, { webviewOptions: { retainContextWhenHidden: true } }),
    sidecar.onDidStart(() => {
      // A new sidecar process has no live sessions: resume ours so touches reach them again.
      void sessions
        .reopenAll()
        .then(() => sessions.resumeRemembered(vscode.workspace.workspaceFolders ?? []));
      scopes.schedule(0);
      inspector.schedule(0);
    }),
    vscode.workspace.onDidChangeWorkspaceFolders((e) => {
      if (sidecar.isRunning) void sessions.resumeRemembered(e.added);
    }),
    // Ctrl+Alt+D means "let me type to the agent": the prompt box gets the focus every time.
    vscode.commands.registerCommand('dsh.chat.open', async () => {
      const panel = await openChat();
      panel?.focusPrompt();
      return panel;
    }),
    vscode.commands.registerCommand('dsh.chat.openInEditor', async () => {
      const folder = await pickFolder();
      const panel = folder === undefined ? undefined : panels.openInEditor(folder);
      panel?.focusPrompt();
      return panel;
    }),
    vscode.commands.registerCommand('dsh.chat.newSession', async () => {
      const panel = await openChat();
      await panel?.newSession();
      panel?.focusPrompt();
    }),
    // Asks in the panel first; `{confirmed: true}` (for scripts and tests) skips the question.
    vscode.commands.registerCommand('dsh.session.compact', async (options?: { confirmed?: boolean }) => {
      const panel = await openChat();
      return panel?.compact(options?.confirmed === true);
    }),
    // The diff editor's title buttons for a proposed write or edit.
    vscode.commands.registerCommand('dsh.edit.accept', (uri?: vscode.Uri) => decideEdit(uri, 'accepted')),
    vscode.commands.registerCommand('dsh.edit.reject', (uri?: vscode.Uri) => decideEdit(uri, 'rejected')),
    // One hunk: from its CodeLens (which names it), or from the context menu or palette at the cursor.
    vscode.commands.registerCommand('dsh.proposal.acceptHunk', (target?: unknown) => decideHunk(target, true)),
    vscode.commands.registerCommand('dsh.proposal.rejectHunk', (target?: unknown) => decideHunk(target, false)),
    vscode.commands.registerCommand('dsh.inspector.show', () => inspector.show()),
    // From the palette: the active (or last) editor's file; from a context menu: that file.
    vscode.commands.registerCommand('dsh.scopes.showForFile', (uri?: vscode.Uri) =>
      showScopesOf(sidecar, uri instanceof vscode.Uri ? uri : (editors.get()?.document.uri ?? scopes.current.uri), (file) => {
        const folder = vscode.workspace.getWorkspaceFolder(file);
        return folder !== undefined ? sessions.get(folder)?.header.id : undefined;
      }),
    ),
    vscode.commands.registerCommand('dsh.inspector.refresh', async () => {
      await scopes.refresh();
      return inspector.refresh();
    }),
    vscode.commands.registerCommand('dsh.server.restart', async () => {
      try {
        await sidecar.restart({ userAsked: true });
        void vscode.window.showInformationMessage('DSH sidecar restarted.');
      } catch {
        // Already told, once, by StartupProblems (with the setting that fixes it).
      }
    }),
    vscode.commands.registerCommand('dsh.server.showProblem', () => problems.showAgain()),
    vscode.commands.registerCommand('dsh.server.showOutput', () => output.show(true)),
    vscode.commands.registerCommand('dsh.model.setApiKey', () => askApiKey(context.secrets)),
    vscode.commands.registerCommand('dsh.model.configure', () => configureModel(context.secrets)),
    vscode.commands.registerCommand('dsh.model.clearApiKey', async () => {
      await context.secrets.delete(API_KEY_SECRET);
      void vscode.window.showInformationMessage('DSH: model API key removed.');
    }),
  );

  function decideEdit(uri: vscode.Uri | undefined, decision: 'accepted' | 'rejected'): boolean {
    const shown = uri ?? vscode.window.activeTextEditor?.document.uri;
    const id = approvals.idOf(shown) ?? (approvals.pending().length === 1 ? approvals.pending()[0] : undefined);
    return id !== undefined && approvals.decide(id, decision);
  }

  async function decideHunk(target: unknown, accept: boolean): Promise<boolean> {
    // A menu passes the editor's URI; only a CodeLens passes the hunk itself.
    const named = target as { id?: unknown; at?: unknown } | undefined;
    const where =
      typeof named?.id === 'string' && typeof named.at === 'number'
        ? { id: named.id, at: named.at }
        : approvals.hunkAtCursor(vscode.window.activeTextEditor);
    return where !== undefined && approvals.decideHunk(where.id, where.at, accept);
  }

  const ready = sidecar.start();
  ready.catch(() => undefined); // reported by StartupProblems; `ready` rejects for API callers

  return {
    sidecar,
    ready,
    openChat,
    session: (folder) => sessions.get(folder),
    refreshInspector: () => inspector.refresh(),
    get inspectorState() {
      return inspector.state;
    },
  };
}

/** Awaited by the editor, so the sidecar gets its shutdown/exit instead of being killed. */
export async function deactivate(): Promise<void> {
  await running?.stop();
  running = undefined;
}

/** The folder the chat view shows when it first opens: the active editor's, else the first. */
function defaultFolder(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  const fromEditor = active !== undefined ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  return fromEditor ?? vscode.workspace.workspaceFolders?.[0];
}

/** The active editor's folder, the only folder, or the one the user picks. */
async function pickFolder(): Promise<vscode.WorkspaceFolder | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  const active = vscode.window.activeTextEditor?.document.uri;
  const fromEditor = active !== undefined ? vscode.workspace.getWorkspaceFolder(active) : undefined;
  if (fromEditor !== undefined) return fromEditor;
  if (folders.length === 1) return folders[0];
  if (folders.length === 0) {
    void vscode.window.showErrorMessage('DSH: open a folder first; the agent works inside a workspace folder.');
    return undefined;
  }
  return vscode.window.showWorkspaceFolderPick({ placeHolder: 'Workspace folder for the agent chat' });
}
