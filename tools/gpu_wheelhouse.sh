#!/usr/bin/env bash
# The wheels that let the GPU machine (no network, Python 3.12) run coopdialect: xDSL and its
# pure-Python dependencies, ml_dtypes, pytest (the GPU tests, tests/gpu/), and
# setuptools + wheel to build coopdialect itself there. Writes .whl/ (git-ignored: carry it).
#
#   bash tools/gpu_wheelhouse.sh [PYTHON_VERSION]                      # here, once (default 3.12)
#   python3 -m pip install -q --no-index --find-links .whl --no-deps --target /tmp/py \
#       $(cat .whl/requirements.txt) . && export PYTHONPATH=/tmp/py    # there (docs/runtime.md)
set -euo pipefail
cd "$(dirname "$0")/.."
pyver=${1:-3.12}
pkgs=(xdsl==0.74.0 immutabledict ordered-set typing-extensions ml_dtypes pytest pluggy iniconfig
      packaging pygments)
rm -rf .whl && mkdir -p .whl
python3 -m pip download -q --disable-pip-version-check --dest .whl --no-deps --only-binary=:all: \
    --python-version "$pyver" --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
    --implementation cp "${pkgs[@]}" "setuptools>=68" wheel
printf '%s\n' "${pkgs[@]}" > .whl/requirements.txt
ls .whl
