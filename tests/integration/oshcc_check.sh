#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# The compiler wrappers as users of other OpenSHMEM and MPI wrappers call them:
#   oshcc/oshc++ -show, -showme, --showme (print the command, run nothing), --showme:link with -lm;
#   a C program that calls powl links (libm comes with the wrapper) and runs;
#   -c compiles only (no link flags), and the object then links with the wrapper;
#   no compiler system directory (/usr/include) among the -I flags.
# Usage: oshcc_check.sh <bin dir holding oshcc, oshc++ and oshrun>
set -euo pipefail
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "oshcc_check: $*" >&2; exit 1; }

cat >"$tmp/pow.c" <<'C'
#include <math.h>
#include <shmem.h>
#include <stdio.h>
int main(int argc, char **argv) {
    (void)argv;
    shmem_init();
    volatile long double base = 2.0L + (long double)(argc - 1);
    long double r = powl(base, 10.0L); /* not folded: base is volatile */
    int ok = r == 1024.0L;
    if (shmem_my_pe() == 0) printf("powl %s\n", ok ? "ok" : "wrong");
    shmem_finalize();
    return ok ? 0 : 1;
}
C
cat >"$tmp/sync.cpp" <<'CXX'
#include <shmem.h>
#include <cstdio>
static long psync[SHMEM_BARRIER_SYNC_SIZE];
int main() {
    shmem_init();
    int rc = shmem_sync(SHMEM_TEAM_WORLD);          // 1.5 team sync
    shmem_sync(0, 0, shmem_n_pes(), psync);         // deprecated active set
    if (shmem_my_pe() == 0) std::printf("sync %d\n", rc);
    shmem_finalize();
    return rc;
}
CXX

for form in -show -showme --showme; do
    out=$("$bin/oshcc" "$form" "$tmp/pow.c" -o "$tmp/pow") || fail "oshcc $form failed"
    [[ "$out" == *" -lm"* ]] || fail "oshcc $form: no -lm in: $out"
    [[ "$out" != *"-I/usr/include "* && "$out" != *"-I/usr/include" ]] || fail "oshcc $form: -I/usr/include in: $out"
    [[ ! -e "$tmp/pow" ]] || fail "oshcc $form ran the compiler"
done
[[ $("$bin/oshcc" --showme:link) == *"-lm"* ]] || fail "--showme:link lacks -lm"
[[ " $("$bin/oshc++" -showme:compile)" == *" -I"* ]] || fail "oshc++ -showme:compile prints no -I"
cmd=$("$bin/oshcc" -show -c "$tmp/pow.c")
[[ "$cmd" != *"-lvkshmem"* && "$cmd" != *" -lm"* ]] || fail "-c adds link flags: $cmd"

"$bin/oshcc" "$tmp/pow.c" -o "$tmp/pow"
"$bin/oshcc" -c "$tmp/pow.c" -o "$tmp/pow.o"
"$bin/oshcc" "$tmp/pow.o" -o "$tmp/pow2"
"$bin/oshc++" -c "$tmp/sync.cpp" -o "$tmp/sync.o"
"$bin/oshc++" "$tmp/sync.o" -o "$tmp/sync"
[[ $("$bin/oshrun" -np 2 "$tmp/pow") == "powl ok" ]] || fail "pow did not print 'powl ok'"
[[ $("$bin/oshrun" -np 2 "$tmp/pow2") == "powl ok" ]] || fail "pow2 (compiled with -c, then linked) failed"
[[ $("$bin/oshrun" -np 2 "$tmp/sync") == "sync 0" ]] || fail "shmem_sync forms from C++ failed"
echo "oshcc_check: OK"
