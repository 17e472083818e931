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
const { env, say, openWorkbench, runReporting, findReadyFrame, hardTimeout } = require('./lib');

const prompt = env('PROMPT');
const found = {};

function main() {
  return runReporting('link', found, async (browser) => {
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
  });
}

hardTimeout();
main();
