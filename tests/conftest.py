"""What every test shares: the hypothesis profile and the `--device` option of the GPU tests.

The hypothesis profile (tests/hypothesis_profiles.py) is `ci` unless HYPOTHESIS_PROFILE names
another: `HYPOTHESIS_PROFILE=long bash tools/test.sh` runs ten times the examples (nightly).

`--device cuda` / `--device vulkan` (either or both) requires that GPU for the `gpu`-marked tests
of tests/gpu/ (docs/runtime.md, "On a GPU"): its tests fail, with the driver's reason, when it
does not open, and the other device's tests are skipped unless it is named too. Without
`--device` each GPU test runs where its device opens and is skipped, with the reason, where it
does not.

Each run gets a fresh folder for the outputs of external tools that several tests share
(`validators.glslang`), named by $COOP_TEST_TOOL_CACHE: made by the process that starts the run
(pytest-xdist's workers inherit it), removed when that process ends.
"""

from __future__ import annotations

import gc
import os
import shutil
import tempfile

# One OpenBLAS thread per process: tools/test.sh runs a pytest-xdist worker per CPU, and
# OpenBLAS's helper threads (numpy's matmul in the interpreter) would only spin on CPUs the
# other worker is using (a third more CPU time on the interpreter-heavy tests). OpenBLAS reads
# it once, when numpy loads it: here, before any test module imports numpy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import hypothesis_profiles  # noqa: F401  (registers the profiles and loads the chosen one)
from validators import TOOL_CACHE

_made_cache: str | None = None


def pytest_configure(config) -> None:
    global _made_cache
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: the controller's folder
        return
    _made_cache = tempfile.mkdtemp(prefix="coop-tool-cache-")
    os.environ[TOOL_CACHE] = _made_cache


def pytest_unconfigure(config) -> None:
    if _made_cache is not None:
        shutil.rmtree(_made_cache, ignore_errors=True)
        os.environ.pop(TOOL_CACHE, None)


def pytest_addoption(parser) -> None:
    parser.addoption("--device", action="append", choices=("cuda", "vulkan"), default=None,
                     help="run the gpu-marked tests of this device (repeat for both) and fail "
                          "them if it does not open (default: run those whose device opens, "
                          "skip the others)")


def pytest_collection_finish(session) -> None:
    """Keep the cyclic garbage collector off what collection imported (xDSL, the dialects,
    numpy: several hundred thousand objects that live to the end), and collect the young
    generation every 50,000 allocations rather than 700: a lowering builds tens of thousands of
    linked IR objects, and the collector walking them again and again took ~30% of its CPU time
    (tests/test_sparse_ptxas.py: 2.5 of 8 s). Cycles are still collected."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)
