/* SPDX-License-Identifier: BSL-1.0 */
/* mpp/shmem.h: where programs of OpenSHMEM 1.0 (and SGI and Cray SHMEM before it) include the API
 * from. The same as <shmem.h>. */
#include <shmem.h>
