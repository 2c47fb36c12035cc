#!/usr/bin/env bash
# Installs the tokenmill Python package for Debian's Python (/usr/bin/python3), offline:
# installs what is missing (scripts/setup.sh), builds the extension module with CMake in
# build-python/ (incremental on the next run) and pip-installs ./python.
# Usage: scripts/install_python.sh [extra pip arguments]
#   e.g. inside a venv made with --system-site-packages: PYTHON=.venv/bin/python scripts/install_python.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
python=${PYTHON:-/usr/bin/python3}
args=(--no-build-isolation --no-deps)
# Debian marks its Python as externally managed (PEP 668); outside a virtual environment pip
# needs to be told that installing there (into /usr/local) is meant.
if [[ $("$python" -c 'import sys; print(sys.prefix == sys.base_prefix)') == True ]]; then
  args+=(--break-system-packages)
fi
"$python" -m pip install "${args[@]}" "$@" "$root/python"
"$python" -c 'import tokenmill; print("installed tokenmill", tokenmill.__version__, "for", __import__("sys").executable)'
