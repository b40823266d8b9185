// SPDX-License-Identifier: BSL-1.0
/*
 * vkshmem_reduce.glsl — the reduction core, included twice by vkshmem_coll.glsl: as
 * vkshmem_reduce_ over vkshmem_combine_ (integers and float) and as vkshmem_reduce_f64_ over
 * vkshmem_combine_f64_ (double), so that only shaders that reduce doubles use shaderFloat64.
 * The includer defines VKSHMEM_REDUCE_NAME_ and VKSHMEM_REDUCE_COMBINE_.
 *
 * The reduction goes in chunks that fit half the team's scratch area (scratch_bytes / 2 / size
 * bytes per member): each member puts its chunk of source into slot `me` of one half of every
 * member's scratch area, syncs (its puts complete first), and once every member has arrived,
 * combines the slots in member order (so every member computes the same floating-point result)
 * into its dest. The half is the parity of the member's syncs on the team so far (its counter's
 * high half_bytes), the same on every member: a member writes a half again only two syncs later, after
 * every member has arrived at the sync in between, which each makes only after combining. So no
 * sync is needed before the puts, and the recorded reductions (vulkan/kernels/cmd.glsl) and the
 * HLSL library use the same halves. source is read before dest is written, chunk by chunk, so they
 * may be the same array.
 */
int VKSHMEM_REDUCE_NAME_(uint64_t team, uint64_t dest, uint64_t src, uint64_t nelems, uint kind, uint op, bool wg) {
    vkshmem_team_layout t;
    bool entered = vkshmem_coll_begin_(team, wg, t);
    uint lane = vkshmem_coll_lane_(wg), lanes = vkshmem_coll_lanes_(wg);
    uint w = vkshmem_kind_bytes_(kind);
    uint half_bytes = entered ? t.scratch_bytes / 2u : 0u;
    uint64_t chunk = entered ? uint64_t(half_bytes / uint(t.size) / w) : uint64_t(0);
    bool ok = entered && chunk != uint64_t(0);
    if (entered && !ok && lane == 0u) vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, uint(t.size));
    uint64_t chunks = ok ? (nelems + chunk - uint64_t(1)) / chunk : uint64_t(0);
    /* Every invocation reads the parity before the first sync: only this PE's own arrival
     * changes it, and that comes after a workgroup barrier. */
    uint parity = ok ? uint(vkshmem_load_(t.sync, 8u) >> 32) & 1u : 0u;
    /* One sync per chunk (one call site). Not reserved: every invocation of a workgroup must run
     * the same steps (their syncs hold barriers); the waits inside take their polls from what the
     * budget leaves. */
    for (uint64_t c = uint64_t(0); c < chunks; ++c) {
        uint64_t first = c * chunk, m = min(chunk, nelems - first);
        uint64_t slots = t.scratch + uint64_t((parity ^ uint(c & uint64_t(1))) * half_bytes);
        vkshmem_coll_move_(VKSHMEM_COLL_FCOLLECT_, t, slots + uint64_t(t.me) * chunk * uint64_t(w),
                           src + first * uint64_t(w), m * uint64_t(w), 0, lane, lanes);
        vkshmem_coll_sync_(t, wg, true, ok);
        uint per = uint((m + uint64_t(lanes) - uint64_t(1)) / uint64_t(lanes));
        if (!vkshmem_reserve_(per * uint(t.size) + 2u)) {
            vkshmem_error_(VKSHMEM_ERR_TOO_LARGE, vkshmem_clamp32_(m * uint64_t(w)));
            continue;
        }
        for (uint64_t e = uint64_t(lane); e < m; e += uint64_t(lanes)) {
            uint64_t acc = vkshmem_load_(slots + e * uint64_t(w), w);
            for (int j = 1; j < t.size; ++j)
                acc = VKSHMEM_REDUCE_COMBINE_(acc, vkshmem_load_(slots + (uint64_t(j) * chunk + e) * uint64_t(w), w),
                                              kind, op);
            uint64_t d = dest + (first + e) * uint64_t(w);
            if (w == 4u) vkshmem_w32_(d).v = uint(acc);
            else vkshmem_w64_(d).v = acc;
        }
    }
    vkshmem_charge_(uint(min(chunks, uint64_t(0xffffu))));
    vkshmem_fence_();
    if (wg) barrier();
    vkshmem_coll_end_(team, wg, entered);
    return ok ? 0 : 1;
}
