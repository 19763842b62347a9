"""The one-line error when no Vulkan driver answers: it names the loader, each ICD manifest the
loader would read and whether its library loads, and the missing GL dispatch libraries with the
Debian packages that hold them (docs/gpu.md).

The manifests are real files in a temporary folder, found through the loader's documented
variables (VK_DRIVER_FILES, XDG_DATA_DIRS, VK_ADD_DRIVER_FILES); which libraries "load" is
decided by the test, so the result does not depend on this machine's libraries.
"""

from __future__ import annotations

import json

import pytest

from coopdialect.runtime import DeviceError
from coopdialect.runtime.vulkan_setup import diagnose, icd_search_dirs

# NVIDIA's ICD needs libglvnd's dispatch libraries; these are Debian's packages for them
GLVND = {"libGLdispatch.so.0": "libglvnd0", "libGLX.so.0": "libglx0", "libGL.so.1": "libgl1",
         "libEGL.so.1": "libegl1", "libGLESv2.so.2": "libgles2", "libOpenGL.so.0": "libopengl0"}


def _manifest(path, library):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"file_format_version": "1.0.0",
                                "ICD": {"library_path": library, "api_version": "1.3.0"}}))
    return path


def _loads_except(*missing):
    return lambda name: f"{name}: cannot open shared object file" if name in missing else None


def test_names_the_missing_gl_dispatch_libraries_and_their_packages(tmp_path):
    icd = _manifest(tmp_path / "nvidia_icd.json", "libGLX_nvidia.so.0")
    text = diagnose({"VK_DRIVER_FILES": str(icd)},
                    _loads_except("libGLX_nvidia.so.0", "libGLdispatch.so.0", "libEGL.so.1"))
    assert "\n" not in text
    assert (f"ICD {icd} -> libGLX_nvidia.so.0 does not load: libGLX_nvidia.so.0: cannot open "
            "shared object file") in text
    assert "missing GL dispatch libraries: libGLdispatch.so.0 (libglvnd0), libEGL.so.1 (libegl1)" in text
    assert text.startswith("loader ") and text.endswith("docs/gpu.md; tools/fetch_vulkan_loader.sh")


def test_every_dispatch_library_is_checked(tmp_path):
    text = diagnose({"VK_DRIVER_FILES": str(tmp_path / "none.json")}, _loads_except(*GLVND))
    listed = text.split("missing GL dispatch libraries: ")[1].split("; ")[0]
    assert sorted(listed.split(", ")) == sorted(f"{lib} ({pkg})" for lib, pkg in GLVND.items())
    assert f"ICD {tmp_path / 'none.json'}: No such file or directory" in text


def test_a_loadable_driver_is_listed_without_complaint(tmp_path):
    icd = _manifest(tmp_path / "icd.d" / "nvidia_icd.json", "libGLX_nvidia.so.0")
    egl = tmp_path / "10_nvidia.json"
    egl.write_text('{"file_format_version": "1.0.0", "ICD": {"library_path": "libEGL_nvidia.so.0"}}')
    text = diagnose({"VK_DRIVER_FILES": str(tmp_path / "icd.d"),
                     "__EGL_VENDOR_LIBRARY_FILENAMES": str(egl)}, _loads_except())
    assert f"ICD {icd} -> libGLX_nvidia.so.0;" in text
    assert "missing" not in text and "does not load" not in text


def test_a_missing_egl_vendor_file_is_named(tmp_path):
    text = diagnose({"VK_DRIVER_FILES": str(tmp_path / "x.json"),
                     "__EGL_VENDOR_LIBRARY_DIRS": str(tmp_path / "none")}, _loads_except())
    assert ("no EGL vendor file (glvnd egl_vendor.d): set __EGL_VENDOR_LIBRARY_FILENAMES to the "
            "driver's (NVIDIA: 10_nvidia.json)") in text


def test_search_follows_the_xdg_folders_and_add_driver_files(tmp_path):
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_DIRS": str(tmp_path / "data"),
           "XDG_CONFIG_DIRS": str(tmp_path / "conf")}
    # the loader's order: config home, config dirs, /etc, data home, data dirs
    assert icd_search_dirs(env) == [
        str(tmp_path / "home/.config/vulkan/icd.d"), str(tmp_path / "conf/vulkan/icd.d"),
        "/etc/vulkan/icd.d", str(tmp_path / "home/.local/share/vulkan/icd.d"),
        str(tmp_path / "data/vulkan/icd.d")]
    a = _manifest(tmp_path / "data/vulkan/icd.d/a.json", "./liba.so")  # relative to the manifest
    b = _manifest(tmp_path / "extra.json", "libb.so")
    text = diagnose({**env, "VK_ADD_DRIVER_FILES": str(b)}, _loads_except())
    assert f"ICD {a} -> {tmp_path}/data/vulkan/icd.d/./liba.so" in text
    assert f"ICD {b} -> libb.so" in text


def test_no_manifest_says_where_it_looked(tmp_path):
    env = {"HOME": str(tmp_path), "XDG_DATA_DIRS": str(tmp_path / "d"),
           "XDG_CONFIG_DIRS": str(tmp_path / "c")}
    text = diagnose(env, _loads_except())
    if "/etc/vulkan/icd.d" in text and "ICD /etc/vulkan" in text:
        pytest.skip("this machine has a system-wide ICD manifest")
    assert f"no ICD manifest (*.json) in {tmp_path}/.config/vulkan/icd.d, " in text
    assert "set VK_DRIVER_FILES" in text


@pytest.mark.parametrize("error, start", [
    ("driver", "<device>: error: no Vulkan driver found (vkCreateInstance failed: "
               "VK_ERROR_INCOMPATIBLE_DRIVER; loader "),
    ("loader", "<device>: error: no Vulkan loader found (libvulkan.so.1 cannot be loaded: "
               "libvulkan.so.1: cannot open shared object file; install libvulkan1: docs/gpu.md"),
])
def test_the_device_error_is_one_line_with_the_diagnosis(monkeypatch, tmp_path, error, start):
    from coopdialect.runtime import vulkan, vulkan_ctypes

    class Ctx:
        def __init__(self, validation=None):
            if error == "driver":
                raise vulkan_ctypes.VulkanError("vkCreateInstance", -9)
            raise OSError("libvulkan.so.1 cannot be loaded: libvulkan.so.1: cannot open shared "
                          "object file")

    monkeypatch.setattr(vulkan_ctypes, "VulkanContext", Ctx)
    monkeypatch.setenv("VK_DRIVER_FILES", str(_manifest(tmp_path / "n.json", "libGLX_nv.so.0")))
    with pytest.raises(DeviceError) as e:
        vulkan.VulkanDevice()
    text = str(e.value)
    assert text.startswith(start) and "\n" not in text
    if error == "driver":
        assert f"ICD {tmp_path / 'n.json'} -> libGLX_nv.so.0 does not load" in text
