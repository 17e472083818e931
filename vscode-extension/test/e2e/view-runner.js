// @ts-check
/**
 * The chat as a view, settings that never take the sidecar down, and the time zone, in real VS
 * Code (code-server) and Chromium, against the scripted model of
 * tests/editors/test_vscode_view_e2e.py. The browser runs in America/New_York; the User
 * settings start with an invalid `dsh.timeContext.timeZone`. chat-suite.js is the
 * extension-host half. Findings go to $DSH_E2E_DIR/view-done for pytest.
 *
 * Environment: see lib.js, plus THEME_KIND (light | dark) and SCREENSHOTS (a folder).
 */
const fs = require('node:fs');
const path = require('node:path');
const { env, say, launch, findFrame, findReadyFrame, runCommand, writeWhole, waitForFile, hardTimeout, recordNotifications, notificationsSeen, contrastFailures, CHAT_VIEW_TITLE } = require('./lib');

const csUrl = env('CS_URL');
const workspace = env('WORKSPACE');
const extDir = env('EXT_DIR');
const dir = env('DSH_E2E_DIR');
const themeKind = env('THEME_KIND');
const shots = env('SCREENSHOTS');
const found = { contrast: [] };
const DEEP = 'packages/a-rather-long-package-name/src/components/deeply/nested/module';

let callCount = 0;
async function call(kind, payload = {}) {
  const n = ++callCount;
  writeWhole(`call-${n}.json`, JSON.stringify({ kind, ...payload }));
  const reply = await waitForFile(`answer-${n}.json`, 30000);
  if (reply.error) throw new Error(`${kind} failed in the extension host: ${reply.error}`);
  return reply.result;
}

/** Wait until `predicate` (async) holds, bounded. */
async function until(page, what, predicate, ms = 20000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await page.waitForTimeout(200);
  }
  throw new Error(`timed out: ${what}`);
}

async function main() {
  const browser = await launch();
  let code = 0;
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, timezoneId: 'America/New_York' });
    const page = await context.newPage();
    page.on('pageerror', (e) => console.log('[page error]', String(e).slice(0, 300)));
    // Errors, and the webview host's service-worker messages (a webview stuck there stays blank).
    page.on('console', (m) => {
      if (m.type() === 'error' || /service worker|Webview fatal/i.test(m.text())) console.log(`[console ${m.type()}]`, m.text().slice(0, 300));
    });
    await recordNotifications(page);
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
    const chat = await findReadyFrame(page, '#prompt', '#session:has-text("session")', 30000);
    say('chat open');

    // --- 3. the chat is a view, not an editor tab ------------------------------------------
    found.viewHeader = await page.locator(CHAT_VIEW_TITLE('ws')).count();
    found.chatTabsAtStart = await page.locator('.tabs-container .tab:has-text("Agent:")').count();

    // --- 1. the refused setting: one notification, key, value, expected form, a link ------------
    const refusal = page.locator('.notification-list-item-message:has-text("Mars/Olympus")');
    await refusal.first().waitFor({ state: 'visible', timeout: 30000 });
    found.refusalText = (await refusal.first().innerText()).trim();
    found.refusalLinks = await refusal.first().locator('a').allInnerTexts();

    const ask = async (text) => {
      await chat.fill('#prompt', text);
      await chat.press('#prompt', 'Enter');
    };
    const idle = () => chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
    const answers = () => chat.locator('article.msg.assistant:not(.streaming)').count();

    // Everything else runs: the chat answers, with the browser's zone (the setting is refused).
    await ask('TIME first');
    await until(page, 'first answer', async () => (await answers()) >= 1, 60000);
    await idle();

    // Copy on a message copies what it says (the Markdown source of an answer).
    await chat.locator('article.msg.assistant').first().locator('button.msg-action:has-text("Copy")').click();
    await chat.waitForSelector('#status:has-text("Copied to the clipboard.")', { timeout: 10000 });
    found.copiedAnswer = await call('clipboard');

    // Open Setting opens the settings editor on that very setting.
    await refusal.first().locator('a:has-text("Open Setting")').click();
    await page.waitForSelector('.settings-editor', { timeout: 15000 });
    await page.waitForSelector('.settings-editor .setting-item-contents:has-text("Time Zone")', { timeout: 15000 });
    found.settingsSearch = await page.evaluate(() => {
      const input = document.querySelector('.settings-editor .suggest-input-container textarea, .settings-editor .suggest-input-container input');
      return input ? /** @type {HTMLInputElement} */ (input).value : null;
    });
    found.settingsRows = await page.locator('.settings-editor .setting-item-contents .setting-item-label').allInnerTexts();

    // Fixed: applies without a restart; the notification goes away.
    await call('config', { key: 'timeContext.timeZone', value: 'Asia/Tokyo' });
    await until(page, 'the refusal notification goes away', async () => (await refusal.count()) === 0, 20000);
    found.refusalGone = true;
    await chat.locator('#prompt').click();
    await ask('TIME second');
    await until(page, 'second answer', async () => (await answers()) >= 2, 60000);
    await idle();

    // Later: another bad value is told (and the last good one kept), then fixed again.
    await call('config', { key: 'timeContext.timeZone', value: 'Nowhere/Land' });
    const later = page.locator('.notification-list-item-message:has-text("Nowhere/Land")');
    await later.first().waitFor({ state: 'visible', timeout: 20000 });
    found.laterText = (await later.first().innerText()).trim();
    await ask('TIME third');
    await until(page, 'third answer', async () => (await answers()) >= 3, 60000);
    await idle();
    await call('config', { key: 'timeContext.timeZone', value: null });
    await until(page, 'the second refusal goes away', async () => (await later.count()) === 0, 20000);
    found.notifications = await notificationsSeen(page);

    // --- 6. tool calls as cards; Reject with a reason ----------------------------------------
    await ask('TOOLS read the rules, then write a file');
    const writeCard = chat.locator('.tool-card:has(.tool-name:text-is("write"))');
    await writeCard.waitFor({ state: 'visible', timeout: 30000 });
    await chat.waitForSelector('.approval.pending:has-text("src/new.txt")', { timeout: 30000 });
    const cardOf = async (card) => ({
      tool: await card.locator('.tool-name').innerText(),
      file: await card.locator('.tool-file').innerText(),
      href: await card.locator('.tool-file').getAttribute('data-href'),
      status: (await card.locator('.tool-status').innerText()).trim(),
      resultOpen: await card.locator('details.tool-result').evaluate((d) => /** @type {HTMLDetailsElement} */ (d).open),
      result: await card.locator('details.tool-result pre').textContent(),
    });
    const readCard = chat.locator('.tool-card:has(.tool-name:text-is("read"))');
    await chat.waitForSelector('.tool-card.done:has(.tool-name:text-is("read"))', { timeout: 15000 });
    found.readCard = { ...(await cardOf(readCard)), separateResults: await chat.locator('details.msg.tool-result').count() };
    found.writeCard = { statusWhilePending: (await writeCard.locator('.tool-status').innerText()).trim() };
    found.contrast.push(...(await contrastFailures(chat, 'chat with a tool card and a pending write')));
    await chat.fill('.approval.pending .reject-reason', 'put it under lib/ instead');
    await page.screenshot({ path: path.join(shots, `tool-card-${themeKind}.png`) });
    await chat.locator('.approval.pending button:has-text("Reject")').click();
    await chat.waitForSelector('.tool-card.rejected:has(.tool-name:text-is("write"))', { timeout: 15000 });
    await chat.waitForSelector('article.msg.assistant:has-text("Understood, not written.")', { timeout: 30000 });
    await idle();
    found.writeCard = { ...found.writeCard, ...(await cardOf(writeCard)) };
    found.writeCard.status = found.writeCard.status.replace(/^✗ /, '');
    // The file link opens the file.
    await readCard.locator('.tool-file').click();
    await page.waitForSelector('.tab.active:has-text("AGENTS.md")', { timeout: 15000 });
    found.openedFromCard = 'AGENTS.md';

    // --- 7. instructions before the first edit ------------------------------------------------
    await ask('DEEPEDIT write the lib notes');
    await chat.waitForSelector('.approval.pending:has-text("lib/notes.txt")', { timeout: 30000 });
    const deepCards = chat.locator('.tool-card:has(.tool-file:text-is("lib/notes.txt"))');
    found.preEdit = {
      approvals: await chat.locator('.approval:has-text("lib/notes.txt")').count(),
      firstStatus: (await deepCards.first().locator('.tool-status').innerText()).trim(),
    };
    await chat.locator('.approval.pending button:has-text("Accept")').click();
    await chat.waitForSelector('article.msg.assistant:has-text("Written after reading the lib rules.")', { timeout: 30000 });
    await idle();

    // --- 4. Apply a code block: a reviewed diff into the file it names ------------------------
    await ask('CODE improve greet');
    const block = chat.locator('article.msg.assistant:has-text("Use this") .code-block');
    await block.waitFor({ state: 'visible', timeout: 30000 });
    await idle();
    await block.locator('button:has-text("Apply")').click();
    await chat.waitForSelector('.approval.pending:has-text("src/mod.py")', { timeout: 15000 });
    await page.waitForSelector('.tab:has-text("mod.py (edit proposed by the agent)")', { timeout: 15000 });
    await page.waitForFunction(() => [...document.querySelectorAll('.monaco-diff-editor .editor.modified')].some((e) => (e.textContent || '').includes('good')), undefined, { timeout: 15000 });
    found.apply = {
      card: (await chat.locator('.approval.pending .approval-text').innerText()).trim(),
      diffTab: true,
      onDiskBeforeAccept: fs.readFileSync(path.join(workspace, 'src', 'mod.py'), 'utf8'),
    };
    await page.screenshot({ path: path.join(shots, `apply-diff-${themeKind}.png`) });
    found.contrast.push(...(await contrastFailures(chat, 'chat with a code block and a pending apply')));
    await chat.locator('.approval.pending button:has-text("Accept")').click();
    await chat.waitForSelector('.approval.accepted', { timeout: 15000 });
    await until(page, 'the block is written', async () => fs.readFileSync(path.join(workspace, 'src', 'mod.py'), 'utf8').includes('good day'), 15000);

    // --- 5. retry the last answer; edit the last prompt and send it again ----------------------
    const usersBefore = await chat.locator('article.msg.user').count();
    await chat.locator('article.msg.assistant.last button.retry').click();
    await chat.waitForSelector('#status:has-text("The agent answered.")', { timeout: 30000 });
    await idle();
    const usersAfterRetry = await chat.locator('article.msg.user').count();
    await chat.locator('article.msg.user.last button.edit').click();
    await chat.fill('article.msg.user.last .edit-box', 'TIME edited prompt');
    await chat.click('article.msg.user.last .edit-actions button:has-text("Resend")');
    await chat.waitForSelector('article.msg.assistant.last:has-text("Answer 12")', { timeout: 30000 });
    await idle();
    found.redo = {
      usersBefore,
      usersAfterRetry,
      usersAfterEdit: await chat.locator('article.msg.user').count(),
      lastPrompt: (await chat.locator('article.msg.user.last .body').innerText()).trim(),
      editButtons: await chat.locator('button.edit:visible').count(),
      retryButtons: await chat.locator('button.retry:visible').count(),
    };

    // --- 3. survives Close All Editors; keeps its state hidden; keybindings ----------------
    await runCommand(page, 'View: Close All Editors');
    await page.waitForTimeout(1000);
    found.afterCloseAll = {
      frame: (await findFrame(page, '#prompt', 5000)) === chat,
      messages: await chat.locator('article.msg.user').count(),
    };
    await runCommand(page, 'View: Show Explorer');
    await page.waitForSelector('.explorer-folders-view', { state: 'visible', timeout: 10000 });
    found.hiddenWhileExplorer = !(await page.locator(CHAT_VIEW_TITLE('ws')).isVisible());
    await page.keyboard.press('Control+Alt+D');
    await page.waitForSelector(CHAT_VIEW_TITLE('ws'), { state: 'visible', timeout: 10000 });
    await page.waitForTimeout(500);
    found.afterShow = { messages: await chat.locator('article.msg.user').count() };
    await page.screenshot({ path: path.join(shots, `chat-view-${themeKind}.png`) });
    found.titleVisible = await chat.locator('#session-title').isVisible();
    found.focusInChat = await chat.evaluate(() => document.hasFocus());
    await page.keyboard.press('Control+Alt+Shift+D');
    await chat.waitForFunction(() => document.getElementById('session-title')?.textContent === 'New session', undefined, { timeout: 15000 });
    found.afterNewSession = { messages: await chat.locator('article.msg.user').count() };

    // --- 5. history: search, rename, delete (confirmed) ----------------------------------------
    await chat.click('#sessions-button');
    await chat.waitForSelector('#session-list li[role=option]:has-text("TIME first")', { timeout: 15000 });
    found.sessionsBefore = await chat.locator('#session-list li[role=option] .title').allInnerTexts();
    found.contrast.push(...(await contrastFailures(chat, 'chat with the session list')));
    await chat.fill('#session-list .session-search', 'time');
    found.searchVisible = await chat.locator('#session-list li[role=option]:visible .title').allInnerTexts();
    const row = chat.locator('#session-list li[role=option]:has-text("TIME first")');
    found.firstSessionId = await row.getAttribute('data-id');
    await row.locator('button.rename').click();
    await chat.fill('#session-list .rename-input', 'Renamed history');
    await chat.press('#session-list .rename-input', 'Enter');
    // The search stays as typed ("time"), so the renamed row is listed but filtered out.
    await chat.waitForSelector('#session-list li[role=option]:has-text("Renamed history")', { state: 'attached', timeout: 15000 });
    found.renamedHiddenBySearch = await chat.locator('#session-list li[role=option]:has-text("Renamed history")').isHidden();
    found.renamedList = await chat.locator('#session-list li[role=option] .title').allInnerTexts();
    found.renamedInStore = await call('sidecar', { method: 'dsh/session/list', params: {} });
    await chat.fill('#session-list .session-search', '');
    await chat.locator('#session-list li[role=option]:has-text("Renamed history") button.delete').click();
    await chat.waitForSelector('#confirm:not([hidden]) button:has-text("Delete")', { timeout: 10000 });
    found.deleteQuestion = await chat.locator('#confirm .text').innerText();
    found.contrast.push(...(await contrastFailures(chat, 'chat asking to delete')));
    await chat.click('#confirm button:has-text("Delete")');
    await chat.waitForSelector('#status:has-text("Deleted the session")', { timeout: 15000 });
    found.afterDelete = await call('sidecar', { method: 'dsh/session/list', params: {} });

    // The defaults of this editor do not bind our keys to anything else.
    const defaults = /** @type {string} */ (await call('defaultKeybindings'));
    found.conflicts = [];
    for (const m of defaults.matchAll(/"key":\s*"([^"]+)",\s*"command":\s*"([^"]+)"/g)) {
      if ((m[1] === 'ctrl+alt+d' || m[1] === 'ctrl+alt+shift+d' || m[1] === 'ctrl+shift+alt+d') && !m[2].startsWith('dsh.')) found.conflicts.push(`${m[1]} ${m[2]}`);
    }
    found.defaultsListOurs = /"key":\s*"ctrl\+alt\+d",\s*"command":\s*"dsh\.chat\.open"/.test(defaults);
    found.defaultsSize = defaults.length;

    // --- 4. the inspector: a long pending title wraps at "/" and Drop stays in view -------------
    await call('openFile', { path: path.join(workspace, ...DEEP.split('/'), 'x.txt') });
    // The inspector lives in the panel, as wide as the editors; a narrow window gives it the
    // width of a side bar, where a long title must wrap (users move views wherever they like).
    await page.setViewportSize({ width: 760, height: 900 });
    await call('command', { command: 'dsh.inspector.show' });
    const inspector = await findFrame(page, '#root', 15000);
    await inspector.waitForSelector('.context-list.pending .context-item', { timeout: 30000 });
    found.inspector = await inspector.evaluate(() => {
      const summary = document.querySelector('.context-list.pending .context-item summary');
      const title = summary.querySelector('.title');
      const drop = summary.querySelector('.drop');
      const width = document.documentElement.clientWidth;
      const r = drop.getBoundingClientRect();
      return {
        title: title.textContent,
        wbr: title.querySelectorAll('wbr').length,
        titleLines: Math.round(title.getBoundingClientRect().height / (parseFloat(getComputedStyle(title).lineHeight) || parseFloat(getComputedStyle(title).fontSize) * 1.2)),
        dropInView: r.width > 0 && r.left >= 0 && r.right <= width,
        scrollsSideways: document.documentElement.scrollWidth > width,
      };
    });
    await page.screenshot({ path: path.join(shots, `inspector-pending-${themeKind}.png`) });
    found.contrast.push(...(await contrastFailures(inspector, 'inspector with a pending change')));
    found.contrast.push(...(await contrastFailures(chat, 'chat with pending context')));
    await page.setViewportSize({ width: 1400, height: 900 });

    // Open in Editor still gives a tab.
    await runCommand(page, 'DSH: Open Agent Chat in Editor');
    await page.waitForSelector('.tabs-container .tab:has-text("Agent:")', { timeout: 15000 });
    found.editorTab = true;
  } catch (err) {
    code = 1;
    console.error(err && err.stack ? err.stack : String(err));
    try {
      const pages = browser.contexts()[0]?.pages() ?? [];
      if (pages[0]) await pages[0].screenshot({ path: path.join(dir, 'failure.png') });
    } catch {
      // best effort
    }
  } finally {
    fs.writeFileSync(path.join(dir, 'view-done'), JSON.stringify(found, null, 2));
    fs.writeFileSync(path.join(dir, 'done'), '{}');
    await browser.close();
  }
  process.exit(code);
}

hardTimeout();
void main();
