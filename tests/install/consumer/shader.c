/* SPDX-License-Identifier: BSL-1.0 */
/* A shader program built against an installed vkshmem: ring.comp (GLSL) or
 * ring.hlsl puts fresh values into the next PE's device-heap array; each PE
 * checks what arrived. The SPIR-V is embedded (vkshmem_add_shaders:
 * RING_EMBEDDED, with RING_HLSL for the HLSL one) or read from the file named
 * by argv[1] (glslc or glslangValidator with the installed device library).
 * Prints "shader: PE n ok". */
#include <shmem.h>
#include <shmemx.h>
#include <vkshmem/vulkan.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(RING_EMBEDDED) && defined(RING_HLSL)
#include "ring_hlsl_spv.h"
#define RING_SPV ring_hlsl_spv
#elif defined(RING_EMBEDDED)
#include "ring_comp_spv.h"
#define RING_SPV ring_comp_spv
#endif

#define N 1000

struct push {
    uint64_t state, dst;
    uint32_t n;
    int32_t base;
};

static uint32_t *read_spirv(const char *path, size_t *bytes) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    *bytes = (size_t)ftell(f);
    rewind(f);
    uint32_t *words = malloc(*bytes);
    if (words && fread(words, 1, *bytes, f) != *bytes) free(words), words = NULL;
    fclose(f);
    return words;
}

int main(int argc, char **argv) {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes();
#ifdef RING_EMBEDDED
    (void)argc, (void)argv;
    vkshmemx_kernel *k = vkshmemx_kernel_create(RING_SPV, sizeof RING_SPV, sizeof(struct push));
#else
    size_t bytes = 0;
    uint32_t *spv = argc > 1 ? read_spirv(argv[1], &bytes) : NULL;
    if (!spv) {
        fprintf(stderr, "shader: usage: %s ring.comp.spv (readable SPIR-V)\n", argv[0]);
        shmem_global_exit(2);
    }
    vkshmemx_kernel *k = vkshmemx_kernel_create(spv, bytes, sizeof(struct push));
    free(spv);
#endif
    if (!k) shmem_global_exit(1);
    int *dst = shmem_malloc_with_hints(N * sizeof(int), SHMEMX_MALLOC_DEVICE);
    int poison[N], got[N];
    for (int i = 0; i < N; ++i) poison[i] = -1;
    shmem_int_put(dst, poison, N, me);
    /* Every PE's base, fresh each run; the next PE learns ours through this word. */
    static int base_in;
    const int base = (int)(((unsigned)time(NULL) ^ (unsigned)getpid() * 2654435761u) & 0xffffff) + me;
    shmem_int_p(&base_in, base, (me + 1) % n);
    shmem_barrier_all();

    struct push p = {vkshmemx_device_state(), vkshmemx_device_address(dst), N, base};
    if (vkshmemx_dispatch(k, (N + 63) / 64, 1, 1, &p, sizeof p) != 0) shmem_global_exit(1);
    shmem_barrier_all();
    shmem_int_get(got, dst, N, me);
    int bad = 0;
    for (int i = 0; i < N; ++i) bad += got[i] != base_in + i;
    if (bad) {
        fprintf(stderr, "shader: PE %d: %d of %d values wrong\n", me, bad, N);
        shmem_global_exit(1);
    }
    printf("shader: PE %d ok\n", me);
    vkshmemx_kernel_destroy(k);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}
