/*
 * vkshmem-coll-perf — collective micro-benchmarks over all PEs.
 *
 * Plain C11 against the OpenSHMEM 1.4 active-set collectives, which every
 * implementation has (vkshmem, Open MPI's OSHMEM, SOS), so the same source
 * builds with each for side-by-side runs (bench/compare.sh --program
 * vkshmem-coll-perf --np 4).
 *
 *   barrier    shmem_barrier_all
 *   bcast      shmem_broadcast64 from PE 0, SIZE bytes
 *   reduce     shmem_long_sum_to_all of SIZE / 8 longs
 *   fcollect   shmem_fcollect64, SIZE bytes from each PE
 *   alltoall   shmem_alltoall64, SIZE bytes to each PE
 *
 * Every PE runs the same number of back-to-back calls (two pSync arrays in
 * turn, as the 1.4 specification asks of consecutive calls); PE 0 reports the
 * mean time per call in microseconds. The number of calls comes from a
 * warm-up on PE 0 (about TARGET_SECONDS per row, times --iters-scale). After
 * timing, one call with fresh data is checked on every PE; a wrong result
 * makes the exit status 1.
 */
#define _POSIX_C_SOURCE 200809L

#include <shmem.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIN_SIZE ((size_t)8)
#define DEFAULT_MAX_SIZE ((size_t)64 << 10)
#define TARGET_SECONDS 0.2
#define MAX_CALLS 200000L

enum { T_BARRIER, T_BCAST, T_REDUCE, T_FCOLLECT, T_ALLTOALL, T_COUNT };
static const char *const k_names[T_COUNT] = {"barrier", "bcast", "reduce", "fcollect", "alltoall"};

static long pSync[2][SHMEM_REDUCE_SYNC_SIZE > SHMEM_BCAST_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE
                                                                     : SHMEM_BCAST_SYNC_SIZE];
static long pSync_c[2][SHMEM_COLLECT_SYNC_SIZE > SHMEM_ALLTOALL_SYNC_SIZE ? SHMEM_COLLECT_SYNC_SIZE
                                                                          : SHMEM_ALLTOALL_SYNC_SIZE];
static int g_me, g_npes, g_failed, g_csv;
static double g_scale = 1.0;
static uint64_t *g_src, *g_dst; /* symmetric */
static long *g_wrk;             /* reduce work array (symmetric) */
static long *g_plan;            /* calls per row, from PE 0 */

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* One call of test t with `size` bytes; k picks the pSync array. */
static void run_once(int t, size_t size, long k) {
    const size_t words = size / 8;
    long *ps = pSync[k & 1], *pc = pSync_c[k & 1];
    switch (t) {
    case T_BARRIER: shmem_barrier_all(); break;
    case T_BCAST: shmem_broadcast64(g_dst, g_src, words, 0, 0, 0, g_npes, ps); break;
    case T_REDUCE:
        shmem_long_sum_to_all((long *)g_dst, (const long *)g_src, (int)words, 0, 0, g_npes, g_wrk, ps);
        break;
    case T_FCOLLECT: shmem_fcollect64(g_dst, g_src, words, 0, 0, g_npes, pc); break;
    case T_ALLTOALL: shmem_alltoall64(g_dst, g_src, words, 0, 0, g_npes, pc); break;
    }
}

static uint64_t word_of(int pe, size_t i, unsigned salt) {
    uint64_t x = ((uint64_t)pe << 40) ^ ((uint64_t)salt << 20) ^ (uint64_t)i;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 31);
}

/* One call with fresh data, checked on this PE. */
static void check(int t, size_t size, unsigned salt) {
    const size_t words = size / 8, n = (size_t)g_npes;
    if (t == T_BARRIER) return;
    const size_t src_words = t == T_ALLTOALL ? words * n : words;
    for (size_t i = 0; i < src_words; i++) g_src[i] = word_of(g_me, i, salt);
    for (size_t i = 0; i < words * n; i++) g_dst[i] = 0;
    shmem_barrier_all();
    run_once(t, size, 0);
    shmem_barrier_all();
    size_t bad = (size_t)-1;
    for (size_t i = 0; i < words * n && bad == (size_t)-1; i++) {
        const size_t pe = i / words, j = i % words;
        uint64_t want;
        switch (t) {
        case T_BCAST: /* the root's dest is not written by a 1.4 broadcast */
            if (i >= words || g_me == 0) continue;
            want = word_of(0, i, salt);
            break;
        case T_REDUCE:
            if (i >= words) continue;
            want = 0;
            for (int p = 0; p < g_npes; p++) want += word_of(p, i, salt);
            break;
        case T_FCOLLECT: want = word_of((int)pe, j, salt); break;
        default: want = word_of((int)pe, (size_t)g_me * words + j, salt); break;
        }
        if (g_dst[i] != want) bad = i;
    }
    if (bad != (size_t)-1) {
        fprintf(stderr, "vkshmem-coll-perf: FAILED: %s, %zu bytes: PE %d word %zu is wrong\n", k_names[t], size,
                g_me, bad);
        g_failed = 1;
    }
}

static void bench(int t, size_t size) {
    /* Warm-up on every PE (collectives), timed on PE 0, which plans the row. */
    long n = 1;
    double per = 0;
    for (;;) {
        shmem_barrier_all();
        double t0 = now_seconds();
        for (long k = 0; k < n; k++) run_once(t, size, k);
        per = (now_seconds() - t0) / (double)n;
        if (g_me == 0) *g_plan = (per * (double)n >= 0.01 || n >= MAX_CALLS / 4) ? 1 : 0;
        shmem_barrier_all();
        long done = shmem_long_g(g_plan, 0);
        shmem_barrier_all();
        if (done) break;
        n *= 2;
    }
    if (g_me == 0) {
        double calls = TARGET_SECONDS * g_scale / (per > 1e-9 ? per : 1e-9);
        if (calls > MAX_CALLS * g_scale) calls = MAX_CALLS * g_scale;
        *g_plan = calls < 1 ? 1 : (long)calls;
    }
    shmem_barrier_all();
    const long calls = shmem_long_g(g_plan, 0);
    shmem_barrier_all();
    double t0 = now_seconds();
    for (long k = 0; k < calls; k++) run_once(t, size, k);
    const double us = (now_seconds() - t0) / (double)calls * 1e6;
    shmem_barrier_all();
    if (g_me == 0) {
        if (g_csv) printf("%s,%zu,%.4f,us\n", k_names[t], t == T_BARRIER ? (size_t)0 : size, us);
        else printf("%-9s %10zu %12.3f %10ld\n", k_names[t], t == T_BARRIER ? (size_t)0 : size, us, calls);
        fflush(stdout);
    }
    check(t, size, (unsigned)(t * 131 + size));
}

int main(int argc, char **argv) {
    size_t max_size = DEFAULT_MAX_SIZE;
    unsigned tests = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--csv") == 0) g_csv = 1;
        else if (strcmp(argv[i], "--iters-scale") == 0 && i + 1 < argc) g_scale = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc) max_size = (size_t)strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--test") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            int found = 0;
            for (int t = 0; t < T_COUNT; t++)
                if (strcmp(v, k_names[t]) == 0) tests |= 1u << t, found = 1;
            if (!found) {
                fprintf(stderr, "vkshmem-coll-perf: unknown test '%s' (barrier, bcast, reduce, fcollect, alltoall)\n", v);
                return 2;
            }
        } else {
            fprintf(stderr,
                    "Usage: oshrun -np N vkshmem-coll-perf [--csv] [--test T]... [--max-size BYTES] "
                    "[--iters-scale F]\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    if (!tests) tests = (1u << T_COUNT) - 1;
    if (max_size < MIN_SIZE || !(g_scale > 0)) {
        fprintf(stderr, "vkshmem-coll-perf: --max-size must be at least 8 and --iters-scale positive\n");
        return 2;
    }

    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof pSync[k] / sizeof(long); i++) pSync[k][i] = SHMEM_SYNC_VALUE;
        for (size_t i = 0; i < sizeof pSync_c[k] / sizeof(long); i++) pSync_c[k][i] = SHMEM_SYNC_VALUE;
    }
    shmem_init();
    g_me = shmem_my_pe();
    g_npes = shmem_n_pes();
    const size_t n = (size_t)g_npes;
    g_src = shmem_malloc(max_size * n);
    g_dst = shmem_malloc(max_size * n);
    size_t wrk = max_size / 8 / 2 + 1;
    if (wrk < SHMEM_REDUCE_MIN_WRKDATA_SIZE) wrk = SHMEM_REDUCE_MIN_WRKDATA_SIZE;
    g_wrk = shmem_malloc(wrk * sizeof(long));
    g_plan = shmem_malloc(sizeof(long));
    if (!g_src || !g_dst || !g_wrk || !g_plan) {
        if (g_me == 0) fprintf(stderr, "vkshmem-coll-perf: shmem_malloc failed (lower --max-size)\n");
        shmem_global_exit(2);
    }
    memset(g_src, 0, max_size * n);
    shmem_barrier_all();
    if (g_me == 0) {
        char name[SHMEM_MAX_NAME_LEN + 1] = "";
        shmem_info_get_name(name);
        if (g_csv) printf("test,size_bytes,value,unit\n");
        else printf("vkshmem-coll-perf: %s, %d PEs\n%-9s %10s %12s %10s\n", name, g_npes, "test", "bytes", "us/call",
                    "calls");
        fflush(stdout);
    }
    for (int t = 0; t < T_COUNT; t++) {
        if (!(tests & (1u << t))) continue;
        if (t == T_BARRIER) {
            bench(t, MIN_SIZE);
            continue;
        }
        for (size_t size = MIN_SIZE; size <= max_size; size *= 8) bench(t, size);
    }
    shmem_barrier_all();
    shmem_free(g_plan);
    shmem_free(g_wrk);
    shmem_free(g_dst);
    shmem_free(g_src);
    shmem_finalize();
    return g_failed ? 1 : 0;
}
