/* SPDX-License-Identifier: BSL-1.0 */
/*
 * vkshmem-perf — point-to-point and synchronization micro-benchmarks.
 *
 * Plain C11 written against the standard OpenSHMEM 1.4 API only, so the same
 * source builds with vkshmem's oshcc and with any other OpenSHMEM (for
 * example Open MPI's OSHMEM) for side-by-side runs (bench/compare.sh).
 *
 * Run it on 2 PEs for the point-to-point tests: PE 0 measures, PE 1 is the
 * target (other PEs, if any, only take part in barriers). On 1 PE, PE 0 targets
 * itself. The collective tests run over all PEs (bench/compare.sh --np 4).
 *
 *   put      latency of shmem_putmem + shmem_quiet, per iteration (us)
 *   get      latency of a blocking shmem_getmem (us)
 *   bw       bandwidth of WINDOW shmem_putmem calls then one shmem_quiet (MB/s,
 *            1 MB = 1e6 bytes); the same remote buffer is rewritten each time
 *   amo      latency of shmem_long_atomic_fetch_add (us)
 *   barrier  latency of shmem_barrier_all, all PEs looping (us); then of the
 *            deprecated active-set shmem_barrier(0, 0, npes, pSync) alternating
 *            two pSync arrays, and the first call of each of FIRST_CALLS fresh
 *            pSync arrays against one shmem_barrier_all (both after a
 *            shmem_barrier_all, so PEs arrive about together)
 *   bcast, reduce, fcollect, alltoall
 *            time per call of shmem_broadcast64 (from PE 0), shmem_long_sum_to_all,
 *            shmem_fcollect64 and shmem_alltoall64 over all PEs, SIZE bytes per PE
 *            (8 B .. 32 KiB, powers of 8), every PE looping, two pSync arrays in turn
 *            (the OpenSHMEM 1.4 active-set routines: every implementation has them)
 *
 * Two more, not in "all" (they answer other questions than the tables above and
 * would lengthen the default run); ask for them with --test:
 *
 *   overlap  how much of OVERLAP_OPS non-blocking transfers of OVERLAP_SIZE bytes
 *            (distinct slots on both sides) proceeds while PE 0 computes: PE 0
 *            posts them (shmem_getmem_nbi, then in a second row shmem_putmem_nbi),
 *            runs a busy loop on private data, then calls shmem_quiet. Measured
 *            apart: T, the transfers alone (post + quiet); C, the loop alone,
 *            calibrated beforehand so that C is about T; total, the two together.
 *            overlap = 1 - (total - max(C, T)) / min(C, T): 1 when the transfers
 *            progress entirely behind the loop, 0 when they wait for the quiet
 *            (nothing is clamped, noise can take it a little past either end).
 *            One repetition times T, C and total in turn, so that drift touches
 *            all three alike; the figures are medians over as many repetitions as
 *            fit TARGET_SECONDS (times scale; at least OVERLAP_MIN_REPS).
 *   nbirate  message rate of 8-byte shmem_putmem_nbi and shmem_getmem_nbi, one
 *            shmem_quiet per NBI_WINDOW operations (distinct 8-byte slots), and for
 *            reference of NBI_WINDOW blocking 8-byte shmem_getmem (Mops/s, and the
 *            mean time per operation in us), then get_nbi rate / blocking get rate,
 *            and of 8-byte shmem_long_atomic_add, NBI_WINDOW per shmem_quiet;
 *            where the library has put-with-signal (OpenSHMEM 1.5), also 8-byte
 *            shmem_putmem_signal_nbi (SHMEM_SIGNAL_ADD on one signal word) and
 *            shmem_uint64_atomic_fetch_add_nbi, NBI_WINDOW per shmem_quiet
 *   ctxrate  the same 8-byte shmem_ctx_putmem_nbi stream (one shmem_ctx_quiet per
 *            NBI_WINDOW) from 1 and then 2 threads of PE 0, each on a private
 *            context of its own (shmem_init_thread with SHMEM_THREAD_MULTIPLE):
 *            the Mops/s of all threads together, each thread running the same
 *            number of windows, and the ratio of 2 threads to 1. Contexts that
 *            complete independently let the threads' streams overlap.
 *
 * Each measurement warms up (doubling batches until 10 ms have passed), then
 * runs min(cap(size), TARGET_SECONDS / estimated time) iterations, where
 * cap(size) is 1e6 up to 4 KiB and 4 GiB / size above; --iters-scale
 * multiplies both the cap and the time target. Results are means over the
 * timed iterations (CLOCK_MONOTONIC; overlap's are medians, as above). Every
 * size is checked once for correctness after it is timed, with data no timed
 * run wrote where the test writes data; a wrong result makes the exit status 1.
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* sysconf(_SC_LEVEL3_CACHE_SIZE), a glibc extension */

#include <shmem.h>
#if defined(__has_include)
#if __has_include(<shmemx.h>)
#include <shmemx.h> /* only for the optional --device-heap */
#endif
#endif

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TEST_PUT 1u
#define TEST_GET 2u
#define TEST_BW 4u
#define TEST_AMO 8u
#define TEST_BARRIER 16u
#define TEST_BCAST 32u
#define TEST_REDUCE 64u
#define TEST_FCOLLECT 128u
#define TEST_ALLTOALL 256u
#define TEST_COLL (TEST_BCAST | TEST_REDUCE | TEST_FCOLLECT | TEST_ALLTOALL)
#define TEST_ALL (TEST_PUT | TEST_GET | TEST_BW | TEST_AMO | TEST_BARRIER | TEST_COLL)
/* Not in TEST_ALL: these two run only when --test names them. */
#define TEST_OVERLAP 512u
#define TEST_NBIRATE 1024u
#define TEST_CTXRATE 2048u
#define CTX_THREADS 2        /* ctxrate: the most threads */

#define MIN_SIZE ((size_t)8)
#define DEFAULT_MAX_SIZE ((size_t)4 << 20)
#define WINDOW 64            /* puts per shmem_quiet in the bandwidth test */
#define TARGET_SECONDS 0.2   /* time budget of one measurement (times scale) */
#define WARMUP_SECONDS 0.01
#define SMALL_CAP 1000000.0  /* iterations for sizes up to 4 KiB */
#define BYTES_CAP 4294967296.0
#define COLL_MAX_SIZE ((size_t)32 << 10) /* largest per-PE size of the collective tests */
#define OVERLAP_OPS 16       /* non-blocking transfers per overlap measurement */
#define OVERLAP_SIZE ((size_t)64 << 10) /* bytes of each */
#define OVERLAP_MIN_REPS 11  /* medians of fewer would follow single outliers */
#define OVERLAP_MAX_REPS 100000.0
#define COMPUTE_STEPS 64     /* xorshift steps in one unit of the overlap test's compute loop */
#define CALIBRATE_SECONDS 0.001
#define NBI_WINDOW 64        /* nbi operations per shmem_quiet in the rate test */

struct options {
    unsigned tests;
    double scale;
    size_t max_size;
    int csv;
};

/* State shared by the kernels (a kernel runs `n` iterations). */
static char *g_src;          /* put source: private memory of PE 0 */
static char *g_dst;          /* put destination (remote, symmetric) */
static char *g_gdst;         /* get destination: private memory of PE 0 */
static char *g_gsrc;         /* get source (remote, symmetric), filled once by its owner */
static long *g_counter;      /* fetch-add target (remote) */
static long *g_plan;         /* collective iteration count, written by PE 0 */
static uint64_t *g_csrc, *g_cdst; /* collective source and destination (symmetric, host heap) */
static long *g_cwrk;         /* reduction work array (symmetric) */
static unsigned g_coll;      /* the collective test running (TEST_BCAST ...) */
static int g_npes;
#define PSYNC_LONGS 256      /* at least every SHMEM_*_SYNC_SIZE of the implementations we know */
static long g_psync[2][PSYNC_LONGS];
#define FIRST_CALLS 32
static long g_psync_fresh[FIRST_CALLS][PSYNC_LONGS]; /* each used by one timed first call */
static size_t g_size;
static int g_target;
static long g_amo_calls;     /* fetch-adds issued so far (PE 0) */
static long g_amo_last;      /* value the last fetch-add returned */
static int g_failed;
static int g_me;
static const struct options *g_opt;
static char *g_ovl_remote;   /* overlap: OVERLAP_OPS slots on the target (symmetric) */
static char *g_ovl_local;    /* overlap: the same on PE 0 (private): get destination, put source */
static int g_ovl_put;        /* overlap row: shmem_putmem_nbi (1) or shmem_getmem_nbi (0) */
static long g_ovl_units;     /* compute units that take about as long as the transfers */
static volatile uint64_t g_sink; /* keeps the compute loop's result, so the loop stays */
enum rate_op { RATE_PUT_NBI, RATE_GET_NBI, RATE_GET, RATE_ADD, RATE_PUT_SIGNAL_NBI, RATE_FADD_NBI };
static enum rate_op g_rate_op;
static uint64_t *g_rate_remote;            /* nbirate: NBI_WINDOW words on the target (symmetric), then a signal */
static uint64_t g_rate_local[NBI_WINDOW];  /* nbirate: PE 0's source or destination */

typedef void (*kernel_fn)(long n);

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- Kernels ----------------------------------------------------------------- */

static void kernel_put(long n)
{
    for (long i = 0; i < n; i++) {
        shmem_putmem(g_dst, g_src, g_size, g_target);
        shmem_quiet();
    }
}

static void kernel_get(long n)
{
    for (long i = 0; i < n; i++)
        shmem_getmem(g_gdst, g_gsrc, g_size, g_target);
}

static void kernel_bw(long n)
{
    for (long i = 0; i < n; i++) {
        for (int w = 0; w < WINDOW; w++)
            shmem_putmem(g_dst, g_src, g_size, g_target);
        shmem_quiet();
    }
}

static void kernel_amo(long n)
{
    long last = g_amo_last;
    for (long i = 0; i < n; i++)
        last = shmem_long_atomic_fetch_add(g_counter, 1, g_target);
    g_amo_last = last;
    g_amo_calls += n;
}

static void kernel_barrier(long n)
{
    for (long i = 0; i < n; i++)
        shmem_barrier_all();
}

static void kernel_barrier_set(long n)
{
    for (long i = 0; i < n; i++)
        shmem_barrier(0, 0, g_npes, g_psync[i & 1]);
}

/* Posts the overlap test's OVERLAP_OPS transfers, one slot each. */
static void overlap_post(void)
{
    for (int s = 0; s < OVERLAP_OPS; s++) {
        const size_t off = (size_t)s * OVERLAP_SIZE;
        if (g_ovl_put)
            shmem_putmem_nbi(g_ovl_remote + off, g_ovl_local + off, OVERLAP_SIZE, g_target);
        else
            shmem_getmem_nbi(g_ovl_local + off, g_ovl_remote + off, OVERLAP_SIZE, g_target);
    }
}

static void kernel_overlap_transfer(long n)
{
    for (long i = 0; i < n; i++) {
        overlap_post();
        shmem_quiet();
    }
}

/* The overlap test's computation: a xorshift chain, which the compiler can neither vectorize
 * nor fold and which touches no memory, so it does not compete with the transfers for memory
 * bandwidth (what is measured is whether the transfers progress, not how two copies share a bus). */
static void compute(long units)
{
    uint64_t x = g_sink | 1u;
    for (long i = 0; i < units * COMPUTE_STEPS; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    g_sink = x;
}

static void kernel_rate(long n)
{
    const size_t w8 = sizeof(uint64_t);
    for (long i = 0; i < n; i++) {
        switch (g_rate_op) {
        case RATE_PUT_NBI:
            for (int w = 0; w < NBI_WINDOW; w++)
                shmem_putmem_nbi(&g_rate_remote[w], &g_rate_local[w], w8, g_target);
            shmem_quiet();
            break;
        case RATE_GET_NBI:
            for (int w = 0; w < NBI_WINDOW; w++)
                shmem_getmem_nbi(&g_rate_local[w], &g_rate_remote[w], w8, g_target);
            shmem_quiet();
            break;
        case RATE_ADD: /* non-fetching: complete at the quiet, like a put */
            for (int w = 0; w < NBI_WINDOW; w++)
                shmem_long_atomic_add((long *)&g_rate_remote[w], 1, g_target);
            shmem_quiet();
            break;
#ifdef SHMEM_SIGNAL_SET
        case RATE_PUT_SIGNAL_NBI:
            for (int w = 0; w < NBI_WINDOW; w++)
                shmem_putmem_signal_nbi(&g_rate_remote[w], &g_rate_local[w], w8, &g_rate_remote[NBI_WINDOW], 1,
                                        SHMEM_SIGNAL_ADD, g_target);
            shmem_quiet();
            break;
        case RATE_FADD_NBI:
            for (int w = 0; w < NBI_WINDOW; w++)
                shmem_uint64_atomic_fetch_add_nbi(&g_rate_local[w], &g_rate_remote[w], 1, g_target);
            shmem_quiet();
            break;
#endif
        default:
            for (int w = 0; w < NBI_WINDOW; w++)
                shmem_getmem(&g_rate_local[w], &g_rate_remote[w], w8, g_target);
            break;
        }
    }
}

/* One collective call (g_coll, g_size bytes per PE); k picks the pSync array. */
static void coll_once(long k)
{
    const size_t words = g_size / 8;
    long *ps = g_psync[k & 1];
    switch (g_coll) {
    case TEST_BCAST: shmem_broadcast64(g_cdst, g_csrc, words, 0, 0, 0, g_npes, ps); break;
    case TEST_REDUCE:
        shmem_long_sum_to_all((long *)g_cdst, (const long *)g_csrc, (int)words, 0, 0, g_npes, g_cwrk, ps);
        break;
    case TEST_FCOLLECT: shmem_fcollect64(g_cdst, g_csrc, words, 0, 0, g_npes, ps); break;
    default: shmem_alltoall64(g_cdst, g_csrc, words, 0, 0, g_npes, ps); break;
    }
}

static void kernel_coll(long n)
{
    for (long i = 0; i < n; i++)
        coll_once(i);
}

/* ---- Timing ------------------------------------------------------------------- */

/* Most iterations one measurement of `size` bytes may run (before scaling). */
static double iteration_cap(size_t size)
{
    double cap = BYTES_CAP / (double)size;
    return cap > SMALL_CAP ? SMALL_CAP : cap;
}

/* Warms up with doubling batches; returns the estimated seconds per iteration. */
static double warm_up(kernel_fn k, long cap)
{
    long n = 1;
    for (;;) {
        double t0 = now_seconds();
        k(n);
        double el = now_seconds() - t0;
        if (el >= WARMUP_SECONDS || n >= cap)
            return el / (double)n;
        n = n * 2 > cap ? cap : n * 2;
    }
}

static long plan_iterations(double per_iter, double cap)
{
    double n = cap * g_opt->scale;
    double by_time = TARGET_SECONDS * g_opt->scale / (per_iter > 1e-9 ? per_iter : 1e-9);
    if (by_time < n)
        n = by_time;
    if (n < 1.0)
        n = 1.0;
    return (long)n;
}

/* Runs kernel k (warm-up, then timed); returns seconds per iteration. */
static double measure(kernel_fn k, double cap, long *iters)
{
    long warm_cap = (long)(cap * g_opt->scale / 4.0);
    if (warm_cap < 1)
        warm_cap = 1;
    double est = warm_up(k, warm_cap);
    long n = plan_iterations(est, cap);
    double t0 = now_seconds();
    k(n);
    double el = now_seconds() - t0;
    *iters = n;
    return el / (double)n;
}

/* ---- Output -------------------------------------------------------------------- */

static void format_size(size_t size, char *buf, size_t len)
{
    if (size >= ((size_t)1 << 20) && size % ((size_t)1 << 20) == 0)
        snprintf(buf, len, "%zu MiB", size >> 20);
    else if (size >= 1024 && size % 1024 == 0)
        snprintf(buf, len, "%zu KiB", size >> 10);
    else
        snprintf(buf, len, "%zu B", size);
}

static void section(const char *title, const char *unit, const char *iters_label)
{
    if (g_opt->csv || g_me != 0)
        return;
    printf("\n%s\n%10s %14s %12s\n", title, "size", unit, iters_label);
    fflush(stdout);
}

static void csv_row(const char *test, size_t size, double value, const char *unit)
{
    printf("%s,%zu,%.4f,%s\n", test, size, value, unit);
}

static void report(const char *test, size_t size, double value, const char *unit, long iters)
{
    if (g_opt->csv) {
        csv_row(test, size, value, unit);
    } else {
        char sz[32];
        if (size == 0)
            snprintf(sz, sizeof sz, "-");
        else
            format_size(size, sz, sizeof sz);
        printf("%10s %14.3f %12ld\n", sz, value, iters);
    }
    fflush(stdout);
}

static void fail(const char *what, size_t size, const char *detail)
{
    fprintf(stderr, "vkshmem-perf: FAILED: %s, %zu bytes: %s\n", what, size, detail);
    g_failed = 1;
}

/* ---- Data patterns ---------------------------------------------------------------- */

static unsigned char pattern_byte(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + seed * 7u + 1u) & 0xffu);
}

static void fill(char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)pattern_byte(i, seed);
}

static int matches(const char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] != pattern_byte(i, seed))
            return 0;
    return 1;
}

#define GET_SEED(pe) (100003u + (unsigned)(pe))

/* ---- Tests (run on PE 0) ------------------------------------------------------------ */

static void test_put(char *check)
{
    section("put latency (shmem_putmem + shmem_quiet)", "us/op", "iters");
    for (size_t size = MIN_SIZE; size <= g_opt->max_size; size *= 2) {
        g_size = size;
        fill(g_src, size, (unsigned)size);
        long iters;
        double t = measure(kernel_put, iteration_cap(size), &iters);
        report("put_lat", size, t * 1e6, "us", iters);
        shmem_getmem(check, g_dst, size, g_target);
        if (!matches(check, size, (unsigned)size))
            fail("put", size, "the target buffer does not hold the data put");
    }
}

static void test_get(void)
{
    section("get latency (shmem_getmem)", "us/op", "iters");
    for (size_t size = MIN_SIZE; size <= g_opt->max_size; size *= 2) {
        g_size = size;
        memset(g_gdst, 0, size);
        long iters;
        double t = measure(kernel_get, iteration_cap(size), &iters);
        report("get_lat", size, t * 1e6, "us", iters);
        if (!matches(g_gdst, size, GET_SEED(g_target)))
            fail("get", size, "the data read differs from the target's buffer");
    }
}

static void test_bw(char *check)
{
    char title[96];
    snprintf(title, sizeof title, "put bandwidth (%d x shmem_putmem, then shmem_quiet)", WINDOW);
    if (!g_opt->csv && g_me == 0) {
        /* Every put copies the same source to the same target: up to the size of the caches it is a
         * cache-to-cache copy, far above what memory sustains. Say so rather than let it pass for
         * a memory bandwidth. */
        long llc = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
        llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        if (llc <= 0)
            llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
        if (llc > 0)
            printf("\n(the same buffers every time: sizes up to the last-level cache this CPU reports, %ld KiB, stay\n"
                   " cache-resident, so those rows measure cache-to-cache copies, not memory bandwidth)", llc / 1024);
        else
            printf("\n(the same buffers every time: sizes that fit the CPU caches stay cache-resident, so those\n"
                   " rows measure cache-to-cache copies, not memory bandwidth)");
    }
    section(title, "MB/s", "puts");
    for (size_t size = MIN_SIZE; size <= g_opt->max_size; size *= 2) {
        g_size = size;
        fill(g_src, size, (unsigned)size ^ 0x5a5au);
        double cap = iteration_cap(size) / WINDOW;
        if (cap < 1.0)
            cap = 1.0;
        long iters;
        double t = measure(kernel_bw, cap, &iters);
        double mbps = (double)size * WINDOW / t / 1e6;
        report("put_bw", size, mbps, "MB/s", iters * WINDOW);
        shmem_getmem(check, g_dst, size, g_target);
        if (!matches(check, size, (unsigned)size ^ 0x5a5au))
            fail("bw", size, "the target buffer does not hold the data put");
    }
}

static void test_amo(void)
{
    section("atomic fetch-add latency (shmem_long_atomic_fetch_add)", "us/op", "iters");
    long iters;
    double t = measure(kernel_amo, SMALL_CAP, &iters);
    report("amo_fadd_lat", sizeof(long), t * 1e6, "us", iters);
    if (g_amo_last != g_amo_calls - 1) {
        char msg[128];
        snprintf(msg, sizeof msg, "the last fetch-add returned %ld, expected %ld",
                 g_amo_last, g_amo_calls - 1);
        fail("amo", sizeof(long), msg);
    }
    long final = 0;
    shmem_getmem(&final, g_counter, sizeof final, g_target);
    if (final != g_amo_calls) {
        char msg[128];
        snprintf(msg, sizeof msg, "the counter holds %ld, expected %ld", final, g_amo_calls);
        fail("amo", sizeof(long), msg);
    }
}

/* Collective: every PE runs kernel k the same number of times (PE 0 plans it
 * from a warm-up); PE 0 reports the time per call. */
static void all_pes_row(kernel_fn k, const char *test, size_t size)
{
    const long warm = 100;
    shmem_barrier_all();
    double t0 = now_seconds();
    k(warm);
    double est = (now_seconds() - t0) / (double)warm;
    shmem_barrier_all();
    if (g_me == 0) {
        long n = plan_iterations(est, SMALL_CAP / 10.0);
        for (int pe = 0; pe < g_npes; pe++)
            shmem_long_p(g_plan, n, pe);
        shmem_quiet();
    }
    shmem_barrier_all();
    long n = *(volatile long *)g_plan;
    t0 = now_seconds();
    k(n);
    double t = (now_seconds() - t0) / (double)n;
    shmem_barrier_all();
    if (g_me == 0)
        report(test, size, t * 1e6, "us", n);
}

static void test_barrier(void)
{
    section("barrier_all latency (all PEs)", "us/op", "iters");
    all_pes_row(kernel_barrier, "barrier_lat", 0);
    section("shmem_barrier(0, 0, npes, pSync) latency, two pSync arrays in turn (all PEs)", "us/op", "iters");
    all_pes_row(kernel_barrier_set, "barrier_set_lat", 0);
    /* First calls: what a program pays that uses a pSync array once (or for the first time). */
    double first = 0.0, single = 0.0;
    for (int k = 0; k < FIRST_CALLS; k++) {
        shmem_barrier_all();
        double t0 = now_seconds();
        shmem_barrier(0, 0, g_npes, g_psync_fresh[k]);
        first += now_seconds() - t0;
        shmem_barrier_all();
        t0 = now_seconds();
        shmem_barrier_all();
        single += now_seconds() - t0;
    }
    section("first shmem_barrier on a fresh pSync, and one shmem_barrier_all, after a barrier_all", "us/op",
            "calls");
    if (g_me == 0) {
        report("barrier_set_first", 0, first / FIRST_CALLS * 1e6, "us", FIRST_CALLS);
        report("barrier_all_once", 0, single / FIRST_CALLS * 1e6, "us", FIRST_CALLS);
    }
}

static uint64_t coll_word(int pe, size_t i, unsigned salt)
{
    uint64_t x = ((uint64_t)pe << 40) ^ ((uint64_t)salt << 20) ^ (uint64_t)i;
    x *= 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 31);
}

/* One call with fresh data, checked on every PE. */
static void coll_check(const char *what, unsigned salt)
{
    const size_t words = g_size / 8, n = (size_t)g_npes;
    const size_t src_words = g_coll == TEST_ALLTOALL ? words * n : words;
    for (size_t i = 0; i < src_words; i++)
        g_csrc[i] = coll_word(g_me, i, salt);
    for (size_t i = 0; i < words * n; i++)
        g_cdst[i] = 0;
    shmem_barrier_all();
    coll_once(0);
    shmem_barrier_all();
    for (size_t i = 0; i < words * n; i++) {
        const size_t pe = i / words, j = i % words;
        uint64_t want;
        if (g_coll == TEST_BCAST) { /* the 1.4 broadcast leaves the root's dest alone */
            if (i >= words || g_me == 0)
                continue;
            want = coll_word(0, i, salt);
        } else if (g_coll == TEST_REDUCE) {
            if (i >= words)
                continue;
            want = 0;
            for (int p = 0; p < g_npes; p++)
                want += coll_word(p, i, salt);
        } else if (g_coll == TEST_FCOLLECT) {
            want = coll_word((int)pe, j, salt);
        } else {
            want = coll_word((int)pe, (size_t)g_me * words + j, salt);
        }
        if (g_cdst[i] != want) {
            char msg[96];
            snprintf(msg, sizeof msg, "PE %d: word %zu of the result is wrong", g_me, i);
            fail(what, g_size, msg);
            return;
        }
    }
}

static void test_coll(unsigned test, const char *name, const char *title)
{
    char csv[32];
    snprintf(csv, sizeof csv, "%s_lat", name);
    section(title, "us/op", "iters");
    for (size_t size = MIN_SIZE; size <= COLL_MAX_SIZE && size <= g_opt->max_size; size *= 8) {
        g_coll = test;
        g_size = size;
        all_pes_row(kernel_coll, csv, size);
        coll_check(name, (unsigned)(test * 131u + size));
    }
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v. */
static double median(double *v, long n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return (n % 2) ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Seconds one compute unit takes: the best of three runs of at least CALIBRATE_SECONDS, so that a
 * run the scheduler interrupted does not shorten the loop. */
static double compute_seconds_per_unit(void)
{
    double best = 0.0;
    for (int k = 0; k < 3; k++) {
        long units = 1;
        double el;
        for (;;) {
            double t0 = now_seconds();
            compute(units);
            el = now_seconds() - t0;
            if (el >= CALIBRATE_SECONDS)
                break;
            units *= 2;
        }
        if (k == 0 || el / (double)units < best)
            best = el / (double)units;
    }
    return best;
}

/* Transfers, computation and both together, then one checked run with fresh data. */
static void overlap_row(int put)
{
    const char *name = put ? "put_nbi" : "get_nbi";
    g_ovl_put = put;
    long warm_cap = (long)(OVERLAP_MAX_REPS * g_opt->scale / 4.0);
    const double t_mean = warm_up(kernel_overlap_transfer, warm_cap < 1 ? 1 : warm_cap);
    /* A repetition takes T + C + total, about 4 T (total lies between T and 2 T when C = T). */
    long reps = plan_iterations(4.0 * t_mean, OVERLAP_MAX_REPS);
    if (reps < OVERLAP_MIN_REPS)
        reps = OVERLAP_MIN_REPS;
    double *xfer = malloc(3 * (size_t)reps * sizeof *xfer);
    if (xfer == NULL) {
        fail("overlap", OVERLAP_SIZE, "out of memory for the samples");
        return;
    }
    double *comp = xfer + reps, *both = comp + reps;
    /* The loop is sized on a median of T, not on the warm-up's mean, which one slow transfer
     * (a TCP retransmission, a preempted PE) can stretch well past the typical one. */
    for (long r = 0; r < OVERLAP_MIN_REPS; r++) {
        double t0 = now_seconds();
        kernel_overlap_transfer(1);
        xfer[r] = now_seconds() - t0;
    }
    g_ovl_units = (long)(median(xfer, OVERLAP_MIN_REPS) / compute_seconds_per_unit() + 0.5);
    if (g_ovl_units < 1)
        g_ovl_units = 1;
    for (long r = 0; r < reps; r++) {
        double t0 = now_seconds();
        overlap_post();
        shmem_quiet();
        double t1 = now_seconds();
        compute(g_ovl_units);
        double t2 = now_seconds();
        overlap_post();
        compute(g_ovl_units);
        shmem_quiet();
        double t3 = now_seconds();
        xfer[r] = t1 - t0;
        comp[r] = t2 - t1;
        both[r] = t3 - t2;
    }
    const double t = median(xfer, reps), c = median(comp, reps), total = median(both, reps);
    free(xfer);
    const double hi = t > c ? t : c, lo = t > c ? c : t;
    const double overlap = 1.0 - (total - hi) / lo;
    if (g_opt->csv) {
        char test[48];
        snprintf(test, sizeof test, "overlap_%s", name);
        csv_row(test, OVERLAP_SIZE, overlap, "ratio");
        snprintf(test, sizeof test, "overlap_%s_transfer", name);
        csv_row(test, OVERLAP_SIZE, t * 1e6, "us");
        snprintf(test, sizeof test, "overlap_%s_compute", name);
        csv_row(test, OVERLAP_SIZE, c * 1e6, "us");
        snprintf(test, sizeof test, "overlap_%s_total", name);
        csv_row(test, OVERLAP_SIZE, total * 1e6, "us");
    } else {
        printf("%12s %10.2f %14.3f %14.3f %14.3f %10ld\n", name, overlap, t * 1e6, c * 1e6, total * 1e6, reps);
    }
    fflush(stdout);

    /* The check: a pattern no timed run wrote, through the same post, compute, quiet. */
    const size_t bytes = (size_t)OVERLAP_OPS * OVERLAP_SIZE;
    const unsigned seed = put ? 0x3e1au : 0x3e2bu;
    for (int s = 0; s < OVERLAP_OPS; s++)
        fill(g_ovl_local + (size_t)s * OVERLAP_SIZE, OVERLAP_SIZE, seed + (unsigned)s);
    if (!put) {
        shmem_putmem(g_ovl_remote, g_ovl_local, bytes, g_target);
        shmem_quiet();
        memset(g_ovl_local, 0, bytes);
    }
    overlap_post();
    compute(g_ovl_units);
    shmem_quiet();
    if (put) {
        memset(g_ovl_local, 0, bytes);
        shmem_getmem(g_ovl_local, g_ovl_remote, bytes, g_target);
    }
    for (int s = 0; s < OVERLAP_OPS; s++)
        if (!matches(g_ovl_local + (size_t)s * OVERLAP_SIZE, OVERLAP_SIZE, seed + (unsigned)s)) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s: slot %d does not hold the data transferred", name, s);
            fail("overlap", OVERLAP_SIZE, msg);
            break;
        }
}

static void test_overlap(void)
{
    if (!g_opt->csv) {
        char size[32];
        format_size(OVERLAP_SIZE, size, sizeof size);
        printf("\noverlap of %d x %s nbi transfers (then shmem_quiet) with a compute loop as long (medians)\n"
               "%12s %10s %14s %14s %14s %10s\n",
               OVERLAP_OPS, size, "op", "overlap", "transfer us", "compute us", "total us", "reps");
        fflush(stdout);
    }
    overlap_row(0);
    overlap_row(1);
}

/* One window of g_rate_op with fresh values, checked. */
static void rate_check(const char *name, unsigned salt)
{
    uint64_t want[NBI_WINDOW];
    for (int w = 0; w < NBI_WINDOW; w++)
        want[w] = coll_word(g_target, (size_t)w, salt);
    if (g_rate_op == RATE_PUT_NBI || g_rate_op == RATE_PUT_SIGNAL_NBI) {
        memcpy(g_rate_local, want, sizeof want);
        kernel_rate(1);
        memset(g_rate_local, 0, sizeof g_rate_local);
        shmem_getmem(g_rate_local, g_rate_remote, sizeof g_rate_local, g_target);
    } else if (g_rate_op == RATE_ADD) { /* each word one more */
        shmem_putmem(g_rate_remote, want, sizeof want, g_target);
        shmem_quiet();
        kernel_rate(1);
        shmem_getmem(g_rate_local, g_rate_remote, sizeof g_rate_local, g_target);
        for (int w = 0; w < NBI_WINDOW; w++)
            g_rate_local[w] -= 1;
    } else { /* gets, and fetch_add_nbi: the old values */
        shmem_putmem(g_rate_remote, want, sizeof want, g_target);
        shmem_quiet();
        memset(g_rate_local, 0, sizeof g_rate_local);
        kernel_rate(1);
    }
    for (int w = 0; w < NBI_WINDOW; w++)
        if (g_rate_local[w] != want[w]) {
            char msg[96];
            snprintf(msg, sizeof msg, "%s: word %d holds the wrong value", name, w);
            fail("nbirate", sizeof(uint64_t), msg);
            return;
        }
}

/* Returns the operations per second of g_rate_op. */
static double rate_row(enum rate_op op, const char *name)
{
    g_rate_op = op;
    long iters;
    const double t = measure(kernel_rate, SMALL_CAP / NBI_WINDOW, &iters); /* seconds per window */
    const double mops = NBI_WINDOW / t / 1e6, us = t / NBI_WINDOW * 1e6;
    if (g_opt->csv) {
        char test[48];
        snprintf(test, sizeof test, "nbirate_%s", name);
        csv_row(test, sizeof(uint64_t), mops, "Mops/s");
        snprintf(test, sizeof test, "nbirate_%s_time", name);
        csv_row(test, sizeof(uint64_t), us, "us");
    } else {
        printf("%12s %14.3f %14.3f %12ld\n", name, mops, us, iters * NBI_WINDOW);
    }
    fflush(stdout);
    rate_check(name, 0x6a7eu + (unsigned)op);
    return mops * 1e6;
}

static void test_nbirate(void)
{
    if (!g_opt->csv) {
        printf("\n8-byte message rate (%d operations, then shmem_quiet; get: %d blocking shmem_getmem)\n"
               "%12s %14s %14s %12s\n",
               NBI_WINDOW, NBI_WINDOW, "op", "Mops/s", "us/op", "ops");
        fflush(stdout);
    }
    rate_row(RATE_PUT_NBI, "put_nbi");
    const double nbi = rate_row(RATE_GET_NBI, "get_nbi");
    const double blocking = rate_row(RATE_GET, "get");
    if (g_opt->csv)
        csv_row("nbirate_get_nbi_over_get", sizeof(uint64_t), nbi / blocking, "ratio");
    else
        printf("%12s %14.3f %14s %12s\n", "get_nbi/get", nbi / blocking, "(ratio)", "-");
    fflush(stdout);
    rate_row(RATE_ADD, "add");
#ifdef SHMEM_SIGNAL_SET
    rate_row(RATE_PUT_SIGNAL_NBI, "put_signal_nbi");
    rate_row(RATE_FADD_NBI, "fadd_nbi");
#endif
}

/* ---- ctxrate: threads on private contexts ------------------------------------------ */

static uint64_t *g_ctx_remote; /* ctxrate: CTX_THREADS x NBI_WINDOW words on the target (symmetric) */

struct ctx_stream {
    int index;                 /* the thread's rank: its words of g_ctx_remote */
    long windows;              /* NBI_WINDOW puts and a quiet each */
    unsigned salt;
    pthread_barrier_t *start;
    double seconds;
    int failed;
};

/* The word thread `index` leaves in slot i after window w. */
static uint64_t ctx_word(int index, long w, int i, unsigned salt)
{
    return ((uint64_t)(index + 1) << 56) ^ ((uint64_t)w << 16) ^ ((uint64_t)salt << 8) ^ (uint64_t)i;
}

static void *ctx_stream_run(void *arg)
{
    struct ctx_stream *t = arg;
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT; /* (SHMEM_CTX_INVALID is 1.5: not every library has it) */
    uint64_t src[NBI_WINDOW]; /* unchanged from a put_nbi to its quiet */
    uint64_t *dst = g_ctx_remote + (size_t)t->index * NBI_WINDOW;
    t->failed = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0;
    pthread_barrier_wait(t->start);
    if (t->failed)
        return NULL;
    const double t0 = now_seconds();
    for (long w = 0; w < t->windows; w++) {
        for (int i = 0; i < NBI_WINDOW; i++) {
            src[i] = ctx_word(t->index, w, i, t->salt);
            shmem_ctx_putmem_nbi(ctx, &dst[i], &src[i], sizeof src[i], g_target);
        }
        shmem_ctx_quiet(ctx);
    }
    t->seconds = now_seconds() - t0;
    shmem_ctx_destroy(ctx);
    return NULL;
}

/* Runs `threads` streams of `windows` windows at once and checks what they left; returns the
 * seconds of the slowest (0 on failure). */
static double ctx_round(int threads, long windows, unsigned salt)
{
    pthread_t tid[CTX_THREADS];
    struct ctx_stream st[CTX_THREADS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    for (int k = 0; k < threads; k++) {
        st[k] = (struct ctx_stream){k, windows, salt, &start, 0.0, 0};
        if (pthread_create(&tid[k], NULL, ctx_stream_run, &st[k]) != 0) {
            fail("ctxrate", sizeof(uint64_t), "pthread_create failed");
            shmem_global_exit(2);
        }
    }
    double slowest = 0.0;
    int failed = 0;
    for (int k = 0; k < threads; k++) {
        pthread_join(tid[k], NULL);
        failed |= st[k].failed;
        if (st[k].seconds > slowest)
            slowest = st[k].seconds;
    }
    pthread_barrier_destroy(&start);
    if (failed) {
        fail("ctxrate", sizeof(uint64_t), "shmem_ctx_create(SHMEM_CTX_PRIVATE) failed");
        return 0.0;
    }
    uint64_t got[CTX_THREADS * NBI_WINDOW];
    shmem_getmem(got, g_ctx_remote, (size_t)threads * NBI_WINDOW * sizeof(uint64_t), g_target);
    for (int k = 0; k < threads; k++)
        for (int i = 0; i < NBI_WINDOW; i++)
            if (got[k * NBI_WINDOW + i] != ctx_word(k, windows - 1, i, salt)) {
                char msg[96];
                snprintf(msg, sizeof msg, "thread %d's word %d holds the wrong value", k, i);
                fail("ctxrate", sizeof(uint64_t), msg);
                return 0.0;
            }
    return slowest;
}

static void test_ctxrate(void)
{
    /* Windows per thread: as many as one thread runs in TARGET_SECONDS (times scale). */
    long windows = 16;
    double t = 0.0;
    while ((t = ctx_round(1, windows, 1u)) > 0.0 && t < WARMUP_SECONDS * 4 && windows < (1L << 24))
        windows *= 2;
    if (t <= 0.0)
        return;
    windows = (long)((double)windows * TARGET_SECONDS * g_opt->scale / t);
    if (windows < 16)
        windows = 16;
    if (!g_opt->csv) {
        printf("\n8-byte put_nbi from threads on private contexts (%d per shmem_ctx_quiet, %ld windows per thread)\n"
               "%12s %14s\n",
               NBI_WINDOW, windows, "threads", "Mops/s");
        fflush(stdout);
    }
    double rate[CTX_THREADS + 1] = {0.0};
    for (int threads = 1; threads <= CTX_THREADS; threads++) {
        t = ctx_round(threads, windows, 2u + (unsigned)threads);
        if (t <= 0.0)
            return;
        rate[threads] = (double)threads * (double)windows * NBI_WINDOW / t / 1e6;
        if (g_opt->csv) {
            char test[48];
            snprintf(test, sizeof test, "ctxrate_%d_thread%s", threads, threads > 1 ? "s" : "");
            csv_row(test, sizeof(uint64_t), rate[threads], "Mops/s");
        } else {
            printf("%12d %14.3f\n", threads, rate[threads]);
        }
        fflush(stdout);
    }
    if (g_opt->csv)
        csv_row("ctxrate_2_over_1", sizeof(uint64_t), rate[2] / rate[1], "ratio");
    else
        printf("%12s %14.3f (ratio)\n", "2 / 1", rate[2] / rate[1]);
    fflush(stdout);
}

static int g_device_heap; /* --device-heap */

/* ---- Options ----------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: oshrun -np 2 vkshmem-perf [options]\n"
            "\n"
            "PE 0 measures, PE 1 is the target (on 1 PE, PE 0 targets itself).\n"
            "\n"
            "Options:\n"
            "  --test T          put | get | bw | amo | barrier | bcast | reduce | fcollect |\n"
            "                    alltoall | all | overlap | nbirate | ctxrate; repeatable\n"
            "                    (default: all, which is every test but the last three)\n"
            "  --max-size BYTES  largest transfer, suffixes K, M, G (default 4M); sizes are\n"
            "                    the powers of 2 from 8 bytes\n"
            "  --iters-scale F   multiply iteration counts and time budgets by F (default 1)\n"
            "  --csv             print lines test,size_bytes,value,unit (with a header)\n"
            "  --device-heap     put the buffers in the device heap (vkshmem's\n"
            "                    SHMEMX_MALLOC_DEVICE; other libraries: an error)\n"
            "  --help            this message\n"
            "\n"
            "CSV tests: put_lat, get_lat (us per operation; put includes shmem_quiet),\n"
            "put_bw (MB/s, 1 MB = 1e6 bytes, %d puts per quiet), amo_fadd_lat (us),\n"
            "barrier_lat, barrier_set_lat, barrier_set_first, barrier_all_once (us, size 0), bcast_lat, reduce_lat, fcollect_lat, alltoall_lat\n"
            "(us per call over all PEs, size in bytes per PE);\n"
            "overlap_get_nbi, overlap_put_nbi (ratio, 1 = the transfers entirely behind the\n"
            "computation, size %zu: bytes per transfer, %d transfers) with _transfer, _compute,\n"
            "_total (us, medians); nbirate_put_nbi, nbirate_get_nbi (Mops/s, 8-byte operations,\n"
            "%d per quiet), nbirate_get (blocking), each with _time (us per operation), and\n"
            "nbirate_get_nbi_over_get (ratio), nbirate_add (long atomic_add, %d per quiet),\n"
            "nbirate_put_signal_nbi and nbirate_fadd_nbi\n"
            "(8-byte put with SHMEM_SIGNAL_ADD, uint64 fetch_add_nbi; OpenSHMEM 1.5 libraries);\n"
            "ctxrate_1_thread, ctxrate_2_threads (Mops/s\n"
            "of 8-byte put_nbi, each thread on a private context) and ctxrate_2_over_1 (ratio).\n",
            WINDOW, OVERLAP_SIZE, OVERLAP_OPS, NBI_WINDOW, NBI_WINDOW);
}

static int parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || s[0] == '-')
        return -1;
    unsigned long long mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = 1ull << 10; end++; break;
    case 'm': case 'M': mult = 1ull << 20; end++; break;
    case 'g': case 'G': mult = 1ull << 30; end++; break;
    default: break;
    }
    if (mult != 1 && (*end == 'i' || *end == 'I') && (end[1] == 'b' || end[1] == 'B'))
        end += 2;
    else if (mult != 1 && (*end == 'b' || *end == 'B'))
        end++;
    if (*end != '\0' || v > SIZE_MAX / mult)
        return -1;
    *out = (size_t)(v * mult);
    return 0;
}

/* Returns 0 on success, 1 for --help, -1 (with *err set) on a bad option. */
static int parse_options(int argc, char **argv, struct options *o, char *err, size_t errlen)
{
    o->tests = 0;
    o->scale = 1.0;
    o->max_size = DEFAULT_MAX_SIZE;
    o->csv = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        char name[32];
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq != NULL && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
            return 1;
        if (strcmp(name, "--csv") == 0) {
            o->csv = 1;
            continue;
        }
        if (strcmp(name, "--device-heap") == 0) {
#ifdef SHMEMX_MALLOC_DEVICE
            g_device_heap = 1;
            continue;
#else
            snprintf(err, errlen, "--device-heap needs an OpenSHMEM with SHMEMX_MALLOC_DEVICE (vkshmem)");
            return -1;
#endif
        }
        if (strcmp(name, "--test") != 0 && strcmp(name, "--max-size") != 0 &&
            strcmp(name, "--iters-scale") != 0) {
            snprintf(err, errlen, "unknown option '%s' (try --help)", a);
            return -1;
        }
        if (val == NULL) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "option %s needs a value", name);
                return -1;
            }
            val = argv[++i];
        }
        if (strcmp(name, "--test") == 0) {
            if (strcmp(val, "put") == 0) o->tests |= TEST_PUT;
            else if (strcmp(val, "get") == 0) o->tests |= TEST_GET;
            else if (strcmp(val, "bw") == 0) o->tests |= TEST_BW;
            else if (strcmp(val, "amo") == 0) o->tests |= TEST_AMO;
            else if (strcmp(val, "barrier") == 0) o->tests |= TEST_BARRIER;
            else if (strcmp(val, "bcast") == 0) o->tests |= TEST_BCAST;
            else if (strcmp(val, "reduce") == 0) o->tests |= TEST_REDUCE;
            else if (strcmp(val, "fcollect") == 0) o->tests |= TEST_FCOLLECT;
            else if (strcmp(val, "alltoall") == 0) o->tests |= TEST_ALLTOALL;
            else if (strcmp(val, "all") == 0) o->tests |= TEST_ALL;
            else if (strcmp(val, "overlap") == 0) o->tests |= TEST_OVERLAP;
            else if (strcmp(val, "nbirate") == 0) o->tests |= TEST_NBIRATE;
            else if (strcmp(val, "ctxrate") == 0) o->tests |= TEST_CTXRATE;
            else {
                snprintf(err, errlen, "unknown test '%s' (put, get, bw, amo, barrier, bcast, reduce, fcollect, alltoall, all, overlap, nbirate, ctxrate)", val);
                return -1;
            }
        } else if (strcmp(name, "--max-size") == 0) {
            if (parse_size(val, &o->max_size) != 0 || o->max_size < MIN_SIZE) {
                snprintf(err, errlen, "bad --max-size '%s' (bytes, at least %zu)", val, MIN_SIZE);
                return -1;
            }
        } else {
            char *end;
            errno = 0;
            o->scale = strtod(val, &end);
            if (errno != 0 || end == val || *end != '\0' || !(o->scale > 0.0) || o->scale > 1e6) {
                snprintf(err, errlen, "bad --iters-scale '%s' (a number > 0)", val);
                return -1;
            }
        }
    }
    if (o->tests == 0)
        o->tests = TEST_ALL;
    return 0;
}

/* ---- Main ------------------------------------------------------------------------------ */

static void *symmetric_alloc(size_t size, int me, const char *what)
{
    void *p = NULL;
#ifdef SHMEMX_MALLOC_DEVICE
    if (g_device_heap)
        p = shmem_malloc_with_hints(size, SHMEMX_MALLOC_DEVICE);
    else
#endif
        p = shmem_malloc(size);
    if (p == NULL) {
        if (me == 0)
            fprintf(stderr,
                    "vkshmem-perf: shmem_malloc(%zu) for the %s failed: the symmetric heap is "
                    "too small (raise SHMEM_SYMMETRIC_SIZE or lower --max-size)\n",
                    size, what);
        shmem_global_exit(2);
    }
    return p;
}

int main(int argc, char **argv)
{
    struct options opt;
    char err[256] = "";
    int parsed = parse_options(argc, argv, &opt, err, sizeof err);
    if (parsed == 1) {
        usage(stdout);
        return 0;
    }
    g_opt = &opt;

    /* Threads on contexts (ctxrate) need SHMEM_THREAD_MULTIPLE; every PE parses the same options. */
    int provided = SHMEM_THREAD_MULTIPLE;
    if (parsed >= 0 && (opt.tests & TEST_CTXRATE))
        shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    else
        shmem_init();
    int me = shmem_my_pe();
    int npes = shmem_n_pes();
    g_me = me;
    g_npes = npes;
    if (parsed < 0) {
        if (me == 0)
            fprintf(stderr, "vkshmem-perf: %s\n", err);
        shmem_finalize();
        return 2;
    }
    g_target = npes > 1 ? 1 : 0;

    /* Largest power of two <= max_size: the sizes measured. */
    size_t top = MIN_SIZE;
    while (top <= opt.max_size / 2)
        top *= 2;
    opt.max_size = top;

    g_dst = symmetric_alloc(top, me, "put destination");
    g_gsrc = symmetric_alloc(top, me, "get source");
    g_counter = symmetric_alloc(sizeof(long), me, "fetch-add counter");
    g_plan = shmem_malloc(sizeof(long)); /* control word: always the host heap */
    const size_t coll_bytes = COLL_MAX_SIZE * (size_t)npes;
    g_csrc = shmem_malloc(coll_bytes);
    g_cdst = shmem_malloc(coll_bytes);
    g_cwrk = shmem_malloc(COLL_MAX_SIZE / 2 + 64); /* nreduce / 2 + 1 longs and more */
    if (g_csrc == NULL || g_cdst == NULL || g_cwrk == NULL) {
        fprintf(stderr, "vkshmem-perf: shmem_malloc for the collective buffers failed\n");
        shmem_global_exit(2);
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < PSYNC_LONGS; i++)
            g_psync[k][i] = SHMEM_SYNC_VALUE;
    for (int k = 0; k < FIRST_CALLS; k++)
        for (int i = 0; i < PSYNC_LONGS; i++)
            g_psync_fresh[k][i] = SHMEM_SYNC_VALUE;
    g_src = malloc(top);
    g_gdst = malloc(top);
    if (g_plan == NULL || g_src == NULL || g_gdst == NULL) {
        fprintf(stderr, "vkshmem-perf: out of memory\n");
        shmem_global_exit(2);
    }
    /* Symmetric objects are initialized through the API: a device heap may
     * not be addressable by the CPU. */
    memset(g_src, 0, top);
    shmem_putmem(g_dst, g_src, top, me);
    fill(g_gdst, top, GET_SEED(me));
    shmem_putmem(g_gsrc, g_gdst, top, me);
    long zero = 0;
    shmem_putmem(g_counter, &zero, sizeof zero, me);
    *g_plan = 0;
    shmem_quiet();
    char *check = malloc(top);
    if (check == NULL) {
        fprintf(stderr, "vkshmem-perf: out of memory\n");
        shmem_global_exit(2);
    }
    /* The overlap and rate buffers only when those tests run (every PE parses the same options,
     * so the collective shmem_malloc calls match); zeroed through the API like the others. */
    const size_t ovl_bytes = (size_t)OVERLAP_OPS * OVERLAP_SIZE;
    if (opt.tests & TEST_OVERLAP) {
        g_ovl_remote = symmetric_alloc(ovl_bytes, me, "overlap slots");
        g_ovl_local = calloc(1, ovl_bytes);
        if (g_ovl_local == NULL) {
            fprintf(stderr, "vkshmem-perf: out of memory\n");
            shmem_global_exit(2);
        }
        shmem_putmem(g_ovl_remote, g_ovl_local, ovl_bytes, me);
    }
    if (opt.tests & TEST_CTXRATE) {
        g_ctx_remote = symmetric_alloc(CTX_THREADS * NBI_WINDOW * sizeof(uint64_t), me, "context-rate slots");
        if (provided < SHMEM_THREAD_MULTIPLE) {
            if (me == 0)
                fail("ctxrate", sizeof(uint64_t), "the library does not provide SHMEM_THREAD_MULTIPLE");
            opt.tests &= ~TEST_CTXRATE;
        }
    }
    if (opt.tests & TEST_NBIRATE) {
        g_rate_remote = symmetric_alloc(sizeof g_rate_local + sizeof(uint64_t), me, "message-rate slots");
        shmem_putmem(g_rate_remote, g_rate_local, sizeof g_rate_local, me);
    }
    shmem_quiet();
    shmem_barrier_all();

    if (me == 0) {
        char name[SHMEM_MAX_NAME_LEN + 1] = "";
        int major = 0, minor = 0;
        shmem_info_get_name(name);
        shmem_info_get_version(&major, &minor);
        if (opt.csv) {
            printf("test,size_bytes,value,unit\n");
        } else {
            char top_str[32];
            format_size(top, top_str, sizeof top_str);
            printf("vkshmem-perf: %s (OpenSHMEM %d.%d), %d PE%s, PE 0 -> PE %d, "
                   "sizes 8 B .. %s, iters scale %g\n",
                   name, major, minor, npes, npes == 1 ? "" : "s", g_target, top_str, opt.scale);
        }
        fflush(stdout);
    }

    /* PE 0 runs each point-to-point test while the others wait in a barrier. */
    if (opt.tests & TEST_PUT) {
        if (me == 0)
            test_put(check);
        shmem_barrier_all();
    }
    if (opt.tests & TEST_GET) {
        if (me == 0)
            test_get();
        shmem_barrier_all();
    }
    if (opt.tests & TEST_BW) {
        if (me == 0)
            test_bw(check);
        shmem_barrier_all();
    }
    if (opt.tests & TEST_AMO) {
        if (me == 0)
            test_amo();
        shmem_barrier_all();
    }
    if (opt.tests & (TEST_OVERLAP | TEST_NBIRATE | TEST_CTXRATE)) {
        if (me == 0 && (opt.tests & TEST_OVERLAP))
            test_overlap();
        if (me == 0 && (opt.tests & TEST_NBIRATE))
            test_nbirate();
        if (me == 0 && (opt.tests & TEST_CTXRATE))
            test_ctxrate();
        shmem_barrier_all();
    }
    if (opt.tests & TEST_BARRIER) {
        test_barrier();
        shmem_barrier_all();
    }

    if (opt.tests & TEST_BCAST)
        test_coll(TEST_BCAST, "bcast", "broadcast (shmem_broadcast64 from PE 0, all PEs), bytes per PE");
    if (opt.tests & TEST_REDUCE)
        test_coll(TEST_REDUCE, "reduce", "reduction (shmem_long_sum_to_all, all PEs), bytes per PE");
    if (opt.tests & TEST_FCOLLECT)
        test_coll(TEST_FCOLLECT, "fcollect", "fcollect (shmem_fcollect64, all PEs), bytes per PE");
    if (opt.tests & TEST_ALLTOALL)
        test_coll(TEST_ALLTOALL, "alltoall", "alltoall (shmem_alltoall64, all PEs), bytes per PE");
    shmem_barrier_all();

    free(check);
    if (g_rate_remote != NULL)
        shmem_free(g_rate_remote);
    if (g_ovl_remote != NULL)
        shmem_free(g_ovl_remote);
    free(g_ovl_local);
    shmem_free(g_cwrk);
    shmem_free(g_cdst);
    shmem_free(g_csrc);
    shmem_free(g_plan);
    shmem_free(g_counter);
    shmem_free(g_gsrc);
    shmem_free(g_dst);
    free(g_gdst);
    free(g_src);
    shmem_finalize();
    return (me == 0 && g_failed) ? 1 : 0;
}
