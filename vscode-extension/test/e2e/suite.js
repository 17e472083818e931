// @ts-check
/**
 * Extension-host half of the end-to-end test: runs inside real VS Code (code-server) with the
 * real `vscode` API, loaded through the workbench's `extensionTestsPath`. It opens the chat
 * panel, waits while the browser half (runner.js) types the prompt and checks the UI, then
 * checks what the sidecar recorded. A throw fails the run (codeAutomationExit(1)).
 *
 * Talks to runner.js through files in $DSH_E2E_DIR (both run on this machine).
 */
const vscode = require('vscode');
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.DSH_E2E_DIR;

function log(message) {
  if (dir) fs.appendFileSync(path.join(dir, 'suite.log'), `${new Date().toISOString()} ${message}\n`);
}

function assert(condition, message) {
  if (!condition) throw new Error(`assertion failed: ${message}`);
}

async function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitForFile(name, ms) {
  const file = path.join(/** @type {string} */ (dir), name);
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${name} from the browser`);
}

function text(message) {
  return (message.content || []).filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

exports.run = async function run() {
  assert(dir, 'DSH_E2E_DIR is set');
  try {
    const ext = vscode.extensions.getExtension('dsh-sidecar.dsh-sidecar');
    assert(ext, 'the extension is loaded from extensionDevelopmentPath');
    const api = await withTimeout(ext.activate(), 20000, 'activation');
    await withTimeout(api.ready, 30000, 'the sidecar answering initialize');
    log('sidecar ready');
    const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
    assert(folder, 'a workspace folder is open');

    await vscode.commands.executeCommand('dsh.chat.open');
    fs.writeFileSync(path.join(dir, 'chat-open'), '{}');
    log('chat panel open; waiting for the browser');

    const ui = await waitForFile('ui-done', 120000);
    log(`browser done: ${JSON.stringify(ui).slice(0, 300)}`);

    const session = api.session(folder);
    assert(session, 'the folder has a live session');

    // What the sidecar recorded: prompt, baseline, call, result, nested instructions, answer.
    const surface = await api.sidecar.request('dsh/session/surface', { sessionId: session.header.id });
    const kinds = surface.events.map((e) => {
      const m = e.type === 'user/message' ? e.data : e.data.message;
      return `${e.type}:${m.source.kind}`;
    });
    log(`surface: ${kinds.join(', ')}`);
    const resultAt = kinds.indexOf('tool/result:tool');
    const nestedAt = surface.events.findIndex(
      (e) => e.type === 'user/message' && text(e.data).startsWith('<system-reminder>\nAdditional instructions from: pkg/AGENTS.md'),
    );
    assert(kinds.includes('user/message:user'), 'the prompt is on the surface');
    assert(resultAt >= 0, 'the tool result is on the surface');
    assert(nestedAt > resultAt, `the nested instructions (${nestedAt}) follow the tool result (${resultAt})`);
    assert(kinds[kinds.length - 1] === 'assistant/message:model', 'the final answer is last');

    const events = await api.sidecar.request('dsh/session/events', { sessionId: session.header.id });
    const types = events.events.map((e) => e.type);
    for (const t of ['turn/start', 'step/start', 'step/end', 'turn/end']) assert(types.includes(t), `${t} was recorded`);
    assert(types.filter((t) => t === 'step/end').length === 2, 'two steps ended');

    const pending = await api.sidecar.request('dsh/context/pending', { sessionId: session.header.id });
    assert(pending.messages.length === 0, 'nothing is left pending after the turn');

    const x = vscode.Uri.joinPath(folder.uri, 'pkg', 'src', 'x.txt');
    const scopes = await api.sidecar.request('dsh/scopes', { uri: x.toString() });
    const nested = scopes.files.find((f) => f.displayPath === 'pkg/AGENTS.md');
    assert(nested && nested.state === 'included', 'dsh/scopes lists pkg/AGENTS.md as included');

    const state = await api.refreshInspector();
    assert(state && state.session && state.session.visible.some((v) => v.title.includes('pkg/AGENTS.md')),
      'the inspector state lists the nested instructions');
    // Settings reach the server: initializationOptions at start, then a change. The pulled
    // `dsh` section must be the protocol tree (the raw one has client-only keys the server
    // refuses); the preview's baseline identity carries maxBytes, so it shows which won.
    const identity = async () =>
      JSON.parse((await api.sidecar.request('dsh/context/preview', { cwd: folder.uri.fsPath })).baselineIdentity);
    assert((await identity()).maxBytes === 65536, 'the default maxBytes arrived with initialize');
    await vscode.workspace.getConfiguration('dsh').update('instructions.maxBytes', 4321, vscode.ConfigurationTarget.Global);
    const settleBy = Date.now() + 10000;
    while ((await identity()).maxBytes !== 4321) {
      assert(Date.now() < settleBy, 'the changed dsh.instructions.maxBytes reached the server');
      await new Promise((r) => setTimeout(r, 200));
    }
    log('configuration change reached the server');

    // Restart: a new sidecar process, the folder's session resumed under the same id.
    const before = session.header.id;
    await vscode.commands.executeCommand('dsh.server.restart');
    const resumeBy = Date.now() + 20000;
    while (!(api.session(folder) && api.session(folder).resumed)) {
      assert(Date.now() < resumeBy, 'the session was resumed after the restart');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert(api.session(folder).header.id === before, 'the same session id after the restart');
    assert(api.session(folder).nextTurn === 2, 'the next turn continues the log');
    const again = await api.sidecar.request('dsh/session/surface', { sessionId: before });
    assert(again.events.length === surface.events.length, 'the resumed surface is the same');
    log('restart resumed the session');

    // Compaction: the model summarizes the visible history, which the checkpoint replaces.
    // The panel asks before compacting; a script confirms up front.
    const compacted = await vscode.commands.executeCommand('dsh.session.compact', { confirmed: true });
    assert(compacted === true, 'DSH: Compact Chat Session succeeded');
    const after = await api.sidecar.request('dsh/session/surface', { sessionId: before });
    assert(after.events.length === 1, `one checkpoint is left on the surface (${after.events.length})`);
    const checkpoint = after.events[0].data;
    assert(checkpoint.source.kind === 'plugin' && checkpoint.source.plugin === 'compact', 'the checkpoint is a compact summary');
    assert(text(checkpoint).startsWith('Summary:'), `the summary is the model's: ${text(checkpoint)}`);
    log('compaction replaced the history with the summary');

    // Mentions: the browser starts a new session and completes `@` in its prompt; the
    // candidate it inserts must be the session of the turn above.
    fs.writeFileSync(path.join(dir, 'suite-checked'), '{}');
    const mention = await waitForFile('mention-done', 60000);
    const fresh = api.session(folder);
    assert(fresh && fresh.header.id !== before, 'New session replaced the folder session');
    const m = /^@\[[^\]]*\]\(dsh-session:([A-Za-z0-9_-]+)\)$/.exec(mention.chipMention);
    assert(m, `a session mention stands behind the chip: ${JSON.stringify(mention)}`);
    assert(JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8')) === before,
      'the mention names the earlier session');
    log('mention completion inserted the earlier session');

    fs.writeFileSync(path.join(dir, 'suite-result.json'), JSON.stringify({ kinds, sessionId: before, scopes: scopes.files, mention }));
    log('all checks passed');
  } catch (err) {
    log(`FAILED: ${err && err.stack ? err.stack : err}`);
    throw err;
  }
};
