// @ts-check
/**
 * Short checks of the chat panel, one PART per run, in real VS Code (code-server) and Chromium,
 * against the scripted model of tests/editors/test_vscode_chat_e2e.py (issue 34):
 *
 * - focus: an approval card never takes the focus (typed keys stay in the prompt box, nothing is
 *   written), Shift+Tab reaches the card and the status line announces it; Ctrl+Alt+D puts the
 *   caret in the prompt box every time, also after the view was hidden.
 * - contrast: every code-block action, plain and hovered, in the four default themes.
 * - time: two prompts (pytest reads the model requests: the time note before each prompt).
 * - history: a search that matches nothing says so, and the list opens unfiltered again.
 * - agents: an agent's hook session (made by a real `dsh-sidecar hook` before the editor started)
 *   in the inspector: agent, directory, times, the files it was given, touches waiting, the note
 *   about rule sets; no raw session id in the inspector, its hovers or the instruction hover.
 * - layout: a new profile's first open of the chat: its view's height against the window's, and
 *   the inspector shown beside it (in the panel) without taking any of that height.
 * - baseline: two baselines (the second after dsh.instructions.maxBytes changed), titled by their
 *   files in the chat and the inspector; no Restricted Mode banner in a trusted folder.
 * - restricted: the folder opened in Restricted Mode: the chat's banner says what that limits.
 * - notice: a refused setting's toast: its first sentence fits its first line, and no progress
 *   bar runs under it.
 * - retry: Retry of an answer that wrote nothing, an accepted edit, Edit of its prompt, Retry again
 *   (pytest reads the model requests: no note, then one note naming the written file, never two);
 *   the transcript keeps the edit's card, marked as discarded, and has no summary box.
 *
 * chat-suite.js is the extension-host half. Findings go to $DSH_E2E_DIR/parts-done for pytest,
 * which makes the assertions; the runner fails only when the page does not get where it must.
 *
 * Environment: see lib.js, plus PART and, optionally, SCREENSHOTS (a folder; default $DSH_E2E_DIR).
 */
const fs = require('node:fs');
const path = require('node:path');
const { env, say, openWorkbench, runReporting, findReadyFrame, runCommand, writeWhole, waitForFile, hardTimeout, contrastOf, CHAT_VIEW_TITLE } = require('./lib');

const workspace = env('WORKSPACE');
const dir = env('DSH_E2E_DIR');
const part = env('PART');
const shots = process.env.SCREENSHOTS || dir;
const APP = path.join(workspace, 'src', 'app.py');
const found = {};

let callCount = 0;
/** Ask the extension-host suite (chat-suite.js). */
async function call(kind, payload = {}) {
  const n = ++callCount;
  writeWhole(`call-${n}.json`, JSON.stringify({ kind, ...payload }));
  const reply = await waitForFile(`answer-${n}.json`, 30000);
  if (reply.error) throw new Error(`${kind} failed in the extension host: ${reply.error}`);
  return reply.result;
}

/** What has the focus inside the chat's page, and whether that page has it at all. */
function focusIn(chat) {
  return chat.evaluate(() => {
    const a = document.activeElement;
    return {
      pageHasFocus: document.hasFocus(),
      id: a?.id ?? '',
      tag: a?.tagName.toLowerCase() ?? '',
      className: a instanceof HTMLElement ? a.className : '',
      text: (a?.textContent ?? '').trim().slice(0, 40),
      inCard: !!a?.closest('.approval'),
    };
  });
}

/** Whether the workbench's keyboard focus is in a text editor (not in any webview). */
function editorHasFocus(page) {
  return page.evaluate(() => document.activeElement?.closest('.monaco-editor') != null);
}

/** Bring a text editor to the front with the keyboard focus in it. */
async function focusAnEditor(page) {
  await call('openFile', { path: APP });
  await page.waitForFunction(() => document.activeElement?.closest('.monaco-editor') != null, undefined, { timeout: 15000 });
}

/**
 * Press Ctrl+Alt+D and wait (bounded) until the prompt box has the focus; then type `keys`.
 * Returns what had the focus and what the box holds; typing is skipped when the box never got
 * the focus, so the keys do not land in the editor.
 */
async function keybindingThenType(page, chat, keys) {
  await page.keyboard.press('Control+Alt+D');
  await page.waitForSelector(CHAT_VIEW_TITLE('ws'), { state: 'visible', timeout: 15000 });
  let reached = true;
  try {
    await chat.waitForFunction(() => document.hasFocus() && document.activeElement?.id === 'prompt', undefined, { timeout: 15000 });
  } catch {
    reached = false;
  }
  const focus = await focusIn(chat);
  if (reached) await page.keyboard.type(keys);
  return { reached, focus, value: await chat.inputValue('#prompt') };
}

async function focusPart(page, chat) {
  const ask = async (text) => {
    await chat.fill('#prompt', text);
    await chat.press('#prompt', 'Enter');
  };
  // --- an approval card appears while the user is in the prompt box --------------------------
  await chat.locator('#prompt').click();
  await ask('EDIT please change the greeting');
  await chat.waitForSelector('.approval.pending:has-text("src/app.py")', { timeout: 30000 });
  await chat.waitForSelector('#status:has-text("src/app.py")', { timeout: 15000 });
  found.afterCard = await focusIn(chat);
  found.status = {
    text: await chat.locator('#status').innerText(),
    live: await chat.locator('#status').getAttribute('aria-live'),
  };
  found.card = {
    role: await chat.locator('.approval.pending').getAttribute('role'),
    label: await chat.locator('.approval.pending').getAttribute('aria-label'),
  };
  // A Space and an Enter meant for the prompt box: they must land there (the box is empty, so
  // Enter sends nothing), not on Accept.
  await page.keyboard.press('Space');
  await page.keyboard.press('Enter');
  found.afterKeys = {
    prompt: await chat.inputValue('#prompt'),
    focus: await focusIn(chat),
    pending: await chat.locator('.approval.pending').count(),
    onDisk: fs.readFileSync(APP, 'utf8'),
  };
  // The card is in the Tab order: Shift+Tab from the prompt box walks back through its controls.
  found.shiftTab = [];
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press('Shift+Tab');
    found.shiftTab.push(await focusIn(chat));
  }
  found.onDiskAfterTabbing = fs.readFileSync(APP, 'utf8');
  await chat.locator('.approval.pending button:has-text("Reject")').click();
  await chat.waitForSelector('.approval.rejected', { timeout: 15000 });
  await chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
  await chat.fill('#prompt', '');
  say('approval card checked');

  // --- Ctrl+Alt+D, three times, from an editor and with the view hidden ------------------------
  // A click on the conversation's text takes the focus out of the prompt box (to the page).
  await chat.locator('article.msg.user .body').first().click();
  found.afterClickInLog = await focusIn(chat);
  await focusAnEditor(page);
  found.editorFocusedBefore = await editorHasFocus(page);
  found.first = await keybindingThenType(page, chat, 'abc');
  await runCommand(page, 'View: Show Explorer');
  await page.waitForSelector(CHAT_VIEW_TITLE('ws'), { state: 'hidden', timeout: 15000 });
  await focusAnEditor(page);
  found.second = await keybindingThenType(page, chat, 'def');
  // The view stays in sight this time; only the keyboard focus is in the editor.
  await focusAnEditor(page);
  found.third = await keybindingThenType(page, chat, 'ghi');
  await page.screenshot({ path: path.join(shots, 'focus.png') });
  say('keybinding checked');
}

/** Each default theme, the kind the webview host puts on <body>, and a short name for files. */
const THEMES = [
  ['Default Light Modern', 'vscode-light', 'light'],
  ['Default Dark Modern', 'vscode-dark', 'dark'],
  ['Default High Contrast', 'vscode-high-contrast', 'hc'],
  ['Default High Contrast Light', 'vscode-high-contrast-light', 'hc-light'],
];

async function contrastPart(page, chat) {
  await chat.fill('#prompt', 'MARKDOWN show me the plan');
  await chat.press('#prompt', 'Enter');
  await chat.waitForSelector('article.msg.assistant:not(.streaming) .code-block', { timeout: 60000 });
  await chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
  const actions = chat.locator('article.msg.assistant:not(.streaming) .code-block .code-header button');
  found.contrast = {};
  for (const [theme, kind, short] of THEMES) {
    await call('setting', { section: 'workbench', key: 'colorTheme', value: theme });
    // The webview host puts the theme kind on <body> (High Contrast Light is not also marked as
    // the dark high contrast kind, so each kind names one theme here).
    try {
      await chat.waitForFunction((k) => {
        const classes = document.body.classList;
        return classes.contains(k) && (k !== 'vscode-high-contrast' || !classes.contains('vscode-high-contrast-light'));
      }, kind, { timeout: 20000 });
    } catch (e) {
      const seen = await chat.evaluate(() => `${document.body.className} | ${document.body.dataset['vscodeThemeName']}`);
      throw new Error(`the chat never showed ${theme} (${kind}); its body: ${seen}\n${e}`);
    }
    // Away from every action first: the plain state.
    await page.mouse.move(1, 1);
    const plain = await contrastOf(chat, 'article.msg.assistant:not(.streaming) .code-block .code-header button');
    const hovered = [];
    for (let i = 0; i < (await actions.count()); i++) {
      const action = actions.nth(i);
      await action.hover();
      await chat.waitForFunction((el) => el.matches(':hover'), await action.elementHandle(), { timeout: 5000 });
      const [measured] = await contrastOf(chat, 'article.msg.assistant:not(.streaming) .code-block .code-header button:hover');
      hovered.push(measured);
    }
    found.contrast[theme] = {
      plain,
      hovered,
      body: await chat.evaluate(() => `${document.body.className} | ${document.body.dataset['vscodeThemeName']}`),
    };
    // The block with its last action still hovered.
    await chat.locator('article.msg.assistant:not(.streaming) .code-block').first().screenshot({ path: path.join(shots, `code-actions-hover-${short}.png`) });
    say(`contrast measured in ${theme}`);
  }
}

async function timePart(chat) {
  for (const text of ['FOLLOWUP what time is it', 'FOLLOWUP and now']) {
    const answers = await chat.locator('article.msg.assistant:not(.streaming)').count();
    await chat.fill('#prompt', text);
    await chat.press('#prompt', 'Enter');
    await chat.waitForFunction((n) => document.querySelectorAll('article.msg.assistant:not(.streaming)').length > n, answers, { timeout: 60000 });
    await chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
  }
  found.prompts = await chat.locator('article.msg.user .body').allInnerTexts();
  // The notes as the session's log holds them, to compare byte for byte with what was sent.
  const session = await call('session');
  const surface = await call('sidecar', { method: 'dsh/session/surface', params: { sessionId: session.id } });
  found.loggedNotes = surface.events
    .filter((e) => e.type === 'user/message' && e.data.source && e.data.source.plugin === 'time-context')
    .map((e) => e.data.content.map((b) => b.text).join(''));
  say('two turns answered');
}

async function historyPart(chat) {
  const options = '#session-list li[role=option]';
  await chat.click('#sessions-button');
  await chat.waitForSelector(options, { timeout: 15000 });
  found.rowsAtFirst = await chat.locator(`${options}:visible`).count();
  await chat.fill('#session-list .session-search', 'no session is called this');
  found.noMatch = {
    visibleRows: await chat.locator(`${options}:visible`).count(),
    message: (await chat.locator('#session-list li.no-match:visible').allInnerTexts()).map((t) => t.trim()),
  };
  await chat.press('#session-list .session-search', 'Escape');
  await chat.waitForSelector('#session-list', { state: 'hidden', timeout: 10000 });
  await chat.click('#sessions-button');
  await chat.waitForSelector('#session-list .session-search', { timeout: 15000 });
  await chat.waitForSelector(options, { state: 'attached', timeout: 15000 });
  found.reopened = {
    search: await chat.inputValue('#session-list .session-search'),
    visibleRows: await chat.locator(`${options}:visible`).count(),
    noMatchShown: await chat.locator('#session-list li.no-match').isVisible(),
  };
  say('history search checked');
}

/** The session's whole log, through the extension host. */
async function sessionLog() {
  const session = await call('session');
  const { events } = await call('sidecar', { method: 'dsh/session/events', params: { sessionId: session.id } });
  return events;
}

/** Wait (bounded) until the session has recorded `count` turn ends, then until the panel is idle. */
async function turnsEnded(chat, count) {
  const deadline = Date.now() + 60000;
  for (;;) {
    const ended = (await sessionLog()).filter((e) => e.type === 'turn/end').length;
    if (ended >= count) break;
    if (Date.now() > deadline) throw new Error(`only ${ended} of ${count} turns ended`);
    await chat.waitForTimeout(200);
  }
  await chat.waitForSelector('#send:has-text("Send")', { timeout: 60000 });
}

async function retryPart(page, chat) {
  const ask = async (text, turns) => {
    await chat.fill('#prompt', text);
    await chat.press('#prompt', 'Enter');
    await turnsEnded(chat, turns);
  };
  const retry = async (turns) => {
    await chat.locator('article.msg.assistant.last button.retry').click();
    await turnsEnded(chat, turns);
  };
  const transcript = async () => ({
    summaries: await chat.locator('details.msg.context:has-text("Summary of earlier conversation")').count(),
    prompts: await chat.locator('article.msg.user .body').allInnerTexts(),
    discardedCards: await chat.locator('.tool-card.discarded').evaluateAll((cards) =>
      cards.map((c) => ({
        text: (c.querySelector('.tool-head')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
        label: c.getAttribute('aria-label'),
        done: c.classList.contains('done'),
      })),
    ),
  });
  // 1. An answer that wrote nothing, retried.
  await ask('FOLLOWUP hello there', 1);
  await retry(2);
  found.afterPlainRetry = await transcript();
  // 2. An edit accepted (the file is written), then its prompt edited and sent again.
  await chat.fill('#prompt', 'EDIT please change the greeting');
  await chat.press('#prompt', 'Enter');
  await chat.waitForSelector('.approval.pending:has-text("src/app.py")', { timeout: 30000 });
  await chat.locator('.approval.pending button:has-text("Accept")').click();
  await turnsEnded(chat, 3);
  found.onDiskAfterAccept = fs.readFileSync(APP, 'utf8');
  await chat.locator('article.msg.user.last button.edit').click();
  await chat.fill('article.msg.user.last .edit-box', 'FOLLOWUP what changed');
  await chat.click('article.msg.user.last .edit-actions button:has-text("Resend")');
  await turnsEnded(chat, 4);
  found.afterEdit = await transcript();
  // 3. That answer retried: the earlier attempt's file is still named, once.
  await retry(5);
  found.afterSecondRetry = await transcript();
  await chat.locator('.tool-card.discarded').first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: path.join(shots, 'retry-discarded-card.png') });
  // The log keeps every attempt; the checkpoints are the sidecar's surface discards.
  found.checkpoints = (await sessionLog())
    .filter((e) => e.type === 'user/message' && e.data.source && e.data.source.plugin === 'compact')
    .map((e) => ({ seq: e.seq, id: e.data.source.compactionId, text: e.data.content.map((b) => b.text).join(''), sources: e.sourceEventSeqs, op: e.surfaceOp }));
  say('retry and edit checked');
}

async function agentsPart(page) {
  await call('command', { command: 'dsh.inspector.show' });
  const inspector = await findReadyFrame(page, '#root', '#root section.agents .agent-session', 30000);
  const item = inspector.locator('section.agents .agent-session').first();
  found.agent = {
    heading: (await item.locator('h3').innerText()).trim(),
    when: (await item.locator('.agent-when').innerText()).trim(),
    told: (await item.locator('.agent-told').innerText()).trim(),
    waiting: (await item.locator('.agent-waiting').innerText()).trim(),
    label: await item.getAttribute('aria-label'),
    hover: await item.getAttribute('title'),
    note: (await inspector.locator('section.agents .agents-note').innerText()).trim(),
    count: await inspector.locator('section.agents .agent-session').count(),
  };
  // Everything a reader can see or hover in the inspector, to look for raw ids in.
  found.inspectorText = await inspector.evaluate(() => [
    document.body.innerText,
    ...[...document.querySelectorAll('[title]')].map((e) => e.getAttribute('title')),
    ...[...document.querySelectorAll('[aria-label]')].map((e) => e.getAttribute('aria-label')),
  ].join('\n'));
  // The instruction hover names the editor's own live session.
  found.hover = await call('hover', { path: path.join(workspace, 'pkg', 'AGENTS.md'), line: 0, character: 1 });
  found.chatSession = await call('session');
  await inspector.locator('section.agents').screenshot({ path: path.join(shots, 'inspector-agent-session.png') });
  say('agent session shown');
}

/** Where a webview's frame is on the page (the workbench's coordinates). */
async function boxOf(frame) {
  const box = await (await frame.frameElement()).boundingBox();
  return box && { x: Math.round(box.x), y: Math.round(box.y), width: Math.round(box.width), height: Math.round(box.height) };
}

async function layoutPart(page, chat) {
  found.window = page.viewportSize();
  found.chatBox = await boxOf(chat);
  found.sidebarTitle = (await page.locator('.part.sidebar .composite.title').innerText()).trim();
  await page.screenshot({ path: path.join(shots, 'chat-first-open.png') });
  await call('command', { command: 'dsh.inspector.show' });
  const inspector = await findReadyFrame(page, '#root', '#root section.session', 30000);
  found.inspectorBox = await boxOf(inspector);
  found.chatBoxWithInspector = await boxOf(chat);
  found.chatStillShown = await chat.locator('#prompt').isVisible();
  await page.screenshot({ path: path.join(shots, 'chat-and-inspector.png') });
  say('layout measured');
}

async function baselinePart(page, chat) {
  const ask = async (text, turns) => {
    await chat.fill('#prompt', text);
    await chat.press('#prompt', 'Enter');
    await turnsEnded(chat, turns);
  };
  await ask('FOLLOWUP one', 1);
  // A setting of the baseline's identity: the next step gives a new baseline.
  await call('config', { key: 'instructions.maxBytes', value: 70000 });
  await ask('FOLLOWUP two', 2);
  const titles = () => chat.locator('details.msg.context summary .title').allInnerTexts();
  found.chatTitles = (await titles()).filter((t) => /baseline/i.test(t));
  const session = await call('session');
  const surface = await call('sidecar', { method: 'dsh/session/surface', params: { sessionId: session.id } });
  found.loggedBaselines = surface.events
    .filter((e) => e.type === 'user/message' && e.data.source && e.data.source.kind === 'agent-instructions' && e.data.source.baseline === true)
    .map((e) => e.data.source.changes);
  found.restrictedShown = await chat.locator('#restricted').isVisible();
  await chat.locator('details.msg.context:has-text("Baseline")').last().scrollIntoViewIfNeeded();
  await chat.locator('#log').screenshot({ path: path.join(shots, 'baseline-title.png') });
  await call('command', { command: 'dsh.inspector.show' });
  const inspector = await findReadyFrame(page, '#root', '#root section.session summary', 30000);
  found.inspectorTitles = await inspector.locator('section.session summary .title').allInnerTexts();
  say('baseline titles read');
}

async function restrictedPart(chat) {
  const banner = chat.locator('#restricted');
  await banner.waitFor({ state: 'visible', timeout: 15000 });
  found.restricted = {
    text: (await banner.locator('.text').innerText()).trim(),
    role: await banner.getAttribute('role'),
    button: (await banner.locator('button').innerText()).trim(),
  };
  await chat.locator('body').screenshot({ path: path.join(shots, 'chat-restricted-mode.png') });
  say('restricted banner shown');
}

async function noticePart(page) {
  const toast = page.locator('.notification-toast:has-text("Mars/Olympus")').first();
  await toast.waitFor({ state: 'visible', timeout: 30000 });
  const measure = () => toast.evaluate((t) => {
    const message = t.querySelector('.notification-list-item-message');
    const text = message.textContent;
    const end = text.indexOf('. ') + 1;
    // The first sentence, measured where it is drawn: on how many lines, and whether it ends
    // before the message's own right edge (a collapsed toast cuts the rest off).
    const walker = document.createTreeWalker(message, NodeFilter.SHOW_TEXT);
    const first = walker.nextNode();
    let sentence = null;
    if (first !== null && end > 0 && end <= first.textContent.length) {
      const range = document.createRange();
      range.setStart(first, 0);
      range.setEnd(first, end);
      const rects = [...range.getClientRects()];
      sentence = { lines: new Set(rects.map((r) => Math.round(r.top))).size, right: Math.max(...rects.map((r) => r.right)) };
    }
    const bit = t.querySelector('.monaco-progress-container .progress-bit');
    const container = t.querySelector('.monaco-progress-container');
    return {
      text,
      firstSentence: text.slice(0, end),
      sentence,
      messageRight: message.getBoundingClientRect().right,
      bitWidth: bit ? bit.getBoundingClientRect().width : 0,
      barWidth: container ? container.getBoundingClientRect().width : 0,
      infinite: container ? container.classList.contains('infinite') : false,
    };
  });
  // The report of 0 % reaches the workbench just after the toast: wait (bounded) for it.
  const deadline = Date.now() + 15000;
  let seen = await measure();
  while ((seen.infinite || seen.bitWidth > 0.011 * seen.barWidth) && Date.now() < deadline) {
    await page.waitForTimeout(100);
    seen = await measure();
  }
  found.notice = seen;
  await toast.screenshot({ path: path.join(shots, 'settings-notice.png') });
  say('notice measured');
}

function main() {
  return runReporting('parts', found, async (browser) => {
    const page = await openWorkbench(browser, 'chat-suite.js');
    await waitForFile('chat-open', 60000);
    const chat = await findReadyFrame(page, '#prompt', '#session:has-text("session ")', 30000);
    say(`chat open; part ${part}`);
    if (part === 'focus') await focusPart(page, chat);
    else if (part === 'contrast') await contrastPart(page, chat);
    else if (part === 'time') await timePart(chat);
    else if (part === 'history') await historyPart(chat);
    else if (part === 'retry') await retryPart(page, chat);
    else if (part === 'agents') await agentsPart(page);
    else if (part === 'layout') await layoutPart(page, chat);
    else if (part === 'baseline') await baselinePart(page, chat);
    else if (part === 'restricted') await restrictedPart(chat);
    else if (part === 'notice') await noticePart(page);
    else throw new Error(`unknown PART ${part}`);
  });
}

hardTimeout();
void main();
