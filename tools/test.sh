#!/usr/bin/env bash
# README command (2): install everything the tests need on a fresh machine, then run every test.
#
#   bash tools/test.sh            # venv + packages + Khronos tools, then lit (FileCheck) and pytest
#                                 # (every test but the GPU tests of tests/gpu/, marker `gpu`)
#   bash tools/test.sh -k ptxas   # arguments go to pytest (lit runs every test)
#   HYPOTHESIS_PROFILE=long bash tools/test.sh   # ten times the property-test examples
#
# What it installs: a virtual environment in .venv (filled by uv, which pip puts there first) with
# coopdialect, its test extras (pytest-xdist, NVIDIA's nvdisasm wheel, for the SASS checks of
# tests/sass_check.py) and the [cuda] extra (cuda-bindings: the CUDA runner's no-driver path is
# tested against it), and SPIRV-Tools/glslang/SPIRV-Headers from Debian forky
# (tools/install_spirv_tools.sh). ptxas must be on PATH or at /usr/local/bin/ptxas (CUDA); a
# missing validator makes the suite fail.
set -euo pipefail
cd "$(dirname "$0")/.."

# The interpreter's own path, found once: a version manager's `python3` (pyenv's shim) spends
# ~0.3 s choosing the interpreter at every call.
py=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable if sys.version_info >= (3, 11) else "")')
[[ -n $py ]] || { echo "Python 3.11+ is required" >&2; exit 1; }
# The Khronos tools are fetched meanwhile (Debian packages, ~7 s on a fresh machine).
spv_log=$(mktemp)
bash tools/install_spirv_tools.sh >"$spv_log" 2>"$spv_log.err" &
spv_pid=$!
# A new .venv gets uv from the host's pip where it can install into another interpreter
# (`--python`, pip >= 22.3; ensurepip's separate install of pip and setuptools is spared), and
# uv installs the rest, pip included: about half of pip's time on a fresh machine (10 s against
# 19 s), where nothing is cached. Without uv (no wheel for the platform, an older pip) pip does
# it all. Nothing is byte-compiled at install (uv's default, pip's --no-compile): the run below
# writes the bytecode of what the tests import, once, on first import, rather than compiling
# every module of every package (~10 s).
pip=(.venv/bin/python -m pip)
if [[ ! -x .venv/bin/python ]]; then
    # (pip >= 22.3 has --python, which wants a path: `--python python3` is refused; asking pip
    # itself took ~1 s, importing it to read its version ~0.05 s; ensurepip took ~10 s instead)
    if "$py" -c 'import sys, pip; sys.exit(tuple(map(int, pip.__version__.split(".")[:2])) < (22, 3))' \
            >/dev/null 2>&1; then
        "$py" -m venv --without-pip .venv
        pip=("$py" -m pip --python .venv/bin/python)
    else
        "$py" -m venv .venv
    fi
fi
# The repository's own modules are byte-compiled meanwhile, on the CPU the installers leave
# idle: the test processes, which start together below, would each compile them on first import
# otherwise. Not the test modules and conftest.py: pytest compiles its own assert-rewritten
# bytecode of those and never reads the plain one.
"$py" -m compileall -q -j 0 -x '/(test_[^/]*|conftest)\.py$' coopdialect passes tools tests \
    >/dev/null 2>&1 &
compile_pid=$!
log=$(mktemp)
# (uv reads no pip configuration: where only pip reaches a package index, pip installs.) uv
# first tries its cache alone (--offline): where it holds every package, asking the index
# whether each is still current is ~1.3 s of a ~3 s install; anything missing, and it asks.
uv_install=(.venv/bin/uv pip install -q --python .venv/bin/python pip -e '.[test,cuda]')
if { [[ -x .venv/bin/uv ]] || "${pip[@]}" install -q --disable-pip-version-check uv >"$log" 2>&1; } \
        && { "${uv_install[@]}" --offline >"$log" 2>&1 || "${uv_install[@]}" >"$log" 2>&1; }; then
    :
else
    "${pip[@]}" install -q --disable-pip-version-check --no-compile pip -e '.[test,cuda]' \
        >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
fi
rm -f "$log"
wait "$compile_pid" || true
# Each process of the run (two pytest-xdist workers, lit, the coop-opt/coop-run subprocesses of
# the tests) would otherwise compile coopdialect's sources and pytest would rewrite the test
# modules' asserts again in every worker, where PYTHONDONTWRITEBYTECODE is set in the environment.
unset PYTHONDONTWRITEBYTECODE
# One OpenBLAS thread per process: the run already keeps every CPU busy (a pytest-xdist worker
# each, lit's workers beside them), and OpenBLAS's helper threads (numpy's matmul in the
# interpreter) would spin on CPUs another process is using.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

wait "$spv_pid" || { cat "$spv_log.err" >&2; exit 1; }
bin=$(cat "$spv_log")
rm -f "$spv_log" "$spv_log.err"
export PATH="$bin:$PATH"
export SPIRV_TOOLS_CACHE=$(dirname "$bin")
if ! command -v ptxas >/dev/null && [[ -x /usr/local/bin/ptxas ]]; then export PATH="$PATH:/usr/local/bin"; fi
command -v ptxas >/dev/null || { echo "error: ptxas (CUDA) not found on PATH or at /usr/local/bin" >&2; exit 1; }

# lit and pytest run side by side (both spread over the CPUs: lit's workers, pytest-xdist's
# `-n auto` with worksteal, idle workers taking queued tests), so neither's last slow test leaves
# a CPU idle; lit's report follows pytest's. lit's coop-opt and filecheck runs are forked from
# one process that has imported coopdialect and filecheck (tests/filecheck/tool_server.py, whose
# client lit.cfg builds from tool_client.c where a C compiler is found; LIT_TOOL_SERVER=0 starts a
# fresh interpreter for each). The gpu-marked tests (tests/gpu/) need a GPU:
# docs/runtime.md, "On a GPU".
lit_log=$(mktemp)
trap 'rm -f "$lit_log"' EXIT
.venv/bin/lit -q tests/filecheck >"$lit_log" 2>&1 &
lit_pid=$!
echo "== pytest"
pytest_rc=0
.venv/bin/python -m pytest tests -p no:cacheprovider -m "not gpu" -n auto --dist worksteal "$@" || pytest_rc=$?
lit_rc=0
wait "$lit_pid" || lit_rc=$?
echo "== FileCheck tests (lit): $([[ $lit_rc == 0 ]] && echo passed || echo FAILED)"
cat "$lit_log"
exit $(( pytest_rc != 0 ? pytest_rc : lit_rc ))
