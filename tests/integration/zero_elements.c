/* SPDX-License-Identifier: BSL-1.0 */
/* Zero elements: every RMA, strided, signal and collective routine called with a count of zero is a
 * no-op that looks at none of its pointers, so NULL and private (non-symmetric) buffers are
 * accepted, also with VKSHMEM_ERROR_CHECKS=1 (as CTest runs it). A put with signal of zero
 * elements still delivers its signal. Around each group, a sentinel in both heaps must be
 * untouched, and an ordinary put after the no-ops must still arrive. Prints "zero_elements: N PEs
 * OK" from PE 0. */
#include <shmem.h>
#include <shmemx.h>

#include <stdint.h>
#include <stdio.h>

static int me, npes, right;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "zero_elements: PE %d: %s:%d: check failed: %s\n", me, __FILE__, __LINE__, #cond); \
            shmem_global_exit(1);                                                                            \
        }                                                                                                    \
    } while (0)

static long psync[SHMEM_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];

/* The sentinels every no-op must leave alone: a host-heap and a device-heap array of longs. */
static void check_untouched(const long *host, long *dev, long stamp) {
    long got[4];
    for (int k = 0; k < 4; ++k) CHECK(host[k] == stamp + k);
    shmem_long_get(got, dev, 4, me);
    for (int k = 0; k < 4; ++k) CHECK(got[k] == stamp + k);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    right = (me + 1) % npes;
    long *host = shmem_malloc(4 * sizeof(long));
    long *dev = shmem_malloc_with_hints(4 * sizeof(long), SHMEMX_MALLOC_DEVICE);
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    CHECK(host != NULL && dev != NULL && sig != NULL);
    const long stamp = 1000L * (me + 1);
    long init[4] = {stamp, stamp + 1, stamp + 2, stamp + 3};
    for (int k = 0; k < 4; ++k) host[k] = init[k];
    shmem_long_put(dev, init, 4, me);
    long priv[4] = {-1, -1, -1, -1}; /* a private buffer: not symmetric */
    long *none = NULL;
    shmem_barrier_all();

    /* RMA, contiguous and elemental-strided, typed, sized and mem, plain and context, on NULL and
     * on a private buffer as the remote address. */
    shmem_long_put(none, none, 0, right);
    shmem_long_get(none, none, 0, right);
    shmem_long_put(priv, priv, 0, right);
    shmem_long_get(priv, priv, 0, right);
    shmem_long_put_nbi(none, priv, 0, right);
    shmem_long_get_nbi(priv, none, 0, right);
    shmem_putmem(NULL, NULL, 0, right);
    shmem_getmem(NULL, NULL, 0, right);
    shmem_putmem_nbi(NULL, NULL, 0, right);
    shmem_getmem_nbi(NULL, NULL, 0, right);
    shmem_put64(NULL, NULL, 0, right);
    shmem_get32(NULL, NULL, 0, right);
    shmem_ctx_long_put(SHMEM_CTX_DEFAULT, none, none, 0, right);
    shmem_ctx_getmem(SHMEM_CTX_DEFAULT, NULL, NULL, 0, right);
    shmem_put(none, priv, 0, right);
    shmem_get(priv, none, 0, right);
    shmem_long_iput(none, none, 1, 1, 0, right);
    shmem_long_iget(none, none, 1, 1, 0, right);
    shmem_iput64(NULL, NULL, 2, 2, 0, right);
    shmem_long_ibput(none, none, 4, 4, 2, 0, right);
    shmem_long_ibget(none, none, 4, 4, 0, 3, right);
    shmem_ibput32(NULL, NULL, 4, 4, 2, 0, right);
    shmem_quiet();
    shmem_barrier_all();
    check_untouched(host, dev, stamp);

    /* Put with signal: no data, but the signal arrives. */
    shmem_long_put_signal(none, none, 0, sig, 3, SHMEM_SIGNAL_ADD, right);
    shmem_putmem_signal_nbi(NULL, priv, 0, sig, 4, SHMEM_SIGNAL_ADD, right);
    shmem_quiet();
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 7) == 7);
    shmem_barrier_all();
    check_untouched(host, dev, stamp);

    /* Collectives on teams (same count, zero, on every PE) and on active sets. */
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, none, none, 0, 0) == 0);
    CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, NULL, priv, 0, 0) == 0);
    CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, none, none, 0) == 0);
    CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, none, none, 0) == 0);
    CHECK(shmem_long_alltoall(SHMEM_TEAM_WORLD, none, none, 0) == 0);
    CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, none, none, 1, 1, 0) == 0);
    CHECK(shmem_alltoallmem(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0);
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, none, none, 0) == 0);
    CHECK(shmem_long_max_reduce(SHMEM_TEAM_WORLD, priv, priv, 0) == 0);
    CHECK(shmem_int64_and_reduce(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0);
    CHECK(shmem_long_sum_inscan(SHMEM_TEAM_WORLD, none, none, 0) == 0);
    CHECK(shmem_long_sum_exscan(SHMEM_TEAM_WORLD, none, none, 0) == 0);
    shmem_broadcast64(NULL, NULL, 0, 0, 0, 0, npes, psync);
    shmem_fcollect64(NULL, NULL, 0, 0, 0, npes, psync);
    shmem_alltoall32(NULL, NULL, 0, 0, 0, npes, psync);
    shmem_alltoalls64(NULL, NULL, 1, 1, 0, 0, 0, npes, psync);
    shmem_long_sum_to_all(none, none, 0, 0, 0, npes, pwrk, psync);
    shmem_barrier_all();
    check_untouched(host, dev, stamp);
    for (int k = 0; k < SHMEM_SYNC_SIZE; ++k) CHECK(psync[k] == SHMEM_SYNC_VALUE);

    /* collect with this PE's share zero and the others' not: it still runs, and dest gets theirs. */
    long *col = shmem_calloc((size_t)npes, sizeof(long));
    long *got = shmem_calloc((size_t)npes, sizeof(long));
    CHECK(col != NULL && got != NULL);
    col[0] = stamp;
    CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, got, me == 0 ? none : col, me == 0 ? 0 : 1) == 0);
    for (int pe = 1; pe < npes; ++pe) CHECK(got[pe - 1] == 1000L * (pe + 1));

    /* After all the no-ops, an ordinary put still arrives. */
    shmem_long_p(&host[0], -stamp, right);
    shmem_barrier_all();
    CHECK(host[0] == -1000L * ((me + npes - 1) % npes + 1));
    shmem_barrier_all();
    shmem_free(got);
    shmem_free(col);
    shmem_free(sig);
    shmem_free(dev);
    shmem_free(host);
    if (me == 0) printf("zero_elements: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
