/**
 * What the chat's links and code-block buttons do in the editor: open a checked link, insert code
 * at the cursor of the editor last used. They return what the panel should say.
 */
import * as vscode from 'vscode';
import { resolveLink } from './links';

export interface ActionReport {
  level: 'status' | 'info' | 'error';
  text: string;
}

/** Open `href` (a web page in the browser, a folder file in the editor); a problem, if any. */
export async function openLink(href: string, folder: string, column: vscode.ViewColumn): Promise<ActionReport | undefined> {
  const target = await resolveLink(href, folder);
  if (target.kind === 'external') {
    await vscode.env.openExternal(vscode.Uri.parse(target.url, true));
    return undefined;
  }
  if (target.kind === 'refused') return { level: 'info', text: `Not opened: ${target.reason}.` };
  const options: vscode.TextDocumentShowOptions = { preview: true, viewColumn: column };
  if (target.line !== undefined) {
    const position = new vscode.Position(target.line - 1, 0);
    options.selection = new vscode.Range(position, position);
  }
  try {
    await vscode.window.showTextDocument(vscode.Uri.file(target.path), options);
    return undefined;
  } catch (err) {
    return { level: 'error', text: `Could not open ${href}: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** Replace each selection of `editor` with `text` (an unsaved edit, as typing would be). */
export async function insertAtCursor(editor: vscode.TextEditor | undefined, text: string): Promise<ActionReport> {
  if (editor === undefined) return { level: 'info', text: 'Open a file first: the code is inserted at its cursor.' };
  const done = await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, text);
  });
  if (!done) return { level: 'error', text: 'The editor refused the insertion.' };
  await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
  return { level: 'status', text: `Inserted into ${vscode.workspace.asRelativePath(editor.document.uri)}.` };
}
