/* SPDX-License-Identifier: BSL-1.0 */
/* MPI and vkshmem in one program, started by oshrun (Open MPI's mpirun): both
 * take their rank from the same PMIx server, so MPI_COMM_WORLD's ranks are the
 * PEs' numbers. Checks that, then mixes the two on fresh random data: an MPI
 * allreduce against a vkshmem sum reduction, vkshmem puts ordered by an MPI
 * barrier (after shmem_quiet), and MPI messages carrying values a PE then reads
 * with shmem_g. Init and finalize in either order (argv[1]: "shmem-first"). */
#include <mpi.h>
#include <shmem.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 257

static void check(int ok, const char *what, int me) {
    if (!ok) {
        fprintf(stderr, "mpi interop: PE %d: %s\n", me, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    const int shmem_first = argc > 1 && strcmp(argv[1], "shmem-first") == 0;
    if (shmem_first) shmem_init();
    MPI_Init(&argc, &argv);
    if (!shmem_first) shmem_init();

    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int me = shmem_my_pe(), n = shmem_n_pes();
    check(rank == me && size == n, "MPI rank/size differ from the PE number/count", me);

    /* Fresh values: PE 0 draws a seed and MPI broadcasts it. */
    long seed = (long)time(NULL) ^ (long)getpid();
    MPI_Bcast(&seed, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    long *src = shmem_malloc(N * sizeof(long)), *dst = shmem_malloc(N * sizeof(long));
    long *box = shmem_malloc(N * sizeof(long));
    long mine[N], mpi_sum[N];
    for (int i = 0; i < N; ++i) {
        mine[i] = src[i] = (seed % 100003) * (me + 1) + i * 7 - me;
        dst[i] = box[i] = -1;
    }
    shmem_barrier_all();

    MPI_Allreduce(mine, mpi_sum, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, N);
    for (int i = 0; i < N; ++i) check(dst[i] == mpi_sum[i], "the vkshmem sum differs from MPI_Allreduce's", me);

    /* vkshmem puts, then shmem_quiet and an MPI barrier: the data is there afterwards. */
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    shmem_long_put(box, src, N, next);
    shmem_quiet();
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; ++i)
        check(box[i] == (seed % 100003) * (prev + 1) + i * 7 - prev, "a put ordered by MPI_Barrier is missing", me);

    /* MPI carries an index; the receiver reads that element from the sender with shmem_g. */
    int idx = (int)((seed + me) % N), got = -1;
    MPI_Sendrecv(&idx, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    check(shmem_long_g(&src[got], prev) == (seed % 100003) * (prev + 1) + got * 7 - prev,
          "shmem_g of the element MPI named is wrong", me);

    shmem_barrier_all();
    shmem_free(box);
    shmem_free(dst);
    shmem_free(src);
    if (me == 0) printf("mpi interop: %d PEs, MPI ranks match, sums, puts and gets agree (%s first)\n", n,
                        shmem_first ? "shmem_init" : "MPI_Init");
    if (shmem_first) {
        MPI_Finalize();
        shmem_finalize();
    } else {
        shmem_finalize();
        MPI_Finalize();
    }
    return 0;
}
