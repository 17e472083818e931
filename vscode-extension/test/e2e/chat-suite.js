// @ts-check
/**
 * Extension-host half of the chat end-to-end test (chat-runner.js is the browser half). Opens
 * the chat, then answers the runner's questions about what the extension and the sidecar hold
 * (a file bridge: call-N.json in, answer-N.json out, both in $DSH_E2E_DIR) until the runner
 * writes `done`. The checks themselves are the runner's and pytest's.
 */
const vscode = require('vscode');
const fs = require('node:fs');
const path = require('node:path');

const dir = /** @type {string} */ (process.env.DSH_E2E_DIR);

function log(message) {
  fs.appendFileSync(path.join(dir, 'suite.log'), `${new Date().toISOString()} ${message}\n`);
}

async function answer(api, folder, call) {
  switch (call.kind) {
    case 'sidecar':
      return api.sidecar.request(call.method, call.params);
    case 'session': {
      const s = api.session(folder);
      return s ? { id: s.header.id, title: s.header.title ?? null } : null;
    }
    case 'config':
      await vscode.workspace.getConfiguration('dsh').update(call.key, call.value, vscode.ConfigurationTarget.Global);
      return null;
    case 'setting':
      // Any section (the colour theme, say), in the User settings like the dsh.* ones above.
      await vscode.workspace.getConfiguration(call.section).update(call.key, call.value, vscode.ConfigurationTarget.Global);
      return null;
    case 'command':
      return (await vscode.commands.executeCommand(call.command, ...(call.args || []))) ?? null;
    case 'hover': {
      const uri = vscode.Uri.file(call.path);
      await vscode.workspace.openTextDocument(uri);
      const hovers = await vscode.commands.executeCommand('vscode.executeHoverProvider', uri, new vscode.Position(call.line, call.character));
      return (hovers || []).flatMap((h) => h.contents.map((c) => (typeof c === 'string' ? c : c.value)));
    }
    case 'revert': {
      // Undo an Insert: the file's editor in front, then File: Revert File.
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(call.path));
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand('workbench.action.files.revert');
      return { text: doc.getText(), dirty: doc.isDirty };
    }
    case 'defaultKeybindings': {
      // The editor's own defaults (and every installed extension's), as the settings UI lists them.
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse('vscode://defaultsettings/keybindings.json'));
      return doc.getText();
    }
    case 'openFile': {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(call.path));
      await vscode.window.showTextDocument(doc);
      return null;
    }
    case 'activeDocument': {
      const doc = vscode.window.activeTextEditor && vscode.window.activeTextEditor.document;
      return doc ? { text: doc.getText(), dirty: doc.isDirty, untitled: doc.isUntitled, languageId: doc.languageId } : null;
    }
    case 'clipboard':
      return vscode.env.clipboard.readText();
    case 'documentText': {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === call.path);
      return doc ? { text: doc.getText(), dirty: doc.isDirty } : null;
    }
    default:
      throw new Error(`unknown call ${call.kind}`);
  }
}

exports.run = async function run() {
  const ext = vscode.extensions.getExtension('dsh-sidecar.dsh-sidecar');
  if (!ext) throw new Error('the extension is not loaded');
  const api = await ext.activate();
  await api.ready;
  const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
  const opening = Date.now();
  await vscode.commands.executeCommand('dsh.chat.open');
  log(`dsh.chat.open took ${Date.now() - opening} ms`);
  fs.writeFileSync(path.join(dir, 'chat-open'), '{}');
  log('chat open; serving the runner');
  const answered = new Set();
  const deadline = Date.now() + 600000;
  while (!fs.existsSync(path.join(dir, 'done'))) {
    if (Date.now() > deadline) throw new Error('the runner never finished');
    for (const name of fs.readdirSync(dir)) {
      const m = /^call-(\d+)\.json$/.exec(name);
      if (!m || answered.has(name)) continue;
      answered.add(name);
      const call = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8'));
      let reply;
      try {
        reply = { result: await answer(api, folder, call) };
      } catch (err) {
        reply = { error: err && err.message ? err.message : String(err) };
      }
      log(`${call.kind} ${call.method || call.key || call.command || ''} -> ${JSON.stringify(reply).slice(0, 200)}`);
      fs.writeFileSync(path.join(dir, `answer-${m[1]}.json.tmp`), JSON.stringify(reply));
      fs.renameSync(path.join(dir, `answer-${m[1]}.json.tmp`), path.join(dir, `answer-${m[1]}.json`));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  log('runner done');
};
