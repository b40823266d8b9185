/* SPDX-License-Identifier: BSL-1.0 */
/* The profiling interface as a tool uses it: this program defines shmem_long_put, shmem_long_p
 * and shmem_barrier_all itself, counting the calls and passing each on through the library's
 * pshmem_ entry point (include/pshmem.h). Its own calls must reach its definitions, and the data
 * must arrive as without them: every PE puts fresh words into the next PE's symmetric array
 * (poisoned first) and checks the ones it got. */
#include <pshmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define N 256

static long puts_seen, ps_seen, barriers_seen;

void shmem_long_put(long *dest, const long *source, size_t nelems, int pe) {
    ++puts_seen;
    pshmem_long_put(dest, source, nelems, pe);
}
void shmem_long_p(long *dest, long value, int pe) {
    ++ps_seen;
    pshmem_long_p(dest, value, pe);
}
void shmem_barrier_all(void) {
    ++barriers_seen;
    pshmem_barrier_all();
}

static long word(long key, int i) { return (long)((uint64_t)key * 0x9e3779b97f4a7c15ull + (uint64_t)i * 7919u); }

int main(void) {
    pshmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n;
    long *dst = shmem_malloc(N * sizeof(long));
    static long key_in; /* symmetric: static data */
    for (int i = 0; i < N; ++i) dst[i] = -1;
    const long key = (long)time(NULL) ^ ((long)getpid() << 16) ^ me;
    long src[N];
    for (int i = 0; i < N; ++i) src[i] = word(key, i);
    shmem_barrier_all();
    shmem_long_p(&key_in, key, next);
    for (int i = 0; i < N; i += 64) shmem_long_put(dst + i, src + i, 64, next);
    shmem_barrier_all();
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += dst[i] != word(key_in, i);
    const int counted = puts_seen == N / 64 && ps_seen == 1 && barriers_seen == 2;
    if (bad || !counted) {
        fprintf(stderr, "profiling: PE %d: %d of %d words wrong; seen %ld puts, %ld p, %ld barriers\n", me, bad, N,
                puts_seen, ps_seen, barriers_seen);
        return 1;
    }
    shmem_free(dst);
    pshmem_finalize();
    printf("profiling: PE %d ok\n", me);
    return 0;
}
