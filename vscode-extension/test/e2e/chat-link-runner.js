// @ts-check
/**
 * The round-4 attack on the chat's file tools, in real VS Code (code-server) and Chromium: the
 * workspace commits `notes.md` as a link to a file outside it that does not exist yet, and the
 * scripted model of tests/editors/test_vscode_chat_links_e2e.py asks to write notes.md. The
 * runner sends the prompt, waits for the turn to end and reports what the page showed (approval
 * cards, the tool result line); pytest checks the disk and what the model was sent.
 *
 * chat-suite.js is the extension-host half. Environment: see lib.js, plus PROMPT.
 */
const fs = require('node:fs');
const path = require('node:path');
const { env, say, launch, openWorkbench, findReadyFrame, hardTimeout } = require('./lib');

const dir = env('DSH_E2E_DIR');
const prompt = env('PROMPT');
const found = {};

async function main() {
  const browser = await launch();
  let code = 0;
  try {
    const page = await openWorkbench(browser, 'chat-suite.js');
    const chat = await findReadyFrame(page, '#prompt', '#session:has-text("session ")', 60000);
    say('chat open');
    await chat.fill('#prompt', prompt);
    await chat.press('#prompt', 'Enter');
    // The model answers twice: the tool call, then its text after the tool's result.
    await chat.waitForFunction(() => document.querySelectorAll('article.msg.assistant:not(.streaming)').length >= 1, undefined, { timeout: 60000 });
    await chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
    await chat.waitForFunction(() => (document.querySelector('#log')?.textContent ?? '').includes('Not written.'), undefined, { timeout: 60000 });
    found.approvalCards = await chat.locator('.approval').count();
    found.transcript = (await chat.locator('#log').innerText()).slice(0, 4000);
    say('turn answered');
  } catch (err) {
    code = 2;
    console.error('[runner] FAILED:', err && err.stack ? err.stack : err);
    try {
      const pages = browser.contexts().flatMap((c) => c.pages());
      if (pages[0]) await pages[0].screenshot({ path: path.join(dir, 'link-failure.png') });
    } catch {
      // the screenshot is a courtesy
    }
  } finally {
    fs.writeFileSync(path.join(dir, 'link-done'), JSON.stringify(found, null, 2));
    fs.writeFileSync(path.join(dir, 'done'), '{}');
    await browser.close().catch(() => undefined);
  }
  process.exit(code);
}

hardTimeout();
main();
