#!/usr/bin/env bash
# Installs the npm peers the parity scripts compare against into scripts/.peers (git-ignored),
# if they are not there yet: tiktoken (OpenAI's encoder, WASM) and tokenizers@0.23.2 (Hugging
# Face, Rust core). Needs node and npm (Debian: apt-get install nodejs npm).
set -euo pipefail
peers="$(cd "$(dirname "$0")" && pwd)/.peers"
need=()
[[ -d "$peers/node_modules/tiktoken" ]] || need+=(tiktoken)
[[ -f "$peers/node_modules/tokenizers/package.json" ]] &&
  grep -q '"version": "0.23.2"' "$peers/node_modules/tokenizers/package.json" || need+=(tokenizers@0.23.2)
if ((${#need[@]} > 0)); then
  command -v npm >/dev/null || { echo "install_peers.sh: npm is missing (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$peers"
  npm install --prefix "$peers" --no-audit --no-fund "${need[@]}" >&2
fi
