/* SPDX-License-Identifier: BSL-1.0 */
/* An OpenSHMEM 1.0 program built against an installed vkshmem: the old header path, start_pes,
 * shmalloc and no shmem_finalize (the library is finalized at exit). Every PE puts its number
 * into the next PE's symmetric word and checks the one it got. Prints "old_names: PE n ok". */
#include <mpp/shmem.h>
#include <mpp/shmemx.h>

#include <stdio.h>

int main(void) {
    start_pes(0);
    const int me = _my_pe(), n = _num_pes();
    int *got = shmalloc(sizeof(int));
    *got = -1;
    shmem_barrier_all();
    shmem_int_p(got, 1000 + me, (me + 1) % n);
    shmem_barrier_all();
    if (*got != 1000 + (me + n - 1) % n) {
        fprintf(stderr, "old_names: PE %d got %d\n", me, *got);
        return 1;
    }
    printf("old_names: PE %d ok\n", me);
    return 0;
}
