"""What every test shares: the hypothesis profile and the `--device` option of the GPU tests.

The hypothesis profile (tests/hypothesis_profiles.py) is `ci` unless HYPOTHESIS_PROFILE names
another: `HYPOTHESIS_PROFILE=long bash tools/test.sh` runs ten times the examples (nightly).

`--device cuda` / `--device vulkan` (either or both) requires that GPU for the `gpu`-marked tests
of tests/gpu/ (docs/runtime.md, "On a GPU"): its tests fail, with the driver's reason, when it
does not open, and the other device's tests are skipped unless it is named too. Without
`--device` each GPU test runs where its device opens and is skipped, with the reason, where it
does not.
"""

from __future__ import annotations

import gc

import hypothesis_profiles  # noqa: F401  (registers the profiles and loads the chosen one)


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
