/* SPDX-License-Identifier: BSL-1.0 */
/* Soak: random operations checked against a local model.
 *
 *   soak [OPS] [--forever]     OPS operations per PE (default 20000); SOAK_SEED=<n> repeats a run
 *
 * Every PE owns one region of REGION bytes in each of the two heaps of every PE (host heap and
 * device heap), and one row of counters and one signal word on every PE. It alone writes them, so
 * it can keep a model of what every PE's copy must hold. Each step picks, at random: a put of a
 * random size (1 byte to the region) from fresh random bytes to a random offset, a get that must
 * return the model's bytes, a put with signal (the target's signal word counts them), an atomic on
 * one of its counters (add, fetch_add, inc, fetch_inc, swap, compare_swap, set, fetch, and, or,
 * xor) whose fetched value must be the model's, or a contended add to a word every PE adds to.
 * Every 512 steps all PEs meet in a barrier or a sum reduction. At the end each PE reads all of its
 * regions and counters back, and every PE checks its signal words and the contended words against
 * the counts the others report. Any difference ends the job with the seed, step and place.
 * Prints "soak: N PEs, M operations, 0 mismatches (seed S)" from PE 0.
 *
 * --forever runs until killed (the fault-injection test kills a PE mid-traffic). */
#include <shmem.h>
#include <shmemx.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define REGION 4096 /* bytes each PE owns in each heap of each PE */
#define COUNTERS 8  /* 8-byte counters each PE owns on each PE */
#define HEAPS 2

static int me, npes;
static uint64_t seed, rng;
static long step;

static uint64_t next_rand(void) { /* splitmix64 */
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t below(uint64_t n) { return next_rand() % n; }

static void mismatch(const char *what, int pe, int heap, long at, uint64_t got, uint64_t want) {
    fprintf(stderr,
            "soak: PE %d: MISMATCH at step %ld (seed %" PRIu64 "): %s on PE %d, heap %d, offset %ld: got %#" PRIx64
            ", expected %#" PRIx64 "\n",
            me, step, seed, what, pe, heap, at, got, want);
    shmem_global_exit(1);
}

int main(int argc, char **argv) {
    long ops = 20000;
    int forever = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--forever") == 0) forever = 1;
        else ops = atol(argv[i]);
    }
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();

    /* One seed for the job (PE 0's, or SOAK_SEED), each PE its own stream of it. */
    static uint64_t job_seed;
    if (me == 0) {
        const char *s = getenv("SOAK_SEED");
        job_seed = s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
    }
    shmem_barrier_all();
    job_seed = shmem_uint64_g(&job_seed, 0);
    seed = job_seed;
    rng = seed * 1000003u + (uint64_t)me;

    const size_t region_bytes = (size_t)npes * REGION;
    unsigned char *heap[HEAPS];
    heap[0] = shmem_malloc(region_bytes);
    heap[1] = shmem_malloc_with_hints(region_bytes, SHMEMX_MALLOC_DEVICE);
    uint64_t *counters = shmem_calloc((size_t)npes * COUNTERS, sizeof(uint64_t));
    uint64_t *signals = shmem_calloc((size_t)npes, sizeof(uint64_t));
    uint64_t *contended = shmem_calloc(1, sizeof(uint64_t));
    long *red_src = shmem_malloc(sizeof(long)), *red_dst = shmem_malloc(sizeof(long));
    if (!heap[0] || !heap[1] || !counters || !signals || !contended || !red_src || !red_dst) {
        fprintf(stderr, "soak: PE %d: allocation failed\n", me);
        shmem_global_exit(1);
    }
    /* Start from zero everywhere (the device heap is not zeroed by shmem_malloc). */
    unsigned char *zero = calloc(region_bytes, 1);
    for (int h = 0; h < HEAPS; ++h) shmem_putmem(heap[h], zero, region_bytes, me);
    free(zero);
    shmem_barrier_all();

    /* The model: what this PE's region and counters hold on every PE, and what it sent. */
    unsigned char *model = calloc((size_t)npes * HEAPS * REGION, 1);
    uint64_t *cmodel = calloc((size_t)npes * COUNTERS, sizeof(uint64_t));
    uint64_t *sig_sent = calloc((size_t)npes, sizeof(uint64_t));
    uint64_t *adds_to = calloc((size_t)npes, sizeof(uint64_t));
    unsigned char *dirty = calloc((size_t)npes, 1); /* a put since the last quiet */
    unsigned char buf[REGION], got[REGION];
#define MODEL(pe, h) (model + ((size_t)(pe) * HEAPS + (size_t)(h)) * REGION)
#define MINE(h) (heap[h] + (size_t)me * REGION)

    long done = 0;
    for (step = 0; forever || step < ops; ++step) {
        const int pe = (int)below((uint64_t)npes), h = (int)below(HEAPS);
        /* Sizes: mostly small, sometimes the whole region. */
        const size_t r = below(100);
        size_t len = r < 60 ? 1 + below(16) : r < 90 ? 1 + below(512) : 1 + below(REGION);
        const size_t off = below(REGION - len + 1);
        const unsigned kind = (unsigned)below(100);
        if (kind < 35) { /* put */
            for (size_t i = 0; i < len; ++i) buf[i] = (unsigned char)next_rand();
            shmem_putmem(MINE(h) + off, buf, len, pe);
            memcpy(MODEL(pe, h) + off, buf, len);
            dirty[pe] = 1;
        } else if (kind < 60) { /* get: after a put to that PE, quiet first (puts and gets are unordered) */
            if (dirty[pe]) shmem_quiet(), memset(dirty, 0, (size_t)npes);
            memset(got, 0xa5, len);
            shmem_getmem(got, MINE(h) + off, len, pe);
            for (size_t i = 0; i < len; ++i)
                if (got[i] != MODEL(pe, h)[off + i]) mismatch("get", pe, h, (long)(off + i), got[i], MODEL(pe, h)[off + i]);
        } else if (kind < 70) { /* put with signal: the signal counts puts */
            for (size_t i = 0; i < len; ++i) buf[i] = (unsigned char)next_rand();
            shmem_putmem_signal(MINE(h) + off, buf, len, &signals[me], 1, SHMEM_SIGNAL_ADD, pe);
            memcpy(MODEL(pe, h) + off, buf, len);
            ++sig_sent[pe];
            dirty[pe] = 1;
        } else if (kind < 92) { /* an atomic on one of this PE's counters */
            const int k = (int)below(COUNTERS);
            uint64_t *c = &counters[(size_t)me * COUNTERS + (size_t)k];
            uint64_t *m = &cmodel[(size_t)pe * COUNTERS + (size_t)k];
            const uint64_t v = next_rand(), old = *m;
            uint64_t f = old;
            switch (below(11)) {
            case 0: shmem_uint64_atomic_add(c, v, pe), *m = old + v; break;
            case 1: f = shmem_uint64_atomic_fetch_add(c, v, pe), *m = old + v; break;
            case 2: shmem_uint64_atomic_inc(c, pe), *m = old + 1; break;
            case 3: f = shmem_uint64_atomic_fetch_inc(c, pe), *m = old + 1; break;
            case 4: f = shmem_uint64_atomic_swap(c, v, pe), *m = v; break;
            case 5: { /* compare_swap: half the time with the right comparand */
                const uint64_t cond = below(2) ? old : old ^ 1;
                f = shmem_uint64_atomic_compare_swap(c, cond, v, pe);
                if (cond == old) *m = v;
                break;
            }
            case 6: shmem_uint64_atomic_set(c, v, pe), *m = v; break;
            case 7: f = shmem_uint64_atomic_fetch(c, pe); break;
            case 8: f = shmem_uint64_atomic_fetch_and(c, v, pe), *m = old & v; break;
            case 9: f = shmem_uint64_atomic_fetch_or(c, v, pe), *m = old | v; break;
            default: f = shmem_uint64_atomic_fetch_xor(c, v, pe), *m = old ^ v; break;
            }
            if (f != old) mismatch("atomic (fetched value)", pe, -1, k, f, old);
        } else { /* contended: every PE adds to the same word */
            shmem_uint64_atomic_add(contended, 1, pe);
            ++adds_to[pe];
        }
        ++done;
        if ((step + 1) % 512 == 0) {
            /* Collectives at the same steps on every PE (with --forever too: traffic until a PE is killed). */
            if ((step / 512) % 2) {
                shmem_barrier_all();
            } else {
                *red_src = (long)step + me;
                shmem_long_sum_reduce(SHMEM_TEAM_WORLD, red_dst, red_src, 1);
                const long want = (long)step * npes + (long)npes * (npes - 1) / 2;
                if (*red_dst != want) mismatch("sum_reduce", -1, -1, 0, (uint64_t)*red_dst, (uint64_t)want);
            }
        }
    }
    shmem_quiet();
    shmem_barrier_all();

    /* Read everything back. */
    for (int pe = 0; pe < npes; ++pe) {
        for (int h = 0; h < HEAPS; ++h) {
            shmem_getmem(got, MINE(h), REGION, pe);
            for (size_t i = 0; i < REGION; ++i)
                if (got[i] != MODEL(pe, h)[i]) mismatch("final read", pe, h, (long)i, got[i], MODEL(pe, h)[i]);
        }
        for (int k = 0; k < COUNTERS; ++k) {
            const uint64_t v = shmem_uint64_atomic_fetch(&counters[(size_t)me * COUNTERS + (size_t)k], pe);
            if (v != cmodel[(size_t)pe * COUNTERS + (size_t)k]) mismatch("final counter", pe, -1, k, v, cmodel[(size_t)pe * COUNTERS + (size_t)k]);
        }
    }
    /* Signals and contended adds: what every PE says it sent here must be here. */
    uint64_t *sent = shmem_malloc(2 * (size_t)npes * sizeof(uint64_t));
    uint64_t *recv = shmem_malloc(2 * (size_t)npes * sizeof(uint64_t));
    for (int p = 0; p < npes; ++p) sent[2 * p] = sig_sent[p], sent[2 * p + 1] = adds_to[p];
    shmem_barrier_all();
    shmem_uint64_alltoall(SHMEM_TEAM_WORLD, recv, sent, 2);
    uint64_t adds_here = 0;
    for (int p = 0; p < npes; ++p) {
        if (signals[p] != recv[2 * p]) mismatch("signal count from this PE", p, -1, p, signals[p], recv[2 * p]);
        adds_here += recv[2 * p + 1];
    }
    if (*contended != adds_here) mismatch("contended adds", me, -1, 0, *contended, adds_here);
    shmem_free(recv);
    shmem_free(sent);
    shmem_free(red_dst);
    shmem_free(red_src);
    shmem_free(contended);
    shmem_free(signals);
    shmem_free(counters);
    for (int h = 0; h < HEAPS; ++h) shmem_free(heap[h]);
    free(dirty);
    free(adds_to);
    free(sig_sent);
    free(cmodel);
    free(model);
    shmem_barrier_all();
    if (me == 0)
        printf("soak: %d PEs, %ld operations, 0 mismatches (seed %" PRIu64 ")\n", npes, done * npes, seed);
    shmem_finalize();
    return 0;
}
