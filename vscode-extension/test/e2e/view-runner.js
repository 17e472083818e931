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
const { env, say, launch, findFrame, runCommand, waitForFile, hardTimeout, recordNotifications, notificationsSeen } = require('./lib');

const csUrl = env('CS_URL');
const workspace = env('WORKSPACE');
const extDir = env('EXT_DIR');
const dir = env('DSH_E2E_DIR');
const themeKind = env('THEME_KIND');
const shots = env('SCREENSHOTS');
const found = {};

let callCount = 0;
async function call(kind, payload = {}) {
  const n = ++callCount;
  fs.writeFileSync(path.join(dir, `call-${n}.json`), JSON.stringify({ kind, ...payload }));
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
    const chat = await findFrame(page, '#prompt', 30000);
    await chat.waitForSelector('#session:has-text("session")', { timeout: 20000 });
    say('chat open');

    // --- 3. the chat is a view, not an editor tab ------------------------------------------
    found.viewHeader = await page.locator('.pane-header:has-text("Agent: ws")').count();
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

    // --- 3. survives Close All Editors; keeps its state hidden; keybindings ----------------
    await runCommand(page, 'View: Close All Editors');
    await page.waitForTimeout(1000);
    found.afterCloseAll = {
      frame: (await findFrame(page, '#prompt', 5000)) === chat,
      messages: await chat.locator('article.msg.user').count(),
    };
    await runCommand(page, 'View: Show Explorer');
    await page.waitForSelector('.explorer-folders-view', { state: 'visible', timeout: 10000 });
    found.hiddenWhileExplorer = !(await page.locator('.pane-header:has-text("Agent: ws")').isVisible());
    await page.keyboard.press('Control+Alt+D');
    await page.waitForSelector('.pane-header:has-text("Agent: ws")', { state: 'visible', timeout: 10000 });
    await page.waitForTimeout(500);
    found.afterShow = { messages: await chat.locator('article.msg.user').count() };
    await page.screenshot({ path: path.join(shots, `chat-view-${themeKind}.png`) });
    found.titleVisible = await chat.locator('#session-title').isVisible();
    found.focusInChat = await chat.evaluate(() => document.hasFocus());
    await page.keyboard.press('Control+Alt+Shift+D');
    await chat.waitForFunction(() => document.getElementById('session-title')?.textContent === 'New session', undefined, { timeout: 15000 });
    found.afterNewSession = { messages: await chat.locator('article.msg.user').count() };

    // The defaults of this editor do not bind our keys to anything else.
    const defaults = /** @type {string} */ (await call('defaultKeybindings'));
    found.conflicts = [];
    for (const m of defaults.matchAll(/"key":\s*"([^"]+)",\s*"command":\s*"([^"]+)"/g)) {
      if ((m[1] === 'ctrl+alt+d' || m[1] === 'ctrl+alt+shift+d' || m[1] === 'ctrl+shift+alt+d') && !m[2].startsWith('dsh.')) found.conflicts.push(`${m[1]} ${m[2]}`);
    }
    found.defaultsListOurs = /"key":\s*"ctrl\+alt\+d",\s*"command":\s*"dsh\.chat\.open"/.test(defaults);
    found.defaultsSize = defaults.length;

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
