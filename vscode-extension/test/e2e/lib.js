// @ts-check
/**
 * Helpers shared by the playwright-core runners: launching Debian's Chromium, finding a webview's
 * frame, running commands through the palette, reading notifications. Every wait is bounded.
 */
const fs = require('node:fs');
const path = require('node:path');

/** @param {string} name */
function env(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

const started = Date.now();
/** @param {string} m */
function say(m) {
  console.log(`[runner +${((Date.now() - started) / 1000).toFixed(1)}s] ${m}`);
}

/** Hosts a test may reach: loopback only (tests/editors/vscode_harness.py checks the record). */
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
// Webview resources use this virtual host; the webview's service worker answers them in the page.
const WEBVIEW_RESOURCE_HOST = /\.vscode-resource\.vscode-cdn\.net$/;

/** Appends every page request to a non-loopback host to $DSH_E2E_DIR/outside-requests.txt. */
function recordOutsideRequests(context) {
  const file = path.join(env('DSH_E2E_DIR'), 'outside-requests.txt');
  context.on('request', (request) => {
    let url;
    try {
      url = new URL(request.url());
    } catch {
      return;
    }
    if (!/^(https?|wss?):$/.test(url.protocol)) return;
    if (LOOPBACK.has(url.hostname) || WEBVIEW_RESOURCE_HOST.test(url.hostname)) return;
    fs.appendFileSync(file, `${request.method()} ${request.url()}\n`);
  });
}

async function launch() {
  const { chromium } = require(env('PLAYWRIGHT_CORE'));
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // No background traffic (updates, components, sync, metrics), and no name but loopback
    // resolves, so nothing the page does can leave the machine.
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage',
      '--disable-domain-reliability', '--disable-breakpad', '--metrics-recording-only',
      '--no-default-browser-check',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost'],
  });
  // Every runner makes its contexts here, so each one records outside requests.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    recordOutsideRequests(context);
    return context;
  };
  return browser;
}

/**
 * The frame (any depth: webviews nest an iframe in an iframe) that has `selector`.
 *
 * code-server serves every webview from one origin, so they share one service-worker scope, and
 * each webview's host frame (`pre/index.html`) waits for its own worker to take control before it
 * builds its content frame. When two webviews start together one of them can miss that hand-over
 * and wait for ever, blank (desktop VS Code gives each webview its own origin). A host frame still
 * without a content frame after STUCK_WEBVIEW_MS is that case, and "Developer: Reload Webviews"
 * (which builds every webview's frames again) is the user's own remedy: it is run once per call.
 */
const STUCK_WEBVIEW_MS = 8000;
// What a runner's error starts with when a webview never showed its content even after the
// reloads (tests/support/vscode_harness.py: the tests that drive webviews are run once more then).
const NEVER_SHOWED = 'webview never showed its content';
async function findFrame(page, selector, ms) {
  let deadline = Date.now() + ms;
  const hostSeen = new Map();
  // A short wait is for a frame that is already there; a long one may reload twice, each time
  // with a fresh 20 s for the rebuilt webviews (CI saw one reload not be enough).
  let reloads = ms < 2 * STUCK_WEBVIEW_MS ? 2 : 0;
  let unstyledSince = null;
  while (Date.now() < deadline) {
    let unstyled = false;
    for (const frame of page.frames()) {
      try {
        if (!(await frame.$(selector))) continue;
        if (await stylesLoaded(frame)) return frame;
        unstyled = true;
      } catch {
        // a frame navigating away: try the others
      }
    }
    unstyledSince = unstyled ? (unstyledSince ?? Date.now()) : null;
    const unstyledTooLong = unstyledSince !== null && Date.now() - unstyledSince > UNSTYLED_WEBVIEW_MS;
    if (reloads < 2 && (unstyledTooLong || (await stuckWebview(page, hostSeen)))) {
      say(unstyledTooLong
        ? `a webview has shown ${selector} without its stylesheet for ${UNSTYLED_WEBVIEW_MS} ms: Developer: Reload Webviews`
        : `a webview host frame has had no content for ${STUCK_WEBVIEW_MS} ms: Developer: Reload Webviews`);
      unstyledSince = null;
      await runCommand(page, 'Developer: Reload Webviews');
      reloads += 1;
      hostSeen.clear();
      deadline = Math.max(deadline, Date.now() + 20000);
    }
    await page.waitForTimeout(250);
  }
  const what = unstyledSince === null ? `no frame with ${selector}` : `${selector} shown without its stylesheet`;
  throw new Error(`${NEVER_SHOWED}: ${what} after ${ms} ms\n${await describeWorkbench(page)}`);
}

/**
 * The same shared scope can also fail one resource of a page that did load: CI saw the chat's
 * stylesheet fail (net::ERR_FAILED) while its script ran, so every Edit button showed. A page
 * whose stylesheets have not all loaded after UNSTYLED_WEBVIEW_MS is reloaded like a blank one.
 */
const UNSTYLED_WEBVIEW_MS = 5000;
async function stylesLoaded(frame) {
  // A <link> still loading has no sheet; one whose load failed has a sheet whose rules can't be
  // read (Chromium throws a SecurityError). Ours are served through the webview's own origin.
  return frame.evaluate(() => [...document.querySelectorAll('link[rel="stylesheet"]')].every((link) => {
    try {
      return link.sheet !== null && link.sheet.cssRules.length > 0;
    } catch {
      return false;
    }
  }));
}

/**
 * The frame with `selector` once it also shows `ready` (content the host sends, such as the chat's
 * session label). The same shared service-worker scope can leave a webview whose page loaded but
 * whose first exchange with the extension host never arrives; the console then shows "Found
 * unexpected service worker controller". So a frame that has not shown `ready` after
 * UNANSWERED_WEBVIEW_MS gets "Developer: Reload Webviews" once (the page asks the host again),
 * and what it showed is printed, so a host that truly never answers still fails, with its text.
 */
const UNANSWERED_WEBVIEW_MS = 12000;
async function findReadyFrame(page, selector, ready, ms) {
  const frame = await findFrame(page, selector, ms);
  try {
    await frame.waitForSelector(ready, { timeout: UNANSWERED_WEBVIEW_MS });
    return frame;
  } catch {
    const shown = await frame.evaluate(() => document.body.innerText.slice(0, 200)).catch(() => '(unreadable)');
    say(`${ready} not shown after ${UNANSWERED_WEBVIEW_MS} ms (the page shows ${JSON.stringify(shown)}): Developer: Reload Webviews`);
  }
  await runCommand(page, 'Developer: Reload Webviews');
  const detached = Date.now() + 10000;
  while (!frame.isDetached() && Date.now() < detached) await page.waitForTimeout(100);
  const again = await findFrame(page, selector, ms);
  try {
    await again.waitForSelector(ready, { timeout: 20000 });
  } catch (e) {
    throw new Error(`${NEVER_SHOWED}: ${ready} not shown after a reload (${String(e).split('\n', 1)[0]})`);
  }
  return again;
}

/** Whether a webview host frame has stood without its content frame for STUCK_WEBVIEW_MS. */
async function stuckWebview(page, hostSeen) {
  const now = Date.now();
  for (const frame of page.frames()) {
    if (!frame.url().includes('/pre/index.html')) continue;
    if (frame.childFrames().length > 0) {
      hostSeen.delete(frame);
      continue;
    }
    if (!hostSeen.has(frame)) hostSeen.set(frame, now);
    else if (now - hostSeen.get(frame) >= STUCK_WEBVIEW_MS) return true;
  }
  return false;
}

/** What the page holds (frames, side bar, panes, tabs), for a failure message. */
async function describeWorkbench(page) {
  const lines = ['frames:'];
  for (const frame of page.frames()) {
    let title = '';
    try {
      title = await frame.evaluate(() => `${document.title} | body ${document.body ? document.body.innerHTML.length : -1} chars`);
    } catch (e) {
      title = `(unreadable: ${String(e).slice(0, 80)})`;
    }
    lines.push(`  ${frame.parentFrame() ? '  ' : ''}${frame.url().slice(0, 160)} ${title}`);
  }
  try {
    const state = await page.evaluate(() => {
      const texts = (sel) => [...document.querySelectorAll(sel)].map((e) => (e.textContent || '').trim().slice(0, 60));
      return {
        sideBarTitle: texts('.part.sidebar .composite.title h2'),
        sideBarVisible: !!document.querySelector('.part.sidebar:not(.hidden)') && getComputedStyle(document.querySelector('.part.sidebar')).display !== 'none',
        activityChecked: texts('.activitybar .action-item.checked .action-label[aria-label]').concat([...document.querySelectorAll('.activitybar .action-item.checked .action-label')].map((e) => e.getAttribute('aria-label') || '')),
        paneHeaders: texts('.pane-header'),
        tabs: texts('.tabs-container .tab'),
        webviewContainers: document.querySelectorAll('.webview').length,
        notifications: texts('.notification-list-item-message'),
      };
    });
    lines.push(`workbench: ${JSON.stringify(state)}`);
  } catch (e) {
    lines.push(`workbench: (unreadable: ${String(e).slice(0, 80)})`);
  }
  return lines.join('\n');
}

/**
 * Run a command through the command palette (F1), as a person would.
 *
 * The palette closes when it loses the focus, and right after a webview took the focus (the
 * chat's Ctrl+Alt+D) VS Code can still hand the focus back to the webview a moment later: CI saw
 * the palette open and close again before its input could be filled. So the palette is opened
 * again (up to three times) when it closed under the runner, and Enter is pressed on the
 * palette's own input, never on whatever has the focus.
 */
async function runCommand(page, label) {
  const input = page.locator('.quick-input-widget input');
  const row = page.locator(`.quick-input-list .monaco-list-row[aria-label*="${label}"]`).first();
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('F1');
      await input.waitFor({ state: 'visible', timeout: 10000 });
      await input.fill(`>${label}`, { timeout: 5000 });
      await row.waitFor({ state: 'visible', timeout: 10000 });
      await input.press('Enter', { timeout: 5000 });
      return;
    } catch (e) {
      if (attempt >= 3) throw e;
      say(`the command palette closed before "${label}" ran (${String(e).split('\n', 1)[0]}); opening it again`);
      await page.waitForTimeout(500);
    }
  }
}

/** Open a workspace file from the explorer, by its path segments. */
async function openFromExplorer(page, ...segments) {
  if (!(await page.locator('.explorer-folders-view').isVisible())) {
    await runCommand(page, 'View: Show Explorer');
    await page.waitForSelector('.explorer-folders-view', { state: 'visible', timeout: 10000 });
  }
  const row = (name) => page.locator('.explorer-folders-view').getByRole('treeitem', { name, exact: true });
  for (const segment of segments) await row(segment).click();
  await page.waitForSelector(`.tab.active:has-text("${segments[segments.length - 1]}")`, { timeout: 15000 });
}

/**
 * Write `name` in $DSH_E2E_DIR whole, for the other half of the test: it polls the folder and
 * reads a file as soon as the name shows, and a file written in place shows, empty, before its
 * bytes are in it. Under load chat-suite.js read a call-N.json that way; its JSON.parse threw,
 * which ended the extension-host suite ("suite exit 1") and left the runner waiting for answers.
 */
function writeWhole(name, text) {
  const file = path.join(env('DSH_E2E_DIR'), name);
  fs.writeFileSync(`${file}.tmp`, text);
  fs.renameSync(`${file}.tmp`, file);
}

/** Write a handshake file for the other half of the test (pytest or the extension-host suite). */
function handshake(name, value) {
  writeWhole(name, JSON.stringify(value ?? {}));
}

/** Wait until the extension-host suite (or pytest) wrote `name`; returns its JSON. */
async function waitForFile(name, ms, stillRunning = () => true) {
  const file = path.join(env('DSH_E2E_DIR'), name);
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8') || '{}');
    if (!stillRunning()) throw new Error(`the extension-host suite ended before ${name}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${name}`);
}

/**
 * Record every notification the workbench shows, from the first paint on (a notification that
 * was dismissed or clicked away leaves no trace in the notification center).
 */
async function recordNotifications(page) {
  await page.addInitScript(() => {
    const seen = new Set();
    // @ts-ignore a test-only global
    window.__notifications = seen;
    new MutationObserver(() => {
      for (const el of document.querySelectorAll('.notification-list-item-message')) {
        const text = (el.textContent || '').trim();
        if (text !== '') seen.add(text);
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
}

/** Every distinct notification text shown so far. */
async function notificationsSeen(page) {
  // @ts-ignore a test-only global
  return page.evaluate(() => [...(window.__notifications || [])]);
}

/**
 * In the page (passed to frame.evaluate): the WCAG contrast of every visible element matching
 * `selector`, in its current state (hovered too, when the mouse is over it): the text colour,
 * faded by the opacity of the element and its ancestors, over the background composited from the
 * page down. Each entry: `what` (tag, classes and text), `ratio`, and the two colours.
 */
function measureContrast({ selector }) {
  const parse = (c) => {
    const m = /rgba?\(([^)]+)\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (fg, bg) => ({ r: fg.r * fg.a + bg.r * (1 - fg.a), g: fg.g * fg.a + bg.g * (1 - fg.a), b: fg.b * fg.a + bg.b * (1 - fg.a), a: 1 });
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  };
  const css = (c) => `rgb(${Math.round(c.r)}, ${Math.round(c.g)}, ${Math.round(c.b)})`;
  // The colour a CSS variable resolves to (the webview host defines the theme's colours).
  const probe = document.createElement('span');
  document.body.append(probe);
  const colorOf = (value) => { probe.style.color = value; return parse(getComputedStyle(probe).color); };
  const rootStyle = getComputedStyle(document.documentElement);
  const page = [getComputedStyle(document.body).backgroundColor, rootStyle.backgroundColor].map(parse).find((c) => c && c.a > 0)
    || colorOf(rootStyle.getPropertyValue('--vscode-sideBar-background').trim() || rootStyle.getPropertyValue('--vscode-editor-background').trim())
    || { r: 255, g: 255, b: 255, a: 1 };
  const measured = [];
  for (const el of document.querySelectorAll(selector)) {
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0 || el.closest('[hidden]') || el.disabled) continue;
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.unshift(e);
    let bg = { ...page };
    let opacity = 1;
    for (const e of chain) {
      const cs = getComputedStyle(e);
      opacity *= Number(cs.opacity);
      const own = parse(cs.backgroundColor);
      if (own && own.a > 0) bg = over(own, bg);
    }
    const fg = parse(getComputedStyle(el).color);
    if (!fg) continue;
    const seen = over({ ...fg, a: fg.a * opacity }, bg);
    const l1 = lum(seen), l2 = lum(bg);
    const text = (el.textContent || el.getAttribute('aria-label') || el.getAttribute('placeholder') || '').trim().slice(0, 40);
    measured.push({
      what: `${el.tagName.toLowerCase()}.${String(el.className).replace(/ /g, '.')} "${text}"`,
      text,
      ratio: (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05),
      color: css(seen),
      background: css(bg),
    });
  }
  probe.remove();
  return measured;
}

/**
 * WCAG contrast of every visible control in `frame` (buttons, links, inputs, summaries, options).
 * Returns those under `min` (4.5:1, AA for normal text).
 */
async function contrastFailures(frame, label, min = 4.5) {
  const measured = await frame.evaluate(measureContrast, { selector: 'button, a, input, textarea, summary, [role=option], .tool-status' });
  return measured.filter((m) => m.ratio < min).map((m) => `${label}: ${m.what} ${m.ratio.toFixed(2)}:1`);
}

/** The contrast of each visible element matching `selector` in `frame`, as it is drawn now. */
async function contrastOf(frame, selector) {
  return frame.evaluate(measureContrast, { selector });
}

/**
 * A new 1400x900 page of `browser` with code-server showing $WORKSPACE and running `suite` (a file
 * of test/e2e/) as the extension-host half of the test; resolves once the workbench is drawn.
 */
async function openWorkbench(browser, suite) {
  const csUrl = env('CS_URL');
  const extDir = env('EXT_DIR');
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log('[page error]', String(e).slice(0, 300)));
  await page.exposeFunction('codeAutomationLog', () => undefined);
  await page.exposeFunction('codeAutomationExit', (c) => say(`suite exit ${c}`));
  const remote = `vscode-remote://${new URL(csUrl).host}`;
  const payload = JSON.stringify([
    ['extensionDevelopmentPath', `${remote}${extDir}`],
    ['extensionTestsPath', `${remote}${path.join(extDir, 'test', 'e2e', suite)}`],
    ['skipWelcome', 'true'],
  ]);
  await page.goto(`${csUrl}/?folder=${encodeURIComponent(env('WORKSPACE'))}&payload=${encodeURIComponent(payload)}`);
  await page.waitForSelector('.monaco-workbench', { timeout: 30000 });
  return page;
}

/**
 * Run a runner's `body(browser)` with a browser launched, and end every run the same way: on a
 * failure, its stack, what was found so far and a screenshot ($DSH_E2E_DIR/<name>-failure.png);
 * then `found` in $DSH_E2E_DIR/<name>-done for pytest, `done` for the extension-host suite, the
 * browser closed, and exit 0, or 2 after a failure.
 */
async function runReporting(name, found, body) {
  const dir = env('DSH_E2E_DIR');
  const browser = await launch();
  let code = 0;
  try {
    await body(browser);
  } catch (err) {
    code = 2;
    console.error('[runner] FAILED:', err && err.stack ? err.stack : err);
    console.error('[runner] found so far:', JSON.stringify(found).slice(0, 4000));
    try {
      const pages = browser.contexts().flatMap((c) => c.pages());
      if (pages[0]) await pages[0].screenshot({ path: path.join(dir, `${name}-failure.png`) });
    } catch {
      // the screenshot is a courtesy
    }
  } finally {
    fs.writeFileSync(path.join(dir, `${name}-done`), JSON.stringify(found, null, 2));
    fs.writeFileSync(path.join(dir, 'done'), '{}');
    await browser.close().catch(() => undefined);
  }
  process.exit(code);
}

/** A hard stop well inside the pytest timeout, so nothing can hang. */
function hardTimeout() {
  setTimeout(() => {
    console.error('[runner] hard timeout');
    process.exit(3);
  }, Number(process.env.RUNNER_TIMEOUT_MS || 150000)).unref();
}

/**
 * The chat view's title while it is in sight. The chat is alone in its view container, so the
 * workbench shows no pane header for it: the side bar's title names the container and the view
 * ("DSH Agent Chat: Agent: ws").
 */
const CHAT_VIEW_TITLE = (folder) => `.part.sidebar .composite.title:has-text("Agent: ${folder}")`;

module.exports = {
  CHAT_VIEW_TITLE, env, say, launch, openWorkbench, runReporting, findFrame, findReadyFrame, describeWorkbench, runCommand, openFromExplorer, handshake, writeWhole, waitForFile, hardTimeout,
  recordNotifications, notificationsSeen, contrastFailures, contrastOf,
};
