#!/usr/bin/env bash
# VS Code extension toolchain: the extension's npm dependencies and bundle, plus a real VS Code
# (code-server 4.100.3, the last release for Node 20) and playwright-core to drive Debian's
# Chromium for the end-to-end tests. Both go into <repo>/.tools/ (git-ignored).
# Called by scripts/bootstrap as root on a fresh Debian machine that already has node 20, npm,
# chromium, ripgrep, libkrb5-dev and build-essential. Idempotent: every step skips work that is
# already done.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
ext="$repo/vscode-extension"
tools="$repo/.tools"

CODE_SERVER_VERSION=4.100.3
PLAYWRIGHT_VERSION=1.65.1
# code-server 4.100.3 pins @vscode/ripgrep 1.15.11, whose postinstall downloads ripgrep
# v13.0.0-10 from GitHub unless the archive is already in its cache directory.
RIPGREP_PKG_VERSION=1.15.11
RIPGREP_TAG=v13.0.0-10

log() { echo "bootstrap.d/vscode: $*"; }

need() { command -v "$1" >/dev/null || { echo "bootstrap.d/vscode: '$1' is missing" >&2; exit 1; }; }
need node
need npm
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" != "20" ]; then
  echo "bootstrap.d/vscode: code-server $CODE_SERVER_VERSION needs Node 20, found $(node --version)" >&2
  exit 1
fi

# --- 1. extension dependencies and bundle -----------------------------------------------------
# npm ci wipes node_modules, so only run it when the lock file changed since the last install.
stamp="$ext/node_modules/.dsh-lock-stamp"
if [ ! -f "$stamp" ] || ! cmp -s "$ext/package-lock.json" "$stamp"; then
  log "npm ci in vscode-extension/"
  (cd "$ext" && npm ci --no-audit --no-fund)
  cp "$ext/package-lock.json" "$stamp"
fi
log "building the extension bundle"
(cd "$ext" && npm run --silent build)

# --- 2. code-server ---------------------------------------------------------------------------
cs_dir="$tools/code-server"
cs_bin="$cs_dir/node_modules/.bin/code-server"
if [ -x "$cs_bin" ] && "$cs_bin" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION "; then
  log "code-server $CODE_SERVER_VERSION already installed"
else
  log "installing code-server $CODE_SERVER_VERSION into $cs_dir"
  case "$(uname -m)" in
    x86_64) rg_target=x86_64-unknown-linux-musl ;;
    aarch64) rg_target=aarch64-unknown-linux-musl ;;
    *) echo "bootstrap.d/vscode: unsupported machine $(uname -m)" >&2; exit 1 ;;
  esac
  need rg
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  # Workaround 1: seed @vscode/ripgrep's download cache with Debian's rg (no GitHub here).
  mkdir -p "$scratch/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION" "$scratch/rgpack"
  cp "$(command -v rg)" "$scratch/rgpack/rg"
  tar czf "$scratch/vscode-ripgrep-cache-$RIPGREP_PKG_VERSION/ripgrep-$RIPGREP_TAG-$rg_target.tar.gz" \
    -C "$scratch/rgpack" rg
  rm -rf "$cs_dir"
  mkdir -p "$cs_dir"
  printf '{\n  "name": "dsh-tools-code-server",\n  "private": true\n}\n' > "$cs_dir/package.json"
  # Workaround 2: node-pty's install runs `npx node-gyp`, which ~/.npmrc's yes=false would cancel.
  # Workaround 3: code-server's postinstall refuses root unless unsafe-perm is set.
  (cd "$cs_dir" && TMPDIR="$scratch" npm_config_yes=true npm_config_unsafe_perm=true \
    npm install --no-audit --no-fund --save-exact "code-server@$CODE_SERVER_VERSION")
  "$cs_bin" --version | grep -q "^$CODE_SERVER_VERSION " \
    || { echo "bootstrap.d/vscode: code-server install did not take" >&2; exit 1; }
  rm -rf "$scratch"
  trap - EXIT
fi

# --- 3. playwright-core (drives /usr/bin/chromium; never downloads a browser) -----------------
pw_dir="$tools/playwright"
if [ -f "$pw_dir/node_modules/playwright-core/package.json" ] \
  && [ "$(node -p "require('$pw_dir/node_modules/playwright-core/package.json').version")" = "$PLAYWRIGHT_VERSION" ]; then
  log "playwright-core $PLAYWRIGHT_VERSION already installed"
else
  log "installing playwright-core $PLAYWRIGHT_VERSION into $pw_dir"
  rm -rf "$pw_dir"
  mkdir -p "$pw_dir"
  printf '{\n  "name": "dsh-tools-playwright",\n  "private": true\n}\n' > "$pw_dir/package.json"
  (cd "$pw_dir" && npm install --no-audit --no-fund --save-exact "playwright-core@$PLAYWRIGHT_VERSION")
fi
log "ready"
