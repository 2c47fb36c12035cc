#!/usr/bin/env bash
# Sets up, builds and runs every test. Exit code: 0 when all pass.
# Usage: scripts/test.sh [BUILD_DIR] [extra cmake args...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build_dir=${1:-"$root/build"}
shift || true
"$root/scripts/build.sh" "$build_dir" "$@"
cd "$build_dir"
ctest --output-on-failure -j "$(nproc)" --timeout 1200
