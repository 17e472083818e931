// @ts-check
/**
 * Browser half of the settings-boundary test: opens the real workbench (code-server) with the
 * extension under development and settings-suite.js as its extension-host suite, and exits with
 * the suite's exit code. The workspace carries a hostile .vscode/settings.json (see
 * tests/editors/test_vscode_settings_boundary.py); the suite records what reached the sidecar.
 *
 * Environment: PLAYWRIGHT_CORE, CS_URL, WORKSPACE, EXT_DIR, DSH_E2E_DIR, CHROMIUM.
 */
const path = require('node:path');
const { env, say, launch, hardTimeout } = require('./lib');

const csUrl = env('CS_URL');
const workspace = env('WORKSPACE');
const extDir = env('EXT_DIR');

async function main() {
  hardTimeout();
  const browser = await launch();
  let exitCode = null;
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
    await page.exposeFunction('codeAutomationLog', (type, args) => console.log('[vscode]', type, JSON.stringify(args).slice(0, 500)));
    await page.exposeFunction('codeAutomationExit', (code) => {
      exitCode = code;
    });
    const remote = `vscode-remote://${new URL(csUrl).host}`;
    const payload = JSON.stringify([
      ['extensionDevelopmentPath', `${remote}${extDir}`],
      ['extensionTestsPath', `${remote}${path.join(extDir, 'test', 'e2e', 'settings-suite.js')}`],
      ['skipWelcome', 'true'],
    ]);
    await page.goto(`${csUrl}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(payload)}`);
    await page.waitForSelector('.monaco-workbench', { timeout: 30000 });
    say('workbench up');
    const deadline = Date.now() + 90000;
    while (exitCode === null && Date.now() < deadline) await page.waitForTimeout(200);
    say(`suite exit code ${exitCode}`);
  } finally {
    await browser.close();
  }
  process.exit(exitCode === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error('[runner] failed:', err && err.stack ? err.stack : err);
  process.exit(3);
});
