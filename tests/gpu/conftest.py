"""The GPU tests' devices: session fixtures `cuda` and `vulkan` (coopdialect.runtime devices).

Every test here is marked `gpu` and asks for one of them. `--device NAME` (tests/conftest.py;
repeat it for both) requires that device: its tests fail, with the driver's one-line reason, when
it does not open, and the tests of a device not named are skipped. Without `--device` a test
runs when its device opens and is skipped, with the reason, when it does not (no driver, no
GPU).
"""

from __future__ import annotations

import pytest


def _open(request, name: str):
    from coopdialect.runtime import DeviceError, open_device

    wanted = request.config.getoption("--device")
    if wanted and name not in wanted:
        pytest.skip(f"a {name} test; --device {' --device '.join(wanted)} names only "
                    f"{' and '.join(wanted)}")
    try:
        dev, why = open_device(name), None
    except DeviceError as e:
        why = str(e)
    if why is not None:  # outside the except: the reason alone, no exception chain
        if wanted:
            pytest.fail(f"--device {name}: {why}", pytrace=False)
        pytest.skip(f"no {name} device ({why}); --device {name} requires one")
    with dev:
        yield dev


@pytest.fixture(scope="session")
def cuda(request):
    """The CUDA device (PTX through the driver), for the whole session."""
    yield from _open(request, "cuda")


@pytest.fixture(scope="session")
def vulkan(request):
    """The Vulkan device (SPIR-V through libvulkan.so.1), for the whole session."""
    yield from _open(request, "vulkan")

