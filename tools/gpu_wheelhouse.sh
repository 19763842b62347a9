#!/usr/bin/env bash
# Every wheel a GPU machine without network needs to run coopdialect, its GPU checks and its
# tests: coopdialect itself (built from this tree) and, resolved for the GPU machine's Python,
# its dependencies (xDSL, numpy, ml_dtypes), the [cuda] extra (cuda-bindings and what it needs),
# pytest, and setuptools + wheel (to build coopdialect from a clone there). Writes .whl/
# (git-ignored) with requirements.txt. docs/gpu.md explains.
#
#   bash tools/gpu_wheelhouse.sh [PYTHON_VERSION]      # where there is network (default 3.12)
#
# then, on the GPU machine, from the copy of this tree that has .whl/ in it:
#
#   python3 -m pip install -q --no-index --find-links .whl --target /tmp/py -r .whl/requirements.txt
#   export PYTHONPATH=/tmp/py PATH=/tmp/py/bin:$PATH
#
# (or `pip install --no-index --find-links .whl '.[cuda]' pytest` to build coopdialect from the
# tree there, when it changed after the wheels were made).
set -euo pipefail
cd "$(dirname "$0")/.."
pyver=${1:-3.12}
wanted=("coopdialect[cuda]" pytest)

rm -rf .whl && mkdir -p .whl
python3 -m pip wheel -q --disable-pip-version-check --no-deps --wheel-dir .whl . \
    || { echo "gpu_wheelhouse: error: cannot build the coopdialect wheel" >&2; exit 1; }
# everything else as binary wheels for the GPU machine's interpreter, dependencies resolved
# against that platform (pip finds coopdialect's own requirements in the wheel just built)
python3 -m pip download -q --disable-pip-version-check --dest .whl --only-binary=:all: \
    --find-links .whl --python-version "$pyver" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform any \
    "${wanted[@]}" "setuptools>=68" wheel
printf '%s\n' "${wanted[@]}" > .whl/requirements.txt
ls .whl
