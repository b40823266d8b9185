/* SPDX-License-Identifier: BSL-1.0 */
/* The deprecated names that older programs still call, from C11 as they do: start_pes instead of
 * shmem_init, _my_pe/_num_pes, the pre-1.4 atomics shmem_TYPENAME_{fadd,finc,cswap,swap,add,inc,
 * fetch,set} over today's AMO type tables and their generic forms, shmem_TYPENAME_wait and
 * shmem_wait, and the cache routines (no-ops). Also the C11 generic macros of put with signal and
 * ibput/ibget, and shmalloc/shrealloc/shmemalign/shfree. Every result is checked; a failure ends the job with shmem_global_exit(1). Prints
 * "deprecated: N PEs OK" from PE 0. */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, npes, right, left;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "deprecated: PE %d: %s:%d: check failed: %s\n", me, __FILE__, __LINE__, #cond);   \
            shmem_global_exit(1);                                                                            \
        }                                                                                                    \
    } while (0)

/* The standard AMO names of 1.3 (int, long, long long) on the right neighbour's copy, then all PEs
 * adding to PE 0's at once. */
#define TEST_STANDARD(T, N)                                                                                  \
    static void test_standard_##N(void) {                                                                    \
        T *x = shmem_malloc(sizeof(T));                                                                      \
        CHECK(x != NULL);                                                                                    \
        *x = (T)(100 + me);                                                                                  \
        shmem_barrier_all();                                                                                 \
        const T r = (T)(100 + right);                                                                        \
        CHECK(shmem_##N##_fadd(x, (T)5, right) == r);                                                        \
        CHECK(shmem_##N##_finc(x, right) == r + 5);                                                          \
        shmem_##N##_add(x, (T)3, right);                                                                     \
        shmem_##N##_inc(x, right);                                                                           \
        CHECK(shmem_##N##_cswap(x, (T)999, (T)7, right) == r + 10); /* no match: unchanged */               \
        CHECK(shmem_##N##_cswap(x, r + 10, (T)7, right) == r + 10);                                          \
        CHECK(shmem_##N##_swap(x, (T)42, right) == (T)7);                                                    \
        shmem_##N##_set(x, (T)43, right);                                                                    \
        CHECK(shmem_##N##_fetch(x, right) == (T)43);                                                         \
        shmem_barrier_all();                                                                                 \
        CHECK(*x == (T)43);                                                                                  \
        *x = 0;                                                                                              \
        shmem_barrier_all();                                                                                 \
        shmem_##N##_add(x, (T)(me + 1), 0);                                                                  \
        shmem_##N##_inc(x, 0);                                                                               \
        shmem_barrier_all();                                                                                 \
        if (me == 0) CHECK(*x == (T)(npes * (npes + 1) / 2 + npes));                                         \
        shmem_barrier_all();                                                                                 \
        shmem_free(x);                                                                                       \
    }
TEST_STANDARD(int, int)
TEST_STANDARD(long, long)
TEST_STANDARD(long long, longlong)
/* ... and, as older codes call them, every type of today's standard AMO table. */
TEST_STANDARD(unsigned int, uint)
TEST_STANDARD(unsigned long, ulong)
TEST_STANDARD(unsigned long long, ulonglong)
TEST_STANDARD(int32_t, int32)
TEST_STANDARD(int64_t, int64)
TEST_STANDARD(uint32_t, uint32)
TEST_STANDARD(uint64_t, uint64)
TEST_STANDARD(size_t, size)
TEST_STANDARD(ptrdiff_t, ptrdiff)

/* swap, set and fetch also took float and double. */
#define TEST_EXTENDED(T, N)                                                                                  \
    static void test_extended_##N(void) {                                                                    \
        T *x = shmem_malloc(sizeof(T));                                                                      \
        CHECK(x != NULL);                                                                                    \
        *x = (T)me + (T)0.25;                                                                                \
        shmem_barrier_all();                                                                                 \
        CHECK(shmem_##N##_swap(x, (T)-1.5, right) == (T)right + (T)0.25);                                    \
        CHECK(shmem_##N##_fetch(x, right) == (T)-1.5);                                                       \
        shmem_##N##_set(x, (T)right * (T)2.5, right);                                                        \
        CHECK(shmem_##N##_fetch(x, right) == (T)right * (T)2.5);                                             \
        shmem_barrier_all();                                                                                 \
        CHECK(*x == (T)me * (T)2.5);                                                                         \
        shmem_barrier_all();                                                                                 \
        shmem_free(x);                                                                                       \
    }
TEST_EXTENDED(float, float)
TEST_EXTENDED(double, double)

/* shmem_TYPENAME_wait waits while the variable equals the value: the left neighbour changes it. */
#define TEST_WAIT(T, N)                                                                                      \
    static void test_wait_##N(void) {                                                                        \
        T *v = shmem_malloc(sizeof(T));                                                                      \
        CHECK(v != NULL);                                                                                    \
        *v = (T)-3;                                                                                          \
        shmem_barrier_all();                                                                                 \
        shmem_##N##_p(v, (T)(right + 1), right);                                                             \
        shmem_##N##_wait(v, (T)-3);                                                                          \
        CHECK(*v == (T)(me + 1));                                                                            \
        shmem_barrier_all();                                                                                 \
        shmem_free(v);                                                                                       \
    }
TEST_WAIT(short, short)
TEST_WAIT(int, int)
TEST_WAIT(long, long)
TEST_WAIT(long long, longlong)
TEST_WAIT(unsigned short, ushort)
TEST_WAIT(uint64_t, uint64)
TEST_WAIT(size_t, size)
TEST_WAIT(ptrdiff_t, ptrdiff)

static void test_untyped(void) {
    long *v = shmem_malloc(2 * sizeof(long));
    CHECK(v != NULL);
    v[0] = 1000 + me;
    v[1] = 0;
    shmem_barrier_all();
    /* shmem_swap is the generic macro under C11; on long it is the 1.3 untyped routine. */
    CHECK(shmem_swap(&v[0], (long)(2000 + right), right) == 1000 + right);
    shmem_long_p(&v[1], 7, right);
    shmem_wait(&v[1], 0);
    CHECK(v[1] == 7);
    shmem_barrier_all();
    CHECK(v[0] == 2000 + me);
    shmem_barrier_all();
    shmem_free(v);
}

/* The deprecated generic forms on int and double. */
static void test_generics(void) {
    int *i = shmem_malloc(sizeof(int));
    double *d = shmem_malloc(sizeof(double));
    CHECK(i != NULL && d != NULL);
    *i = 10 * me;
    *d = 0.5;
    shmem_barrier_all();
    CHECK(shmem_fadd(i, 2, right) == 10 * right);
    CHECK(shmem_finc(i, right) == 10 * right + 2);
    shmem_add(i, 4, right);
    shmem_inc(i, right);
    CHECK(shmem_cswap(i, 10 * right + 8, -5, right) == 10 * right + 8);
    CHECK(shmem_fetch(i, right) == -5);
    shmem_set(i, 6, right);
    CHECK(shmem_swap(i, 9, right) == 6);
    CHECK(shmem_swap(d, 1.75, right) == 0.5);
    shmem_set(d, 3.0, right);
    CHECK(shmem_fetch(d, right) == 3.0);
    shmem_barrier_all();
    CHECK(*i == 9 && *d == 3.0);
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(i);
}

/* The generic forms on the types of the specification's tables that are typedefs of other
 * standard types: the deprecated AMOs on unsigned and size_t, the bitwise AMOs on int and long
 * (int32_t and int64_t), the bitwise reductions on signed char, short, int and long (int8_t ..
 * int64_t), and shmem_sync with a team and with an active set. */
static long sync_psync[SHMEM_SYNC_SIZE];
static void test_generic_types(void) {
    unsigned *u = shmem_malloc(sizeof(unsigned));
    size_t *z = shmem_malloc(sizeof(size_t));
    int *i = shmem_malloc(sizeof(int));
    long *l = shmem_malloc(sizeof(long));
    CHECK(u != NULL && z != NULL && i != NULL && l != NULL);
    *u = 7u * (unsigned)me;
    *z = (size_t)me << 40;
    *i = 0x0ff0 | me;
    *l = 0x7f00ff00L | me;
    shmem_barrier_all();
    CHECK(shmem_fadd(u, 3u, right) == 7u * (unsigned)right);
    CHECK(shmem_finc(z, right) == (size_t)right << 40);
    shmem_inc(u, right);
    CHECK(shmem_cswap(z, ((size_t)right << 40) + 1, (size_t)5, right) == ((size_t)right << 40) + 1);
    CHECK(shmem_fetch(u, right) == 7u * (unsigned)right + 4u);
    CHECK(shmem_atomic_fetch_and(i, 0x00ff, right) == (0x0ff0 | right));
    shmem_atomic_or(i, 0x1000, right);
    CHECK(shmem_atomic_fetch_xor(l, 0xffL, right) == (0x7f00ff00L | right));
    shmem_atomic_and(SHMEM_CTX_DEFAULT, l, 0x0000ffffL, right);
    shmem_barrier_all();
    CHECK(*z == 5 && *i == (0x1000 | (0x00f0 & (0x0ff0 | me)) | (me & 0xf)));
    CHECK(*l == (((0x7f00ff00L | me) ^ 0xffL) & 0x0000ffffL));
    CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0);
    shmem_sync(0, 0, npes, sync_psync);

    /* Bitwise reductions dispatch on the signed types too. */
    signed char *sc = shmem_malloc(2 * sizeof(signed char));
    short *sh = shmem_malloc(2 * sizeof(short));
    CHECK(sc != NULL && sh != NULL);
    sc[0] = (signed char)(1 << (me % 7));
    sh[0] = (short)(0x0f0f ^ me);
    int *ir = shmem_malloc(2 * sizeof(int));
    long *lr = shmem_malloc(2 * sizeof(long));
    CHECK(ir != NULL && lr != NULL);
    ir[0] = -1 ^ (1 << me);
    lr[0] = (long)me << 33;
    shmem_barrier_all();
    CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, &sc[1], &sc[0], 1) == 0);
    CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, &sh[1], &sh[0], 1) == 0);
    CHECK(shmem_and_reduce(SHMEM_TEAM_WORLD, &ir[1], &ir[0], 1) == 0);
    CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, &lr[1], &lr[0], 1) == 0);
    signed char want_sc = 0;
    short want_sh = 0;
    int want_ir = -1;
    long want_lr = 0;
    for (int pe = 0; pe < npes; ++pe) {
        want_sc |= (signed char)(1 << (pe % 7));
        want_sh ^= (short)(0x0f0f ^ pe);
        want_ir &= -1 ^ (1 << pe);
        want_lr |= (long)pe << 33;
    }
    CHECK(sc[1] == want_sc && sh[1] == want_sh && ir[1] == want_ir && lr[1] == want_lr);
    shmem_barrier_all();
    shmem_free(lr);
    shmem_free(ir);
    shmem_free(sh);
    shmem_free(sc);
    shmem_free(l);
    shmem_free(i);
    shmem_free(z);
    shmem_free(u);
}

/* The 1.6 generic macros of put with signal, signals and strided blocks, from C. */
static void test_new_generics(void) {
    enum { N = 48 };
    long *buf = shmem_malloc(2 * N * sizeof(long));
    uint64_t *sig = shmem_malloc(2 * sizeof(uint64_t));
    CHECK(buf != NULL && sig != NULL);
    long src[N];
    for (int k = 0; k < N; ++k) {
        buf[k] = buf[N + k] = -1;
        src[k] = 1000L * me + k;
    }
    sig[0] = sig[1] = 0;
    shmem_barrier_all();
    shmem_put_signal(buf, src, 16, &sig[0], 5, SHMEM_SIGNAL_SET, right);
    shmem_put_signal_nbi(buf + 16, src + 16, 8, &sig[1], 3, SHMEM_SIGNAL_ADD, right);
    CHECK(shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 5) == 5);
    CHECK(shmem_signal_wait_until(&sig[1], SHMEM_CMP_GE, 3) == 3);
    for (int k = 0; k < 24; ++k) CHECK(buf[k] == 1000L * left + k);
    CHECK(buf[24] == -1);
    /* 3 blocks of 2 from every 4th source element into every 5th destination element. */
    shmem_ibput(buf + N, src, 5, 4, 2, 3, right);
    long got[12];
    for (int k = 0; k < 12; ++k) got[k] = -2;
    shmem_barrier_all();
    shmem_ibget(got, buf, 3, 6, 2, 4, right);
    for (int b = 0; b < 3; ++b)
        for (int e = 0; e < 5; ++e)
            CHECK(buf[N + 5 * b + e] == (e < 2 ? 1000L * left + 4 * b + e : -1));
    for (int b = 0; b < 4; ++b)
        for (int e = 0; e < 3; ++e) {
            /* block b of PE right's buf starts at 6b; what lies there is PE me's data (sent above) */
            const long want = 6 * b + e < 24 ? 1000L * me + 6 * b + e : -1;
            CHECK(got[3 * b + e] == (e < 2 ? want : -2));
        }
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(buf);
}

int main(void) {
    start_pes(0);
    me = _my_pe();
    npes = _num_pes();
    CHECK(me == shmem_my_pe() && npes == shmem_n_pes());
    right = (me + 1) % npes;
    left = (me + npes - 1) % npes;

    /* The allocation names of OpenSHMEM 1.0/1.1. */
    long *old = shmalloc(4 * sizeof(long));
    CHECK(old != NULL);
    old[3] = me;
    old = shrealloc(old, 64 * sizeof(long));
    CHECK(old != NULL && old[3] == me);
    double *aligned = shmemalign(256, sizeof(double));
    CHECK(aligned != NULL && ((uintptr_t)aligned % 256) == 0);
    *aligned = me + 0.5;
    shmem_barrier_all();
    CHECK(shmem_double_g(aligned, right) == right + 0.5);
    shmem_long_p(old + 10, me, right);
    shmem_barrier_all();
    CHECK(old[10] == left);
    shfree(aligned);
    shfree(old);

    /* No-ops on cache-coherent systems: they must simply return. */
    static long line;
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_clear_cache_line_inv(&line);
    shmem_set_cache_line_inv(&line);
    shmem_udcflush();
    shmem_udcflush_line(&line);

    test_standard_int();
    test_standard_long();
    test_standard_longlong();
    test_standard_uint();
    test_standard_ulong();
    test_standard_ulonglong();
    test_standard_int32();
    test_standard_int64();
    test_standard_uint32();
    test_standard_uint64();
    test_standard_size();
    test_standard_ptrdiff();
    test_extended_float();
    test_extended_double();
    test_wait_short();
    test_wait_int();
    test_wait_long();
    test_wait_longlong();
    test_wait_ushort();
    test_wait_uint64();
    test_wait_size();
    test_wait_ptrdiff();
    test_untyped();
    test_generics();
    test_generic_types();
    test_new_generics();

    shmem_barrier_all();
    if (me == 0) printf("deprecated: %d PEs OK\n", npes);
    shmem_finalize();
    return 0;
}
