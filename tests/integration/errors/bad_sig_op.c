/* SPDX-License-Identifier: BSL-1.0 */
/* Erroneous calls of the signal routines, chosen by argv[1]: "sig_op" passes a signal operator
 * that is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD to shmem_putmem_signal; "pe_quiet" passes
 * a PE that does not exist to shmem_pe_quiet. The last PE makes the call while the others wait in
 * a barrier; the job must end non-zero with "vkshmem error: <routine>: ..." naming the cause. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    char *buf = shmem_malloc(64);
    uint64_t *sig = shmem_malloc(sizeof(uint64_t));
    shmem_barrier_all();
    if (me == n - 1) {
        if (argc > 1 && strcmp(argv[1], "pe_quiet") == 0) {
            const int pes[2] = {0, n};
            shmem_pe_quiet(pes, 2);
        } else {
            const char src[8] = "abcdefg";
            shmem_putmem_signal(buf, src, sizeof src, sig, 1, 7, 0);
        }
        printf("PE %d: the erroneous call returned\n", me);
    }
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(buf);
    shmem_finalize();
    return 0;
}
