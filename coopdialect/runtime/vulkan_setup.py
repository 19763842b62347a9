"""Why no Vulkan driver answers: what the loader had to work with, said in one line.

When `vkCreateInstance` finds no driver (VK_ERROR_INCOMPATIBLE_DRIVER), the reason is nearly
always one of: no ICD manifest where the loader looks, a manifest whose driver library cannot be
loaded, or — for NVIDIA's driver, whose ICD is `libGLX_nvidia.so.0` — missing GL vendor-neutral
dispatch libraries (libglvnd) or EGL vendor files. `diagnose` names each, so the error says
what to install (docs/gpu.md; `tools/fetch_vulkan_loader.sh` fetches them for an offline
machine).

The manifest search follows the Vulkan loader's "Driver Discovery on Linux"
(LoaderDriverInterface.md): `VK_DRIVER_FILES` (or the older `VK_ICD_FILENAMES`) replaces the
search with its colon-separated files or folders; otherwise the loader reads
`$XDG_CONFIG_HOME`, `$XDG_CONFIG_DIRS`, /etc, `$XDG_DATA_HOME` and `$XDG_DATA_DIRS`, each with
`/vulkan/icd.d`, plus `VK_ADD_DRIVER_FILES`.
"""

from __future__ import annotations

import ctypes
import json
import os
from collections.abc import Callable, Mapping

GL_DISPATCH_LIBRARIES = (
    ("libGLdispatch.so.0", "libglvnd0"),
    ("libGLX.so.0", "libglx0"),
    ("libGL.so.1", "libgl1"),
    ("libEGL.so.1", "libegl1"),
    ("libGLESv2.so.2", "libgles2"),
    ("libOpenGL.so.0", "libopengl0"),
)
"""(library, Debian package) of libglvnd's dispatch libraries, which NVIDIA's ICD loads."""


def try_load(name: str) -> str | None:
    """None when the shared library `name` loads, else the dynamic linker's reason."""
    try:
        ctypes.CDLL(name)
    except OSError as e:
        return str(e)
    return None


def icd_search_dirs(env: Mapping[str, str]) -> list[str]:
    """The folders the loader searches for ICD manifests, in its order (no override set)."""
    home = env.get("HOME", "")
    config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    config_dirs = (env.get("XDG_CONFIG_DIRS") or "/etc/xdg").split(":")
    data_home = env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")
    data_dirs = (env.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share").split(":")
    roots = [config_home, *config_dirs, "/etc", data_home, *data_dirs]
    return [os.path.join(r, "vulkan", "icd.d") for r in roots if r]


def _manifests(entry: str) -> list[str]:
    if os.path.isdir(entry):
        return sorted(os.path.join(entry, f) for f in os.listdir(entry) if f.endswith(".json"))
    return [entry]


def icd_manifests(env: Mapping[str, str]) -> tuple[list[str], str]:
    """(manifest files, where they were looked for): the override's, or the search's."""
    override = env.get("VK_DRIVER_FILES") or env.get("VK_ICD_FILENAMES")
    if override:
        name = "VK_DRIVER_FILES" if env.get("VK_DRIVER_FILES") else "VK_ICD_FILENAMES"
        return [f for e in override.split(":") if e for f in _manifests(e)], name
    dirs = icd_search_dirs(env)
    extra = [f for e in env.get("VK_ADD_DRIVER_FILES", "").split(":") if e for f in _manifests(e)]
    return [f for d in dirs if os.path.isdir(d) for f in _manifests(d)] + extra, ", ".join(dirs)


def manifest_library(path: str) -> tuple[str | None, str | None]:
    """(the driver library a manifest names, None) or (None, why the manifest is unusable).
    A relative library path is relative to the manifest's folder when it contains a slash."""
    try:
        with open(path) as f:
            lib = json.load(f)["ICD"]["library_path"]
    except OSError as e:
        return None, e.strerror or str(e)
    except (ValueError, KeyError, TypeError):
        return None, "not an ICD manifest (no ICD.library_path)"
    if "/" in lib and not os.path.isabs(lib):
        lib = os.path.join(os.path.dirname(path), lib)
    return lib, None


def egl_vendor_files(env: Mapping[str, str]) -> list[str]:
    """The EGL vendor manifests libglvnd would read: `__EGL_VENDOR_LIBRARY_FILENAMES`, else the
    *.json in `__EGL_VENDOR_LIBRARY_DIRS` (default /etc/glvnd/egl_vendor.d and
    /usr/share/glvnd/egl_vendor.d)."""
    files = env.get("__EGL_VENDOR_LIBRARY_FILENAMES")
    if files:
        return [f for f in files.split(":") if f and os.path.exists(f)]
    dirs = (env.get("__EGL_VENDOR_LIBRARY_DIRS")
            or "/etc/glvnd/egl_vendor.d:/usr/share/glvnd/egl_vendor.d").split(":")
    return [f for d in dirs if d and os.path.isdir(d) for f in _manifests(d)]


def loaded_library(fragment: str = "libvulkan") -> str | None:
    """The path of the mapped shared library whose name contains `fragment` (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split(maxsplit=5)[-1].strip()
                if fragment in os.path.basename(path):
                    return path
    except OSError:
        pass
    return None


def diagnose(env: Mapping[str, str] | None = None,
             load: Callable[[str], str | None] = try_load) -> str:
    """One line: the loader in use, each ICD manifest and whether its library loads, the
    missing GL dispatch libraries, a missing EGL vendor file, and where to read more. `load(name)` is None or the reason a library
    does not load (`try_load`; replaceable for tests)."""
    env = os.environ if env is None else env
    parts = [f"loader {loaded_library() or 'libvulkan.so.1'}"]
    manifests, where = icd_manifests(env)
    if not manifests:
        parts.append(f"no ICD manifest (*.json) in {where}: set VK_DRIVER_FILES to the driver's "
                     "(NVIDIA: nvidia_icd.json)")
    for m in manifests:
        lib, problem = manifest_library(m)
        if problem is None:
            problem = load(lib)
            parts.append(f"ICD {m} -> {lib}" + (f" does not load: {problem}" if problem else ""))
        else:
            parts.append(f"ICD {m}: {problem}")
    missing = [f"{lib} ({pkg})" for lib, pkg in GL_DISPATCH_LIBRARIES if load(lib) is not None]
    if missing:
        parts.append("missing GL dispatch libraries: " + ", ".join(missing))
    if not egl_vendor_files(env):
        parts.append("no EGL vendor file (glvnd egl_vendor.d): set __EGL_VENDOR_LIBRARY_FILENAMES "
                     "to the driver's (NVIDIA: 10_nvidia.json)")
    parts.append("docs/gpu.md; tools/fetch_vulkan_loader.sh")
    return "; ".join(parts)
