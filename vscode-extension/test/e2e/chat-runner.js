// @ts-check
/**
 * The chat panel as a user meets it, in real VS Code (code-server) and Chromium, against the
 * scripted model of tests/editors/test_vscode_chat_e2e.py. Each step asserts on what the page
 * shows, and on the disk where a file is involved; chat-suite.js answers questions about the
 * sidecar's log. The findings go to $DSH_E2E_DIR/chat-done for pytest.
 *
 * Environment: see lib.js, plus THEME_KIND (light | dark).
 */
const fs = require('node:fs');
const path = require('node:path');
const { env, say, launch, findFrame, findReadyFrame, runCommand, openFromExplorer, handshake, writeWhole, waitForFile, hardTimeout } = require('./lib');

const csUrl = env('CS_URL');
const workspace = env('WORKSPACE');
const extDir = env('EXT_DIR');
const dir = env('DSH_E2E_DIR');
const themeKind = env('THEME_KIND');

const APP = path.join(workspace, 'src', 'app.py');
const APP_TEXT = fs.readFileSync(APP, 'utf8');
const found = {};

function check(condition, message) {
  if (!condition) throw new Error(`check failed: ${message}`);
}

let callCount = 0;
/** Ask the extension-host suite (chat-suite.js). */
async function call(kind, payload = {}) {
  const n = ++callCount;
  writeWhole(`call-${n}.json`, JSON.stringify({ kind, ...payload }));
  const reply = await waitForFile(`answer-${n}.json`, 30000);
  if (reply.error) throw new Error(`${kind} failed in the extension host: ${reply.error}`);
  return reply.result;
}

async function main() {
  const browser = await launch();
  let code = 0;
  try {
    const context = await browser.newContext({ viewport: { width: 1500, height: 950 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: csUrl });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.log('[page error]', String(e).slice(0, 300)));
    await page.exposeFunction('codeAutomationLog', () => undefined);
    await page.exposeFunction('codeAutomationExit', (c) => say(`suite exit ${c}`));
    const remote = `vscode-remote://${new URL(csUrl).host}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', `${remote}${extDir}`],
      ['extensionTestsPath', `${remote}${path.join(extDir, 'test', 'e2e', 'chat-suite.js')}`],
      ['skipWelcome', 'true'],
    ]);
    await page.goto(`${csUrl}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 30000 });
    await waitForFile('chat-open', 60000);
    let chat = await findReadyFrame(page, '#prompt', '#session:has-text("session ")', 30000);
    say('chat open');

    // --- the empty panel names the model; the theme reaches the webview ------------------------
    found.bodyClass = await chat.evaluate(() => document.body.className);
    found.empty = await chat.locator('#empty').innerText();
    const ask = async (text) => {
      await chat.fill('#prompt', text);
      await chat.press('#prompt', 'Enter');
    };
    const idle = () => chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
    const lastAssistant = () => chat.locator('article.msg.assistant:not(.streaming)').last();

    // --- 1. Markdown, streamed block by block, and a prompt queued meanwhile -------------------
    await ask('MARKDOWN show me the plan');
    await chat.waitForSelector('article.streaming .stream-block', { timeout: 30000 });
    // The first finished block is rendered once: the same node is still there later.
    await chat.evaluate(() => {
      // @ts-ignore a marker for the test
      document.querySelector('article.streaming .stream-block').__first = true;
    });
    await chat.fill('#prompt', 'FOLLOWUP and then?');
    found.sendLabelWhileBusy = await chat.locator('#send').innerText();
    await chat.press('#prompt', 'Enter');
    await chat.waitForSelector('#queue li:has-text("FOLLOWUP and then?")', { timeout: 10000 });
    found.queued = await chat.locator('#queue').innerText();
    await chat.waitForFunction(() => document.querySelectorAll('article.streaming .stream-block').length >= 3, undefined, { timeout: 30000 });
    found.streamKeptFirstBlock = await chat.evaluate(() => {
      const first = document.querySelector('article.streaming .stream-block');
      // @ts-ignore the marker set above
      return first !== null && first.__first === true && first.isConnected;
    });
    await chat.waitForSelector('article.msg.assistant:not(.streaming) .code-block', { timeout: 30000 });
    const answer = chat.locator('article.msg.assistant:not(.streaming)').first();
    found.markdown = await answer.evaluate((node) => {
      const keyword = node.querySelector('code.language-python .hljs-keyword');
      const code = node.querySelector('.code-block pre code');
      const style = (el) => (el ? getComputedStyle(el) : undefined);
      return {
        text: node.textContent,
        h1: node.querySelector('h1')?.textContent,
        items: [...node.querySelectorAll('ul li')].map((li) => li.textContent),
        lang: node.querySelector('.code-lang')?.textContent,
        keyword: keyword?.textContent,
        keywordColor: style(keyword)?.color,
        codeColor: style(code)?.color,
        codeFont: style(code)?.fontFamily,
        editorFont: getComputedStyle(document.documentElement).getPropertyValue('--vscode-editor-font-family').trim(),
        links: [...node.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), dataHref: a.getAttribute('data-href') })),
        buttons: [...node.querySelectorAll('.code-block button')].map((b) => b.textContent),
      };
    });
    // The queued prompt went out when the turn completed.
    await chat.waitForSelector('article.msg.assistant:has-text("Follow-up answered.")', { timeout: 30000 });
    found.queueAfter = await chat.locator('#queue').isHidden();
    await idle();
    await page.screenshot({ path: path.join(dir, `chat-markdown-${themeKind}.png`) });
    say('markdown rendered');

    // Copy, a workspace link, Insert at the cursor of the file it opened.
    await answer.locator('.code-block button:has-text("Copy")').click();
    await chat.waitForSelector('#status:has-text("Copied to the clipboard.")', { timeout: 10000 });
    found.clipboard = await call('clipboard');
    await answer.locator('a:has-text("the app")').click();
    await page.waitForSelector('.tab.active:has-text("app.py")', { timeout: 15000 });
    await answer.locator('.code-block button:has-text("Insert into New File")').click();
    await chat.waitForSelector('#status:has-text("Inserted into a new, unsaved file.")', { timeout: 10000 });
    found.inserted = await call('activeDocument');
    await call('command', { command: 'workbench.action.revertAndCloseActiveEditor' });
    found.appOnDiskAfterInsert = fs.readFileSync(APP, 'utf8');
    found.reverted = await call('revert', { path: APP });
    say('copy, link and insert work');

    // The chain of the file in front of the user, as a quick pick.
    await runCommand(page, 'DSH: Show Workspace Instructions for This File');
    await page.waitForSelector('.quick-input-widget .quick-input-list .monaco-list-row', { timeout: 15000 });
    found.scopesTitle = await page.locator('.quick-input-widget .quick-input-title').innerText();
    found.scopesRows = await page.locator('.quick-input-widget .quick-input-list .monaco-list-row').allInnerTexts();
    await page.keyboard.press('Escape');

    // dsh.hover.otherFiles reaches the sidecar: no instruction hover on code by default, then one.
    found.hoverOff = await call('hover', { path: APP, line: 1, character: 4 });
    await call('config', { key: 'hover.otherFiles', value: 'always' });
    const hoverBy = Date.now() + 15000;
    for (;;) {
      found.hoverAlways = await call('hover', { path: APP, line: 1, character: 4 });
      if (found.hoverAlways.some((h) => h.includes('AGENTS.md')) || Date.now() > hoverBy) break;
      await page.waitForTimeout(200);
    }
    await call('config', { key: 'hover.otherFiles', value: undefined });

    // --- 2. An edit, shown as a diff, applied only on Accept ------------------------------------
    await ask('EDIT please change the greeting');
    await chat.waitForSelector('.approval.pending:has-text("src/app.py")', { timeout: 30000 });
    await page.waitForSelector('.tab:has-text("app.py (edit proposed by the agent)")', { timeout: 15000 });
    await page.waitForSelector('.monaco-diff-editor', { state: 'visible', timeout: 15000 });
    // The diff's text is laid out a moment after the editor shows.
    await page.waitForFunction(() => [...document.querySelectorAll('.monaco-diff-editor .editor.modified')].some((e) => (e.textContent || '').includes('good')), undefined, { timeout: 15000 });
    found.diffLines = await page.locator('.monaco-diff-editor .editor.modified:has-text("good")').first().innerText();
    found.beforeAccept = fs.readFileSync(APP, 'utf8');
    await page.screenshot({ path: path.join(dir, `chat-diff-${themeKind}.png`) });
    await chat.locator('.approval.pending button:has-text("Accept")').click();
    await chat.waitForSelector('.approval.accepted .verdict:has-text("Accepted: written.")', { timeout: 15000 });
    await chat.waitForSelector('article.msg.assistant:has-text("Edit done.")', { timeout: 30000 });
    await idle();
    found.afterAccept = fs.readFileSync(APP, 'utf8');
    found.diffClosed = (await page.locator('.tab:has-text("(edit proposed by the agent)")').count()) === 0;
    say('edit accepted');

    // --- 3. A write, rejected: nothing on disk, the model is told ------------------------------
    await ask('WRITE a new file please');
    await chat.waitForSelector('.approval.pending:has-text("src/new.txt")', { timeout: 30000 });
    found.newFileCard = await chat.locator('.approval.pending').innerText();
    await chat.locator('.approval.pending button:has-text("Reject")').click();
    await chat.waitForSelector('.approval.rejected .verdict:has-text("Rejected: not written.")', { timeout: 15000 });
    await chat.waitForSelector('article.msg.assistant:has-text("Noted, not written.")', { timeout: 30000 });
    await idle();
    found.newFileExists = fs.existsSync(path.join(workspace, 'src', 'new.txt'));
    say('write rejected');

    // --- 4. Stop keeps the partial answer; a queued prompt comes back into the box -------------
    await ask('STOP tell me a long story');
    await chat.waitForSelector('article.streaming:has-text("Partial answer that goes on")', { timeout: 30000 });
    await chat.fill('#prompt', 'QUEUED after stop');
    await chat.press('#prompt', 'Enter');
    await chat.waitForSelector('#queue li:has-text("QUEUED after stop")', { timeout: 10000 });
    await chat.press('#prompt', 'Escape');
    await idle();
    await chat.waitForSelector('article.msg.assistant.stopped:has-text("Partial answer that goes on")', { timeout: 15000 });
    found.stopped = await chat.locator('article.msg.assistant.stopped').last().innerText();
    found.stoppedLabel = await chat.locator('article.msg.assistant.stopped').last().getAttribute('aria-label');
    found.restored = await chat.inputValue('#prompt');
    found.status = await chat.locator('#status').innerText();
    const session = await call('session');
    const surface = await call('sidecar', { method: 'dsh/session/surface', params: { sessionId: session.id } });
    found.lastSurface = surface.events[surface.events.length - 1];
    await chat.fill('#prompt', '');
    say('stop kept the partial answer');

    // --- 5. A provider error in its own words, with Retry ----------------------------------------
    await ask('FAILONCE now');
    await chat.waitForSelector('#notice[role="alert"]:has-text("Rate limit reached")', { timeout: 30000 });
    found.error = await chat.locator('#notice .text').innerText();
    found.errorButtons = await chat.locator('#notice button').allInnerTexts();
    await page.screenshot({ path: path.join(dir, `chat-error-${themeKind}.png`) });
    await chat.locator('#notice button:has-text("Retry")').click();
    await chat.waitForSelector('article.msg.assistant:has-text("Recovered after retry.")', { timeout: 30000 });
    await idle();
    found.failOncePrompts = await chat.locator('article.msg.user:has-text("FAILONCE now")').count();
    say('error and retry');

    // --- 6. A prompt that fails before the model stays in the box, with the reason -------------
    // Written by the extension host before it answers; the panel reads settings per turn.
    await call('config', { key: 'model.baseUrl', value: '' });
    await ask('NOMODEL keep me');
    await chat.waitForSelector('#notice[role="alert"]:has-text("dsh.model.baseUrl")', { timeout: 15000 });
    found.noModel = await chat.locator('#notice .text').innerText();
    found.noModelButtons = await chat.locator('#notice button').allInnerTexts();
    found.keptPrompt = await chat.inputValue('#prompt');
    found.noModelSent = await chat.locator('article.msg.user:has-text("NOMODEL")').count();
    await call('config', { key: 'model.baseUrl', value: process.env.MODEL_BASE_URL });
    // ↑ in an empty box recalls earlier prompts, newest first.
    await chat.fill('#prompt', '');
    await chat.press('#prompt', 'ArrowUp');
    found.recall1 = await chat.inputValue('#prompt');
    await chat.press('#prompt', 'ArrowUp');
    found.recall2 = await chat.inputValue('#prompt');
    await chat.fill('#prompt', '');
    say('failed prompt kept; recall works');

    // --- 7. Compaction asks first; the inspector follows ------------------------------------------
    await runCommand(page, 'DSH: Show Context Inspector');
    const inspector = await findReadyFrame(page, '#root', '#root section.session', 30000);
    // A reload of the webviews for the inspector rebuilt the chat's frame too: take the new one.
    if (chat.isDetached()) chat = await findReadyFrame(page, '#prompt', '#session:has-text("session ")', 30000);
    await inspector.waitForSelector('section.session summary:has-text("baseline")', { timeout: 20000 });
    await chat.click('#compact');
    await chat.waitForSelector('#confirm:not([hidden])', { timeout: 10000 });
    found.confirm = await chat.locator('#confirm .text').innerText();
    await chat.locator('#confirm button:has-text("Compact")').click();
    await chat.waitForSelector('details.msg.context:has-text("Summary of earlier conversation")', { timeout: 30000 });
    await inspector.waitForSelector('section.session p:has-text("None yet")', { timeout: 20000 });
    found.afterCompactUsers = await chat.locator('article.msg.user').count();
    say('compaction confirmed; inspector refreshed');

    // --- 8. Sessions: a new one, then back to the earlier one -----------------------------------
    const before = await call('session');
    found.titled = before.title;
    await chat.click('#new-session');
    await chat.waitForFunction((old) => !document.getElementById('session')?.title.includes(old), before.id, { timeout: 20000 });
    await chat.waitForSelector('#empty', { timeout: 10000 });
    found.newTitle = await chat.locator('#session-title').innerText();
    await chat.click('#sessions-button');
    await chat.waitForSelector(`#session-list li[data-id="${before.id}"]`, { timeout: 15000 });
    found.sessionList = await chat.locator('#session-list li').allInnerTexts();
    await page.screenshot({ path: path.join(dir, `chat-sessions-${themeKind}.png`) });
    await chat.locator(`#session-list li[data-id="${before.id}"]`).click();
    await chat.waitForSelector('details.msg.context:has-text("Summary of earlier conversation")', { timeout: 20000 });
    found.switchedTitle = await chat.locator('#session-title').innerText();
    found.switchedTo = (await call('session')).id === before.id;
    say('session switch');

    // --- 9. Pending context: drop one change, then the rest ---------------------------------------
    await chat.click('#new-session');
    await chat.waitForSelector('#empty', { timeout: 20000 });
    await ask('FOLLOWUP first turn of a fresh session');
    await chat.waitForSelector('article.msg.assistant:has-text("Follow-up answered.")', { timeout: 30000 });
    await idle();
    // Opening files is a touch: their folders' AGENTS.md are queued for the next step.
    await openFromExplorer(page, 'pkg', 'x.txt');
    await openFromExplorer(page, 'lib', 'y.txt');
    await runCommand(page, 'DSH: Open Agent Chat'); // the files opened over it: bring it back
    await chat.waitForSelector('#pending .pending-change:has-text("lib/AGENTS.md")', { timeout: 30000 });
    found.pendingBefore = await chat.locator('#pending').innerText();
    await page.screenshot({ path: path.join(dir, `chat-pending-${themeKind}.png`) });
    await chat.locator('#pending .pending-change:has-text("lib/AGENTS.md") button:has-text("Drop")').click();
    await chat.waitForFunction(() => !document.querySelector('#pending')?.textContent?.includes('lib/AGENTS.md'), undefined, { timeout: 15000 });
    found.pendingAfterOne = await chat.locator('#pending').innerText();
    // The rest is dropped from the inspector; the chat panel follows (dsh/context/didChange).
    await runCommand(page, 'DSH: Show Context Inspector');
    const pendingInspector = await findFrame(page, '#root section.session .pending button.drop', 30000);
    found.inspectorPending = await pendingInspector.locator('section.session .context-list.pending').innerText();
    await pendingInspector.locator('section.session .context-list.pending summary button.drop').first().click();
    await pendingInspector.waitForSelector('section.session p.muted:has-text("Nothing pending.")', { timeout: 15000 });
    await chat.waitForSelector('#pending', { state: 'hidden', timeout: 15000 });
    const fresh = await call('session');
    found.pendingLeft = (await call('sidecar', { method: 'dsh/context/pending', params: { sessionId: fresh.id } })).messages;
    await ask('FOLLOWUP after dropping');
    await chat.waitForSelector('article.msg.user:has-text("FOLLOWUP after dropping") ~ article.msg.assistant:has-text("Follow-up answered.")', { timeout: 30000 });
    await idle();
    say('pending context dropped');

    // --- accessibility ---------------------------------------------------------------------------
    found.a11y = await chat.evaluate(() => ({
      log: [document.getElementById('log')?.getAttribute('role'), document.getElementById('log')?.getAttribute('aria-live')],
      status: document.getElementById('status')?.getAttribute('aria-live'),
      prompt: [document.getElementById('prompt')?.getAttribute('role'), document.getElementById('prompt')?.getAttribute('aria-controls')],
    }));
    await page.screenshot({ path: path.join(dir, `chat-${themeKind}.png`) });
    handshake('chat-done', found);
    say('done');
  } catch (err) {
    console.error('[runner] FAILED:', err && err.stack ? err.stack : err);
    console.error('[runner] found so far:', JSON.stringify(found).slice(0, 4000));
    try {
      const pages = browser.contexts().flatMap((c) => c.pages());
      if (pages[0]) await pages[0].screenshot({ path: path.join(dir, 'chat-failure.png') });
    } catch {
      // the screenshot is a courtesy
    }
    code = 2;
  } finally {
    handshake('done', {});
    await browser.close().catch(() => undefined);
  }
  process.exit(code);
}

hardTimeout();
main();
