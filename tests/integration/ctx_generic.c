/* SPDX-License-Identifier: BSL-1.0 */
/* The C11 generic interfaces with and without a context first: shmem_put, shmem_p, shmem_g,
 * shmem_atomic_fetch_add, shmem_atomic_add, shmem_put_signal, on a context of the team of all PEs
 * in reverse order (so a context's PE numbers differ from the world's). Prints
 * "ctx_generic: N PEs OK" from PE 0. */
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>

static int me;

static void fail(const char *what, long got, long want) {
    fprintf(stderr, "ctx_generic: PE %d: %s: got %ld, expected %ld\n", me, what, got, want);
    exit(1);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    const int n = shmem_n_pes();
    shmem_team_t rev;
    shmem_ctx_t ctx;
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev) != 0) fail("split", 1, 0);
    if (shmem_team_create_ctx(rev, 0, &ctx) != 0) fail("team_create_ctx", 1, 0);
    long *box = shmem_calloc(8, sizeof(long));
    double *dbox = shmem_calloc(4, sizeof(double));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    const int right = (me + 1) % n, left = (me + n - 1) % n;
    const int right_in_rev = n - 1 - right;
    long vals[4] = {me * 10 + 1, me * 10 + 2, me * 10 + 3, me * 10 + 4};
    double d = me + 0.5;

    shmem_put(box, vals, 2, right);                 /* box[0..1] from the left, world numbering */
    shmem_put(ctx, box + 2, vals + 2, 2, right_in_rev); /* box[2..3] from the left, through ctx */
    shmem_p(ctx, dbox, d, right_in_rev);
    shmem_p(dbox + 1, d, right);
    shmem_atomic_add(ctx, box + 4, me + 1, right_in_rev);
    (void)shmem_atomic_fetch_add(box + 5, 1L, right);
    shmem_put_signal(ctx, box + 6, vals, 1, sig, 1, SHMEM_SIGNAL_ADD, right_in_rev);
    shmem_quiet();
    shmem_wait_until(sig, SHMEM_CMP_EQ, 1);
    shmem_barrier_all();
    for (int i = 0; i < 4; ++i)
        if (box[i] != left * 10 + i + 1) fail("shmem_put", box[i], left * 10 + i + 1);
    if (dbox[0] != left + 0.5 || dbox[1] != left + 0.5) fail("shmem_p (double)", (long)dbox[0], left);
    if (box[4] != left + 1) fail("shmem_atomic_add", box[4], left + 1);
    if (box[5] != 1) fail("shmem_atomic_fetch_add", box[5], 1);
    if (box[6] != left * 10 + 1) fail("shmem_put_signal", box[6], left * 10 + 1);
    if (shmem_g(ctx, box + 4, right_in_rev) != me + 1) fail("shmem_g through ctx", shmem_g(ctx, box + 4, right_in_rev), me + 1);
    if (shmem_g(box + 4, right) != me + 1) fail("shmem_g", shmem_g(box + 4, right), me + 1);
    shmem_barrier_all();
    shmem_ctx_destroy(ctx);
    shmem_team_destroy(rev);
    shmem_free(sig);
    shmem_free(dbox);
    shmem_free(box);
    if (me == 0) printf("ctx_generic: %d PEs OK\n", n);
    shmem_finalize();
    return 0;
}
