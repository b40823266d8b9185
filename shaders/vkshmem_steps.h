/* SPDX-License-Identifier: BSL-1.0 */
/* Preprocessor repetition for the GLSL and HLSL device libraries: the copy loops' unrolling and
 * the back-off chains of a wait. Each library defines its two back-off steps before including this
 * file (they differ only in spelling): VKSHMEM_DIV_, a division, the step on GPUs; VKSHMEM_RSQ_, a
 * reciprocal square root, the step on lavapipe, where llvmpipe refines it in several dependent
 * operations: twice the time of a division for the same compile cost (measured with Mesa 22.3).
 * Each step depends on the last, so none can be dropped or overlapped. */
#ifndef VKSHMEM_STEPS_H
#define VKSHMEM_STEPS_H

#define VKSHMEM_REP2_(S) S S
#define VKSHMEM_REP4_(S) S S S S
#define VKSHMEM_REP8_(S) S S S S S S S S

/* VKSHMEM_STEPS_(n, S): n copies of the step S, for n = 0, 16, 64, 256, 512 or 1024. */
#define VKSHMEM_STEPS16_(S) VKSHMEM_REP2_(VKSHMEM_REP8_(S))
#define VKSHMEM_STEPS_0(S)
#define VKSHMEM_STEPS_16(S) VKSHMEM_STEPS16_(S)
#define VKSHMEM_STEPS_64(S) VKSHMEM_REP4_(VKSHMEM_STEPS16_(S))
#define VKSHMEM_STEPS_256(S) VKSHMEM_REP4_(VKSHMEM_REP4_(VKSHMEM_STEPS16_(S)))
#define VKSHMEM_STEPS_512(S) VKSHMEM_REP2_(VKSHMEM_STEPS_256(S))
#define VKSHMEM_STEPS_1024(S) VKSHMEM_REP4_(VKSHMEM_STEPS_256(S))
#define VKSHMEM_STEPS_X_(n, S) VKSHMEM_STEPS_##n(S)
#define VKSHMEM_STEPS_(n, S) VKSHMEM_STEPS_X_(n, S)

#endif /* VKSHMEM_STEPS_H */
