// @ts-check
/**
 * Per-hunk decisions on a proposed change, in real VS Code (code-server) and Chromium. The
 * scripted model of tests/editors/test_vscode_hunks_e2e.py proposes a three-hunk edit of
 * notes.txt; the runner clicks the CodeLens actions above the hunks in the diff's proposed side
 * (PART=hunks: accept 1 and 3; reject 2 from the command palette with the cursor in it), or types over the first hunk's line, rejects the
 * second and accepts from the chat without saving (PART=edited), and waits for the card's verdict and the model's answer.
 * pytest checks the disk and the tool result the model was sent.
 *
 * chat-suite.js is the extension-host half. Environment: see lib.js, plus PROMPT, PART and
 * SCREENSHOTS (a folder for hunk-actions.png).
 */
const fs = require('node:fs');
const path = require('node:path');
const { env, say, openWorkbench, runReporting, findReadyFrame, hardTimeout, runCommand } = require('./lib');

const workspace = env('WORKSPACE');
const prompt = env('PROMPT');
const part = env('PART');
const shots = env('SCREENSHOTS');
const found = {};

function main() {
  return runReporting('hunks', found, async (browser) => {
    const page = await openWorkbench(browser, 'chat-suite.js');
    const chat = await findReadyFrame(page, '#prompt', '#session:has-text("session ")', 60000);
    say('chat open');
    await chat.fill('#prompt', prompt);
    await chat.press('#prompt', 'Enter');
    await chat.waitForSelector('.approval.pending:has-text("notes.txt")', { timeout: 60000 });
    await page.waitForSelector('.monaco-diff-editor', { state: 'visible', timeout: 15000 });
    const proposed = page.locator('.monaco-diff-editor .editor.modified');
    /** The CodeLens item (an action, or a note without one) over a hunk of the proposed side. */
    const lens = (title) => proposed.locator('.codelens-decoration a, .codelens-decoration span', { hasText: title });
    if (part === 'hunks') await hunks(page, chat, proposed, lens);
    else if (part === 'edited') await edited(page, chat, proposed);
    else throw new Error(`unknown PART ${part}`);
    await chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
    found.transcript = (await chat.locator('#log').innerText()).slice(0, 4000);
  });
}

async function hunks(page, chat, proposed, lens) {
  await lens('Accept hunk 1 of 3').waitFor({ timeout: 30000 });
  found.lensesBefore = await lensTexts(proposed);
  await lens('Accept hunk 1 of 3').click();
  await lens('Accepted hunk 1 of 3').first().waitFor({ timeout: 15000 });
  // Still pending: nothing is written before every hunk is decided.
  found.cardWhileDeciding = await chat.locator('.approval:has-text("notes.txt")').getAttribute('class');
  found.diskWhileDeciding = fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8');
  await page.screenshot({ path: path.join(shots, 'hunk-actions.png') });
  // Hunk 2 is rejected as a keyboard user would: the cursor in its proposed line, then the command.
  await proposed.locator('.view-line', { hasText: 'EPSILON' }).click();
  await runCommand(page, "DSH: Reject This Hunk of the Agent's Change");
  // A rejected hunk leaves the proposed side: its lines read as before, and its lenses go.
  await lens('hunk 2 of 3').first().waitFor({ state: 'detached', timeout: 15000 });
  found.lensesAfterReject = await lensTexts(proposed);
  await lens('Accept hunk 3 of 3').click();
  await chat.waitForSelector('.approval.accepted .verdict', { timeout: 15000 });
  found.verdict = await chat.locator('.approval.accepted .verdict').innerText();
  await chat.waitForSelector('article.msg.assistant:has-text("Hunks done.")', { timeout: 60000 });
  await diffClosed(page);
  say('hunks decided');
}

async function edited(page, chat, proposed) {
  const line = proposed.locator('.view-line', { hasText: 'ALPHA' });
  await line.waitFor({ timeout: 30000 });
  await proposed.locator('.codelens-decoration a', { hasText: 'Accept hunk 1 of 2' }).waitFor({ timeout: 30000 });
  // Select the proposed line's text and type over it, as a person would.
  await line.click();
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await page.keyboard.type('Alpha, by hand');
  const typed = () => [...document.querySelectorAll('.monaco-diff-editor .editor.modified .view-line')].some((e) => (e.textContent || '').replace(/\u00a0/g, ' ') === 'Alpha, by hand');
  await page.waitForFunction(typed, undefined, { timeout: 15000 });
  found.typedShown = true;
  // The lenses follow the text: the first hunk is the user's own now.
  await proposed.locator('.codelens-decoration a', { hasText: 'Accept your change' }).waitFor({ timeout: 15000 });
  found.lensesAfterTyping = await lensTexts(proposed);
  // Reject the other hunk while the side holds unsaved typing.
  await proposed.locator('.codelens-decoration a', { hasText: 'Reject hunk 2 of 2' }).click();
  await proposed.locator('.codelens-decoration a', { hasText: 'hunk 2 of 2' }).first().waitFor({ state: 'detached', timeout: 15000 });
  found.lensesAfterReject = await lensTexts(proposed);
  found.typedKept = await page.evaluate(typed);
  found.diskWhileEditing = fs.readFileSync(path.join(workspace, 'notes.txt'), 'utf8');
  // Accept from the chat's card, the typing unsaved.
  await chat.locator('.approval.pending button:has-text("Accept")').click();
  await chat.waitForSelector('.approval.accepted .verdict', { timeout: 15000 });
  found.verdict = await chat.locator('.approval.accepted .verdict').innerText();
  await chat.waitForSelector('article.msg.assistant:has-text("Hunks done.")', { timeout: 60000 });
  await diffClosed(page);
  say('edited proposal accepted');
}

/** The proposal's diff tab goes once it is decided (an edited side is saved first, in memory). */
async function diffClosed(page) {
  await page.waitForFunction(() => ![...document.querySelectorAll('.tab')].some((t) => (t.textContent || '').includes('(edit proposed by the agent)')), undefined, { timeout: 15000 });
  found.diffClosed = true;
}

/** Each CodeLens line of the proposed side, as read (VS Code puts " | " between its items). */
async function lensTexts(proposed) {
  return (await proposed.locator('.codelens-decoration').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
}

hardTimeout();
main();
