"""The hypothesis profiles of the suite, chosen by the HYPOTHESIS_PROFILE environment variable.

* `ci` (default): each property test runs the number of examples it names with `scaled(n)`, and
  tests that name none run 20: sized for `bash tools/test.sh` on a two-core machine.
* `long`: ten times as many (a nightly-style run: HYPOTHESIS_PROFILE=long bash tools/test.sh).

The slowest property tests run fewer examples in `ci` than they once did, and `long` still runs
more than that former count: test_legalize.py's padding test 5 (was 15; 50 in `long`) and its
pass test 10 (was 20; 100), test_ptx_arm_layouts.py's fragment test 10 (was 30; 100),
test_pipeline_coop_loads.py 12 (was 25; 120), test_pipeline_coop_loads_tensor.py 10 (was 20;
100), test_fold_tensor_views.py 60 programs (was 120; 600), the diagnostics fuzz slice 2 cases
per category (was 4; 20).

Both have no deadline (interpreting a kernel takes as long as it takes). Loaded by
tests/conftest.py before any test module is imported; on a machine without hypothesis (the GPU
machine runs tests/gpu/ only) nothing is registered.
"""

from __future__ import annotations

import os

try:
    from hypothesis import settings
except ImportError:  # tests/gpu/ needs no hypothesis
    settings = None

CI_EXAMPLES = 20
FACTOR = {"ci": 1, "long": 10}

if settings is not None:
    for _name, _factor in FACTOR.items():
        settings.register_profile(_name, max_examples=CI_EXAMPLES * _factor, deadline=None)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def scaled(n: int) -> int:
    """`n` examples in the `ci` profile, proportionally more in `long`."""
    return max(1, n * settings.default.max_examples // CI_EXAMPLES)
