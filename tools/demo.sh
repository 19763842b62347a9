#!/usr/bin/env bash
# README command (1): install coopdialect and the Khronos tools, then compile the bundled f16 GEMM
# to SPIR-V, validate it with spirv-val, interpret it and print the check against numpy.
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
"$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "Python 3.11+ is required" >&2; exit 1; }
[[ -x .venv/bin/python ]] || "$py" -m venv .venv
log=$(mktemp)
.venv/bin/python -m pip install -q --disable-pip-version-check -e . >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
rm -f "$log"
bin=$(bash tools/install_spirv_tools.sh)
export PATH="$bin:$PATH"
.venv/bin/python tools/demo.py
