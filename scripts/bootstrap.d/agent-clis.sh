#!/usr/bin/env bash
# The real agent CLIs for the end-to-end tests under tests/agents/ (scripts/install-agent-clis).
set -euo pipefail
exec "$(dirname "$0")/../install-agent-clis"
