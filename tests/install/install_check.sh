#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# install_check.sh <build dir>
#
# vkshmem as a newcomer's dependency: installs the build into a temporary prefix, moves that
# tree elsewhere (the install must not remember where it was made), then builds the programs of
# tests/install/consumer — a C program, a C++ program and a shader program with a GLSL and an
# HLSL kernel — three ways (and an OpenSHMEM 1.0 C program with oshcc):
#   oshcc/oshc++ (and glslc, glslangValidator with the installed device library),
#   find_package(vkshmem) (vkshmem_add_shaders embeds the kernels),
#   pkg-config --cflags --libs vkshmem (and --variable=shaderdir),
# and runs each at 2 PEs with the installed oshrun. Also checks the man pages, the versioned
# SONAME and `vkshmem-info --version`. Leaves nothing behind.
set -euo pipefail
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$here/consumer
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vkshmem-install-check.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT

fail() { echo "install_check: FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "cmake --install into a temporary prefix, then move it"
cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/prefix"
prefix=$tmp/prefix
libdir=$(dirname "$(find "$prefix" -name 'libvkshmem.so' -print -quit)")
[ -n "$libdir" ] && [ -d "$libdir" ] || fail "no libvkshmem.so under $prefix"

step "the library: versioned SONAME"
soname=$(readelf -d "$libdir/libvkshmem.so" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[[ "$soname" =~ ^libvkshmem\.so\.[0-9]+$ ]] || fail "SONAME '$soname' is not libvkshmem.so.<major>"
[ -e "$libdir/$soname" ] || fail "$soname is not installed next to libvkshmem.so"

step "vkshmem-info --version and the man pages"
"$prefix/bin/vkshmem-info" --version | tee "$tmp/version.txt"
grep -Eq '^vkshmem-info \(vkshmem\) [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/version.txt" || fail "vkshmem-info --version"
grep -Eq '^git revision [0-9a-z.-]+$' "$tmp/version.txt" || fail "vkshmem-info --version names no git revision"
for page in oshrun oshcc oshc++ vkshmem-info; do
    f=$(find "$prefix" -path "*/man1/$page.1" -print -quit)
    [ -n "$f" ] || fail "no man page for $page"
    grep -q '^\.SH DESCRIPTION' "$f" || fail "$f has no DESCRIPTION"
done

oshrun=("$prefix/bin/oshrun" -np 2)
# run <label> <program> [args]: at 2 PEs, and both PEs must report ok.
run() {
    local label=$1
    shift
    local out lib
    # The program must load the moved install's library, not the build tree's.
    lib=$(ldd "$1" | sed -n 's/^[[:space:]]*libvkshmem\.so[^ ]* => \([^ ]*\).*/\1/p')
    [[ "$lib" == "$prefix"/* ]] || fail "$label: $1 loads libvkshmem from '$lib', not from $prefix"
    out=$(timeout 120 "${oshrun[@]}" "$@" 2>&1) || { echo "$out" >&2; fail "$label: exit status $?"; }
    [ "$(grep -c ': PE [01] ok$' <<<"$out")" -eq 2 ] || { echo "$out" >&2; fail "$label: not both PEs ok"; }
    echo "$label: ok"
}

shaderdir=$prefix/share/vkshmem/shaders
# The device library's two folders; GLSL for Vulkan 1.2, HLSL through glslang (shaders/README.md).
glsl() { glslc --target-env=vulkan1.2 -I "$1" -I "$1/generated" -o "$3" "$2"; }
hlsl() { glslangValidator -D -V --target-env vulkan1.1 -S comp -e main -I"$1" -I"$1/generated" -o "$3" "$2" >/dev/null; }

step "method 1: oshcc and oshc++"
m=$tmp/oshcc
mkdir -p "$m"
"$prefix/bin/oshcc" -std=c11 -O2 -o "$m/hello_c" "$src/hello.c"
"$prefix/bin/oshc++" -std=c++17 -O2 -o "$m/hello_cxx" "$src/hello.cpp"
"$prefix/bin/oshcc" -std=c11 -O2 -o "$m/shader" "$src/shader.c"
"$prefix/bin/oshcc" -O2 -o "$m/old_names" "$src/old_names.c"
# The profiling interface's header and entry points (a tool's own shmem_barrier_all calls on).
printf '%s\n' '#include <pshmem.h>' 'void shmem_barrier_all(void) { pshmem_barrier_all(); }' \
    'int main(void) { pstart_pes(0); shmem_barrier_all(); pshmem_finalize(); return 0; }' >"$m/tool.c"
"$prefix/bin/oshcc" -O2 -o "$m/tool" "$m/tool.c" || fail "a program with <pshmem.h> does not build"
glsl "$shaderdir" "$src/ring.comp" "$m/ring.spv"
hlsl "$shaderdir" "$src/ring.hlsl" "$m/ring_hlsl.spv"
run "oshcc C" "$m/hello_c"
run "oshcc C++" "$m/hello_cxx"
run "oshcc shader (GLSL)" "$m/shader" "$m/ring.spv"
run "oshcc shader (HLSL)" "$m/shader" "$m/ring_hlsl.spv"
run "oshcc C, OpenSHMEM 1.0 (mpp/shmem.h, start_pes, no shmem_finalize)" "$m/old_names"

step "method 2: find_package(vkshmem)"
m=$tmp/cmake
cmake -S "$src" -B "$m" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$m" >/dev/null
run "find_package C" "$m/hello_c"
run "find_package C++" "$m/hello_cxx"
run "find_package shader (GLSL)" "$m/shader"
run "find_package shader (HLSL)" "$m/shader_hlsl"

step "method 3: pkg-config"
m=$tmp/pkgconfig
mkdir -p "$m"
export PKG_CONFIG_PATH=$libdir/pkgconfig
read -r -a flags <<<"$(pkg-config --cflags --libs vkshmem)"
pc_shaderdir=$(pkg-config --variable=shaderdir vkshmem)
[ "$(cd "$pc_shaderdir" && pwd)" = "$shaderdir" ] || fail "pkg-config shaderdir $pc_shaderdir is not $shaderdir"
rpath=(-Wl,-rpath,"$libdir")
cc -std=c11 -O2 -o "$m/hello_c" "$src/hello.c" "${flags[@]}" "${rpath[@]}"
c++ -std=c++17 -O2 -o "$m/hello_cxx" "$src/hello.cpp" "${flags[@]}" "${rpath[@]}"
cc -std=c11 -O2 -o "$m/shader" "$src/shader.c" "${flags[@]}" "${rpath[@]}"
glsl "$pc_shaderdir" "$src/ring.comp" "$m/ring.spv"
hlsl "$pc_shaderdir" "$src/ring.hlsl" "$m/ring_hlsl.spv"
run "pkg-config C" "$m/hello_c"
run "pkg-config C++" "$m/hello_cxx"
run "pkg-config shader (GLSL)" "$m/shader" "$m/ring.spv"
run "pkg-config shader (HLSL)" "$m/shader" "$m/ring_hlsl.spv"

echo "install_check: every method builds and runs against the moved install tree"
