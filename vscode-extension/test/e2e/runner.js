// @ts-check
/**
 * Browser half of the end-to-end test: drives the real VS Code workbench (code-server) in
 * Debian's Chromium through playwright-core. Loads the extension and suite.js through the
 * workbench `payload` URL, types a prompt into the chat webview, opens the nested file, opens
 * the inspector from the status bar, takes a screenshot, and exits with the suite's exit code.
 *
 * Environment: PLAYWRIGHT_CORE (module path), CS_URL (http://127.0.0.1:PORT), WORKSPACE, EXT_DIR,
 * DSH_E2E_DIR (handshake folder, also where the screenshots go), CHROMIUM.
 */
const fs = require('node:fs');
const path = require('node:path');

const { env, say, launch, findReadyFrame, runCommand, openFromExplorer, writeWhole } = require('./lib');

const csUrl = env('CS_URL');
const workspace = env('WORKSPACE');
const extDir = env('EXT_DIR');
const dir = env('DSH_E2E_DIR');
const PROMPT = 'Please read pkg/src/x.txt and tell me what it says.';
const ANSWER = process.env.EXPECTED_ANSWER || 'The file says: hello from x';

/** The extension-host suite's result, once the workbench reports it. */
let exitCode = null;

async function waitForFile(name, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (fs.existsSync(path.join(dir, name))) return;
    // The suite ended (it failed, or never got this far): nobody will write the file.
    if (exitCode !== null) throw new Error(`the extension-host suite ended (exit ${exitCode}) before ${name}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${name} from the extension host`);
}

async function main() {
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1500, height: 900 } });
    await page.exposeFunction('codeAutomationLog', (type, args) => console.log('[vscode]', type, JSON.stringify(args).slice(0, 500)));
    await page.exposeFunction('codeAutomationExit', (code) => {
      exitCode = code;
    });
    page.on('pageerror', (e) => console.log('[page error]', String(e).slice(0, 300)));

    const remote = `vscode-remote://${new URL(csUrl).host}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', `${remote}${extDir}`],
      ['extensionTestsPath', `${remote}${path.join(extDir, 'test', 'e2e', 'suite.js')}`],
      ['skipWelcome', 'true'],
    ]);
    await page.goto(`${csUrl}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 30000 });
    say('workbench up');

    await waitForFile('chat-open', 60000);
    let chat = await findReadyFrame(page, '#prompt', '#session:has-text("session ")', 30000);
    say('chat webview found');
    await chat.fill('#prompt', PROMPT);
    await chat.press('#prompt', 'Enter');
    say('prompt sent');
    await chat.waitForSelector(`.msg.assistant:not(.streaming):has-text("${ANSWER}")`, { timeout: 60000 });
    await chat.waitForSelector('#send:has-text("Send")', { timeout: 10000 }); // no longer busy
    say('answer shown');
    const chatText = await chat.locator('#log').innerText();

    // Open the nested file from the explorer (as a person would) so the status bar and the
    // inspector's chain describe it.
    // (The chat view holds the side bar now: the Explorer is brought up first.)
    await openFromExplorer(page, 'pkg', 'src', 'x.txt');
    // Beside the chat, so the screenshot shows both.
    await runCommand(page, 'View: Move Editor into Right Group');
    await page.waitForFunction(() => document.querySelectorAll('.editor-group-container').length >= 2, undefined, { timeout: 10000 })
      .catch(() => say('(x.txt did not move to a right group)'));
    say('x.txt open');

    const status = page.locator('.statusbar-item[aria-label*="instruction file"]');
    await status.first().waitFor({ state: 'visible', timeout: 20000 });
    await page.waitForFunction(
      () => [...document.querySelectorAll('.statusbar-item')].some((e) => /2 instruction files apply to x\.txt/.test(e.getAttribute('aria-label') || '')),
      undefined,
      { timeout: 20000 },
    );
    const statusLabel = await status.first().getAttribute('aria-label');
    await status.first().click();
    say(`status bar: ${statusLabel}`);

    const inspector = await findReadyFrame(page, '#root', '#root section.chain', 30000);
    // A reload of the webviews for the inspector rebuilt the chat's frame too: take the new one.
    if (chat.isDetached()) chat = await findReadyFrame(page, '#prompt', '#session:has-text("session ")', 30000);
    await inspector.waitForSelector('section.chain td.file:has-text("pkg/AGENTS.md")', { timeout: 20000 });
    await inspector.waitForSelector('section.session summary:has-text("pkg/AGENTS.md")', { timeout: 20000 });
    // Unfold the nested instructions so the screenshot shows their text.
    await inspector.locator('section.session summary:has-text("set pkg/AGENTS.md")').first().click();
    await page.waitForTimeout(300);
    const inspectorText = await inspector.locator('#root').innerText();
    say('inspector shows pkg/AGENTS.md');

    const shot = path.join(dir, 'vscode-e2e.png');
    await page.screenshot({ path: shot });
    say(`screenshot ${shot}`);
    writeWhole('ui-done', JSON.stringify({ chatText, inspectorText, statusLabel }));

    // Mention completion, in a new session so the first one is a candidate.
    await waitForFile('suite-checked', 60000);
    const oldLabel = await chat.locator('#session').innerText();
    await chat.click('#new-session');
    await chat.waitForFunction((old) => {
      const label = document.getElementById('session')?.textContent ?? '';
      return label.startsWith('session ') && label !== old && document.querySelectorAll('#log .msg').length === 0;
    }, oldLabel, { timeout: 20000 });
    await chat.click('#prompt');
    await chat.type('#prompt', 'Compare with @w');
    await chat.waitForSelector('#mentions:not([hidden]) li.selected', { timeout: 15000 });
    const candidates = await chat.locator('#mentions li').allInnerTexts();
    await page.screenshot({ path: path.join(dir, 'vscode-e2e-mention.png') });
    await chat.press('#prompt', 'Enter'); // takes the highlighted candidate, does not send
    await chat.waitForSelector('#mentions[hidden]', { state: 'attached', timeout: 5000 });
    const prompt = await chat.inputValue('#prompt');
    // The box shows the session's label as a chip; the mention markup stands behind it.
    const chip = chat.locator('#prompt-backdrop mark.chip');
    const chipText = await chip.innerText();
    const chipMention = await chip.getAttribute('title');
    say(`mention inserted: ${prompt} (chip ${chipText} -> ${chipMention})`);
    await chat.press('#prompt', 'Enter'); // now it sends, with the markup in place of the chip
    await chat.waitForSelector('.msg.user:has-text("Compare with @")', { timeout: 20000 });
    await chat.waitForSelector('#send:has-text("Send")', { timeout: 30000 });
    writeWhole('mention-done', JSON.stringify({ prompt, candidates, chipText, chipMention }));

    const deadline = Date.now() + 60000;
    while (exitCode === null && Date.now() < deadline) await page.waitForTimeout(200);
    if (exitCode === null) throw new Error('the extension-host suite never reported an exit code');
    say(`suite exit code ${exitCode}`);
    if (exitCode !== 0) {
      await page.screenshot({ path: path.join(dir, 'vscode-e2e-failure.png') }).catch(() => undefined);
    }
  } catch (err) {
    console.error('[runner] FAILED:', err && err.stack ? err.stack : err);
    try {
      const pages = browser.contexts().flatMap((c) => c.pages());
      const rows = await pages[0]?.locator('.explorer-folders-view .monaco-list-row').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label')));
      console.error('[runner] explorer rows:', JSON.stringify(rows));
    } catch {
      // diagnostics only
    }
    try {
      const pages = browser.contexts().flatMap((c) => c.pages());
      if (pages[0]) await pages[0].screenshot({ path: path.join(dir, 'vscode-e2e-failure.png') });
    } catch {
      // the screenshot is a courtesy
    }
    exitCode = exitCode === null || exitCode === 0 ? 2 : exitCode;
  } finally {
    await browser.close().catch(() => undefined);
  }
  process.exit(exitCode === 0 ? 0 : exitCode || 1);
}

// Nothing may hang: a hard stop well inside the pytest timeout.
setTimeout(() => {
  console.error('[runner] hard timeout');
  process.exit(3);
}, Number(process.env.RUNNER_TIMEOUT_MS || 150000)).unref();

main();
