#!/usr/bin/env bash
# The Vulkan loader and the GL vendor-neutral dispatch libraries, as Debian packages, for a GPU
# machine that has NVIDIA's driver but no loader (and maybe no network). docs/gpu.md explains.
#
# NVIDIA's Vulkan driver (its ICD, libGLX_nvidia.so.0) needs libglvnd's dispatch libraries: with
# the loader alone, vkCreateInstance fails with VK_ERROR_INCOMPATIBLE_DRIVER. So the set is
# libvulkan1 and libglvnd0, libegl1, libgl1, libglx0, libgles2, libopengl0 (amd64).
#
#   bash tools/fetch_vulkan_loader.sh [DIR]             # where there is network: .debs into DIR (default .gl)
#   bash tools/fetch_vulkan_loader.sh --unpack [DIR] [ROOT]
#                                                       # on the GPU machine: unpack into ROOT
#
# --unpack with ROOT = / (the default; needs root) unpacks over the system and runs ldconfig;
# with any other ROOT (no root needed) it prints the `export LD_LIBRARY_PATH=...` line to use
# before starting Python. Nothing else is installed: apt-get runs with a private configuration
# (no root, no system state touched) and the packages are only unpacked (dpkg-deb -x).
# Environment: VULKAN_LOADER_SUITE (Debian suite, default bookworm: its libraries need only glibc
# 2.34), VULKAN_LOADER_MIRROR (default http://deb.debian.org/debian), VULKAN_LOADER_EXTRA (more
# package names, space-separated).
set -euo pipefail

packages=(libvulkan1 libglvnd0 libegl1 libgl1 libglx0 libgles2 libopengl0)
log() { echo "fetch_vulkan_loader: $*" >&2; }
fail() { echo "fetch_vulkan_loader: error: $*" >&2; exit 1; }

unpack() {
    local dir=${1:-.gl} root=${2:-/} n=0 f
    command -v dpkg-deb >/dev/null || fail "'dpkg-deb' is required to unpack the packages"
    for f in "$dir"/*.deb; do
        [[ -e $f ]] || fail "no .deb files in $dir (fetch them first: bash tools/fetch_vulkan_loader.sh $dir)"
        dpkg-deb -x "$f" "$root"
        n=$((n + 1))
    done
    log "unpacked $n packages into $root"
    if [[ $root == / ]]; then
        ldconfig
    else
        echo "export LD_LIBRARY_PATH=$(cd "$root" && pwd)/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    fi
}

if [[ ${1:-} == --unpack ]]; then
    shift
    unpack "$@"
    exit 0
fi
[[ ${1:-} == -* ]] && { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }

dest=${1:-.gl}
suite=${VULKAN_LOADER_SUITE:-bookworm}
mirror=${VULKAN_LOADER_MIRROR:-http://deb.debian.org/debian}
read -r -a extra <<<"${VULKAN_LOADER_EXTRA:-}"
for c in apt-get dpkg-deb; do command -v "$c" >/dev/null || fail "'$c' is required"; done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r $keyring ]] || fail "$keyring is missing (Debian package debian-archive-keyring)"

apt_dir=$(mktemp -d)
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$apt_dir/debs"
echo "deb [arch=amd64 signed-by=$keyring] $mirror $suite main" >"$apt_dir/sources.list"
: >"$apt_dir/status"
apt_opts=(
    -q
    -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
    -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=/dev/null"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status"
    -o "Dir::Cache=$apt_dir" -o "Dir::Cache::archives=$apt_dir/archives"
    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
    -o "APT::Architecture=amd64" -o "APT::Architectures=amd64" -o "Acquire::Languages=none"
    -o "Acquire::Retries=3" -o "Debug::NoLocking=true"
)
[[ $EUID -eq 0 ]] && apt_opts+=(-o "APT::Sandbox::User=root")
log "fetching Debian $suite (amd64): ${packages[*]} ${extra[*]}"
apt-get "${apt_opts[@]}" update >"$apt_dir/update.log" 2>&1 \
    || { cat "$apt_dir/update.log" >&2; fail "apt-get update of $suite failed"; }
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}" "${extra[@]}") \
    >"$apt_dir/download.log" 2>&1 || { cat "$apt_dir/download.log" >&2; fail "download failed"; }

mkdir -p "$dest"
rm -f "$dest"/*.deb
mv "$apt_dir"/debs/*.deb "$dest"/
(cd "$dest" && sha256sum -- *.deb >SHA256SUMS)
for f in "$dest"/*.deb; do
    echo "  $(dpkg-deb -f "$f" Package) $(dpkg-deb -f "$f" Version)" >&2
done
cat >&2 <<EOF
fetch_vulkan_loader: wrote $(ls "$dest"/*.deb | wc -l) packages to $dest. On the GPU machine (this clone with $dest in it):
  bash tools/fetch_vulkan_loader.sh --unpack $dest            # as root: over /, then ldconfig
  eval "\$(bash tools/fetch_vulkan_loader.sh --unpack $dest /tmp/vk)"   # without root: LD_LIBRARY_PATH
EOF
