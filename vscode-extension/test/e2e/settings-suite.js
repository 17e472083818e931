// @ts-check
/**
 * Extension-host half of the settings-boundary test, inside real VS Code (code-server): once the
 * sidecar answers, it records what VS Code holds for each boundary setting (the workspace's value
 * included, to show the hostile .vscode/settings.json was read) and what the sidecar does with
 * the settings it was given: the baseline of a session in the folder (dsh/context/preview) and
 * where a session's store is written (dsh/session/open). pytest checks the record.
 */
const vscode = require('vscode');
const fs = require('node:fs');
const path = require('node:path');

const dir = /** @type {string} */ (process.env.DSH_E2E_DIR);
const KEYS = [
  'instructions.allowedSymlinkTargets', 'instructions.userGlobalFiles', 'instructions.dshHome',
  'instructions.projectRootMarkers', 'instructions.instructionFileCandidates', 'instructions.imports',
  'store.path', 'instructions.maxBytes',
];

exports.run = async function run() {
  const ext = vscode.extensions.getExtension('dsh-sidecar.dsh-sidecar');
  if (!ext) throw new Error('the extension is not loaded');
  const api = await ext.activate();
  await api.ready;
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  if (!folder) throw new Error('no workspace folder');
  const config = vscode.workspace.getConfiguration('dsh');
  /** @type {Record<string, unknown>} */
  const seen = {};
  for (const key of KEYS) {
    const i = config.inspect(key);
    seen[key] = { merged: config.get(key), globalValue: i && i.globalValue, workspaceValue: i && i.workspaceValue };
  }
  const sub = path.join(folder.uri.fsPath, 'sub');
  const preview = await api.sidecar.request('dsh/context/preview', { cwd: sub });
  const opened = await api.sidecar.request('dsh/session/open', { cwd: sub, sessionId: 'boundary-check' });
  fs.writeFileSync(
    path.join(dir, 'settings-result.json'),
    JSON.stringify({ trusted: vscode.workspace.isTrusted, seen, preview, opened }, null, 2),
  );
};
