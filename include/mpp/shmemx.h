/* SPDX-License-Identifier: BSL-1.0 */
/* mpp/shmemx.h: the extensions under the older path, as mpp/shmem.h. The same as <shmemx.h>. */
#include <shmemx.h>
