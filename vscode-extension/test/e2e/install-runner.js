// @ts-check
/**
 * The extension installed from its .vsix, as a user gets it: no virtualenv on PATH, and
 * dsh.pythonPath first set to an interpreter that does not exist. Checks that exactly one
 * notification explains it and that its "Open Setting" button leads to dsh.pythonPath; clears the
 * setting there (as a user would); then checks that the sidecar starts on its own with python3
 * from PATH and the bundled libraries, and answers: the status bar counts the instruction files
 * of x.txt and the inspector lists the chain.
 *
 * Environment: see lib.js, plus THEME_KIND (light | dark).
 */
const path = require('node:path');
const {
  env, say, launch, findReadyFrame, openFromExplorer, handshake, hardTimeout, recordNotifications, notificationsSeen,
} = require('./lib');

const csUrl = env('CS_URL');
const workspace = env('WORKSPACE');
const dir = env('DSH_E2E_DIR');
const themeKind = env('THEME_KIND');

async function main() {
  const browser = await launch();
  let code = 0;
  try {
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    page.on('pageerror', (e) => console.log('[page error]', String(e).slice(0, 300)));
    await recordNotifications(page);
    await page.goto(`${csUrl}/?folder=${encodeURIComponent(workspace)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 30000 });
    say('workbench up');

    // 1. One notification says what is missing, naming the setting, with a button to it.
    const toast = page.locator('.notification-toast:has-text("DSH Sidecar:")').first();
    await toast.waitFor({ state: 'visible', timeout: 60000 });
    const toastText = await toast.locator('.notification-list-item-message').innerText();
    const toastButtons = await toast.locator('.notification-list-item-buttons-container .monaco-button').allInnerTexts();
    say(`notification: ${toastText} [${toastButtons.join(' | ')}]`);
    await page.screenshot({ path: path.join(dir, `install-problem-${themeKind}.png`) });
    await toast.getByRole('button', { name: 'Open Setting' }).click();

    // 2. The settings editor shows dsh.pythonPath; clearing it there restarts the sidecar.
    const row = page.locator('.settings-editor .setting-item-contents[data-key="dsh.pythonPath"]').first();
    await row.waitFor({ state: 'visible', timeout: 20000 });
    const settingShown = await row.innerText();
    const input = row.locator('input').first();
    await input.fill('');
    await input.press('Enter');
    say('dsh.pythonPath cleared in the settings editor');

    // 3. The sidecar runs: x.txt's chain in the status bar and the inspector.
    await openFromExplorer(page, 'pkg', 'src', 'x.txt');
    const status = page.locator('.statusbar-item[aria-label*="instruction file"]').first();
    await page.waitForFunction(
      () => [...document.querySelectorAll('.statusbar-item')].some((e) => /2 instruction files apply to x\.txt/.test(e.getAttribute('aria-label') || '')),
      undefined,
      { timeout: 60000 },
    );
    const statusLabel = await status.getAttribute('aria-label');
    say(`status bar: ${statusLabel}`);
    await status.click();
    const inspector = await findReadyFrame(page, '#root', '#root section.chain', 30000);
    await inspector.waitForSelector('section.chain td.file:has-text("pkg/AGENTS.md")', { timeout: 20000 });
    const inspectorText = await inspector.locator('#root').innerText();
    const bodyClass = await inspector.evaluate(() => document.body.className);
    await page.screenshot({ path: path.join(dir, `install-running-${themeKind}.png`) });

    // 4. Every notification shown since the page loaded: one message, no cascade.
    const notifications = await notificationsSeen(page);
    handshake('install-done', { toastText, toastButtons, settingShown, statusLabel, inspectorText, bodyClass, notifications });
    say('done');
  } catch (err) {
    console.error('[runner] FAILED:', err && err.stack ? err.stack : err);
    try {
      const pages = browser.contexts().flatMap((c) => c.pages());
      if (pages[0]) await pages[0].screenshot({ path: path.join(dir, 'install-failure.png') });
    } catch {
      // the screenshot is a courtesy
    }
    code = 2;
  } finally {
    await browser.close().catch(() => undefined);
  }
  process.exit(code);
}

hardTimeout();
main();
