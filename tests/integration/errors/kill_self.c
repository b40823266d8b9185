/* SPDX-License-Identifier: BSL-1.0 */
/* The last PE kills itself with SIGKILL in the middle of the run, while the others are in a
 * barrier: the job must end non-zero within seconds, with no process and nothing in /dev/shm
 * left behind (the runtime gets no chance to clean up in the killed process). */
#define _DEFAULT_SOURCE /* kill, usleep */
#include <shmem.h>
#include <shmemx.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static long counters[16];

int main(void) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
    char *host = shmem_malloc(1 << 20);
    char *dev = shmemx_device_malloc(1 << 20);
    memset(host, me, 1 << 20);
    memset(dev, me, 1 << 20);
    shmem_barrier_all();
    /* Some traffic first, so every kind of resource is in use. */
    shmem_putmem(host, dev, 1 << 20, (me + 1) % n);
    shmem_long_atomic_inc(&counters[me], (me + 1) % n);
    shmem_barrier_all();
    if (me == n - 1) {
        usleep(200 * 1000); /* let the others enter the barrier */
        printf("PE %d: SIGKILL to myself\n", me);
        fflush(stdout);
        kill(getpid(), SIGKILL);
    }
    shmem_barrier_all(); /* never completes */
    printf("PE %d: the barrier returned although PE %d was killed\n", me, n - 1);
    shmem_finalize();
    return 0;
}
