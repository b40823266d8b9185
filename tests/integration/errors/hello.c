/* SPDX-License-Identifier: BSL-1.0 */
/* Init and finalize only: for configuration errors caught at shmem_init. */
#include <shmem.h>
#include <stdio.h>

int main(void) {
    shmem_init();
    printf("PE %d of %d: initialized\n", shmem_my_pe(), shmem_n_pes());
    shmem_finalize();
    return 0;
}
