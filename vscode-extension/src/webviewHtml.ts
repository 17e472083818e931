/** The HTML shell of a webview: a strict CSP that only lets our own nonce'd script run. */
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { escapeHtml } from './shared/text';

export function makeNonce(): string {
  return randomBytes(18).toString('base64').replace(/[+/=]/g, '');
}

export interface ShellOptions {
  title: string;
  /** Bundle name under dist/webview/ (without .js). */
  script: 'chat' | 'inspector';
  /** Stylesheet under media/. */
  style: string;
  body: string;
}

export function webviewHtml(webview: vscode.Webview, extensionUri: vscode.Uri, o: ShellOptions): string {
  const nonce = makeNonce();
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', `${o.script}.js`));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', o.style));
  const csp = [
    "default-src 'none'",
    `img-src ${webview.cspSource} data:`,
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style.toString()}">
<title>${escapeHtml(o.title)}</title>
</head>
<body>
${o.body}
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}

/** The only folders a webview may load from: our bundles and stylesheets. */
export function webviewRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, 'dist', 'webview'), vscode.Uri.joinPath(extensionUri, 'media')];
}
