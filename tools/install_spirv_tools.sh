#!/usr/bin/env bash
# Install the Khronos validators the test suite needs: SPIRV-Tools (spirv-val, spirv-dis, spirv-as),
# glslang and SPIRV-Headers (the grammar the opcode tables are generated from).
#
# Debian bookworm ships SPIRV-Tools 2022.4, too old for SPV_NV_cooperative_matrix2 and
# SPV_NV_tensor_addressing, and trixie's 2025.1 (SPIRV-Headers 1.4.309) predates SPV_KHR_bfloat16,
# so this takes Debian forky's packages (SPIRV-Tools 2026.4, SPIRV-Headers 1.4.363, glslang 16.6)
# and runs them with forky's own dynamic loader and C/C++ runtime. Nothing is installed
# system-wide and no root is needed: apt-get runs with a private configuration, the .debs are
# only unpacked.
#
#   bin=$(bash tools/install_spirv_tools.sh) && export PATH="$bin:$PATH"
#
# The default directory names the suite (~/.cache/coopdialect/spirv-tools-forky), so a checkout
# that still expects another suite's tools keeps its own.
#
# Prints one line on stdout: the directory holding the tool wrappers. Logs go to stderr.
# Environment: SPIRV_TOOLS_CACHE (install dir, default ~/.cache/coopdialect/spirv-tools-SUITE),
#              SPIRV_TOOLS_SUITE (Debian suite, default forky), SPIRV_TOOLS_MIRROR.
# Idempotent: a second run checks a stamp and the tools, and returns at once.
set -euo pipefail

suite=${SPIRV_TOOLS_SUITE:-forky}
prefix=${SPIRV_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/coopdialect/spirv-tools-$suite}
mirror=${SPIRV_TOOLS_MIRROR:-http://deb.debian.org/debian}
packages=(spirv-tools glslang-tools spirv-headers libc6 libstdc++6 libgcc-s1)
tools=(spirv-val spirv-dis spirv-as spirv-opt glslangValidator)
stamp="$prefix/.stamp"
stamp_text="coopdialect spirv-tools 1 $suite"
libdir="$prefix/root/usr/lib/x86_64-linux-gnu"

log() { echo "install_spirv_tools: $*" >&2; }
fail() { echo "install_spirv_tools: error: $*" >&2; exit 1; }

installed() {
    [[ -f $stamp && "$(head -n1 "$stamp")" == "$stamp_text" ]] || return 1
    local t
    for t in "${tools[@]}"; do [[ -x "$prefix/bin/$t" ]] || return 1; done
    "$prefix/bin/spirv-val" --version >/dev/null 2>&1
}

if installed; then echo "$prefix/bin"; exit 0; fi

[[ $(uname -m) == x86_64 ]] || fail "only x86_64 is supported (this is $(uname -m))"
for c in apt-get dpkg-deb flock; do command -v "$c" >/dev/null || fail "'$c' is required"; done
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[[ -r $keyring ]] || fail "$keyring is missing (Debian package debian-archive-keyring)"

mkdir -p "$prefix"
exec 9>"$prefix/.lock"
flock 9
if installed; then echo "$prefix/bin"; exit 0; fi
log "fetching Debian $suite packages: ${packages[*]}"

apt_dir="$prefix/apt"
rm -rf "$apt_dir"
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
apt-get "${apt_opts[@]}" update >"$apt_dir/update.log" 2>&1 || { cat "$apt_dir/update.log" >&2; fail "apt-get update of $suite failed"; }
(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "${packages[@]}") >"$apt_dir/download.log" 2>&1 \
    || { cat "$apt_dir/download.log" >&2; fail "download of the $suite packages failed"; }

rm -rf "$prefix/root.new" "$prefix/bin.new"
mkdir -p "$prefix/root.new" "$prefix/bin.new"
for deb in "$apt_dir"/debs/*.deb; do
    dpkg-deb -x "$deb" "$prefix/root.new"
    echo "$(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version)" >>"$prefix/root.new/VERSIONS"
done
rm -rf "$apt_dir"

# Each wrapper starts the Debian binary through its own suite's loader and libraries only.
for t in "${tools[@]}"; do
    [[ -x "$prefix/root.new/usr/bin/$t" ]] || fail "$t is not in the $suite packages"
    cat >"$prefix/bin.new/$t" <<WRAP
#!/bin/sh
here=\$(dirname "\$(readlink -f "\$0")")
lib="\$here/../root/usr/lib/x86_64-linux-gnu"
exec "\$lib/ld-linux-x86-64.so.2" --inhibit-cache --library-path "\$lib" --argv0 $t "\$here/../root/usr/bin/$t" "\$@"
WRAP
    chmod +x "$prefix/bin.new/$t"
done
rm -rf "$prefix/root" "$prefix/bin"
mv "$prefix/root.new" "$prefix/root"
mv "$prefix/bin.new" "$prefix/bin"
ln -sfn root/usr/include/spirv/unified1/spirv.core.grammar.json "$prefix/spirv.core.grammar.json"

"$prefix/bin/spirv-val" --version >/dev/null || fail "the installed spirv-val does not run"
{ echo "$stamp_text"; cat "$prefix/root/VERSIONS"; } >"$stamp"
log "installed $("$prefix/bin/spirv-val" --version | head -n1)"
echo "$prefix/bin"
