/**
 * "DSH: Show Workspace Instructions for This File": the instruction chain of a file (dsh/scopes)
 * as a quick pick, each entry with its state, size and what the session has active; picking one
 * opens it. The same facts as the inspector's chain table, without leaving the keyboard.
 */
import * as vscode from 'vscode';
import type { Sidecar } from '../client';
import { SCOPES } from '../methods';
import type { ScopeFile, ScopesResult } from '../protocol';
import { appliesText } from '../statusBar';
import { plural } from '../shared/text';
import { applyingFiles } from './activeScopes';
import { scopeDirectory } from './model';

export interface ScopeItem {
  label: string;
  description: string;
  detail: string;
  path: string;
}

const STATE_WORDS: Record<ScopeFile['state'], string> = {
  included: 'included',
  truncated: 'truncated to the budget',
  omitted: 'left out by the budget',
  duplicate: 'duplicate of a sibling',
  oversized: 'too large to load',
  unreadable: 'unreadable',
  ignored: 'ignored by the project',
  'outside-project': 'links outside the project (not read)',
  overridden: 'replaced by AGENTS.override.md',
};

export function formatBytes(n: number | null): string {
  if (n === null) return '?';
  return n < 1024 ? plural(n, 'byte') : `${(n / 1024).toFixed(1)} KiB`;
}

/** One pick item per file of the chain, broadest first (as dsh/scopes lists them). */
export function scopeItems(result: ScopesResult, sessionId: string | undefined): ScopeItem[] {
  const active = new Map(
    (result.sessions.find((s) => s.sessionId === sessionId)?.active ?? []).map((c) => [c.path, c.action] as const),
  );
  return result.files.map((f) => {
    const size =
      f.state === 'truncated' && f.includedBytes !== undefined
        ? `${formatBytes(f.includedBytes)} of ${formatBytes(f.bytes)}`
        : formatBytes(f.bytes);
    const seen = active.get(f.displayPath);
    const detail = [
      `governs ${scopeDirectory(f.scope) === '.' ? 'the whole project' : scopeDirectory(f.scope)}`,
      seen !== undefined ? `the agent has it (${seen})` : undefined,
      f.target !== undefined ? `links to ${f.target}` : undefined,
      f.reason,
    ]
      .filter((p): p is string => p !== undefined && p !== '')
      .join(' · ');
    // A state a newer sidecar adds is shown as it is named.
    const state = (STATE_WORDS as Record<string, string | undefined>)[f.state] ?? f.state;
    return { label: f.displayPath, description: `${state} · ${size}`, detail, path: f.path };
  });
}

export async function showScopesOf(
  sidecar: Sidecar,
  uri: vscode.Uri | undefined,
  sessionIdOf: (uri: vscode.Uri) => string | undefined,
): Promise<void> {
  if (uri === undefined || uri.scheme !== 'file') {
    void vscode.window.showInformationMessage('DSH: open a file first; its workspace instructions are listed.');
    return;
  }
  const name = uri.path.split('/').pop() ?? uri.fsPath;
  let result: ScopesResult;
  try {
    result = await sidecar.request(SCOPES, { uri: uri.toString() });
  } catch (err) {
    void vscode.window.showErrorMessage(`DSH: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  if (result.files.length === 0) {
    void vscode.window.showInformationMessage(`DSH: no instruction file applies to ${name}.`);
    return;
  }
  const picked = await vscode.window.showQuickPick(scopeItems(result, sessionIdOf(uri)), {
    title: `${appliesText(applyingFiles(result))} to ${name}`,
    placeHolder: 'Pick one to open it',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (picked !== undefined) await vscode.window.showTextDocument(vscode.Uri.file(picked.path), { preview: true });
}
