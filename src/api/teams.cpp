// SPDX-License-Identifier: BSL-1.0
// Teams and whole-team synchronization (OpenSHMEM 1.6 §9.4, §9.9).
#include <shmem.h>

#include "api/guard.hpp"
#include "api/typed.hpp"
#include "coll/coll.hpp"

#include <vector>

using namespace vkshmem;

// An active set's flags live in its pSync array, whose size the header promises.
static_assert(coll::kFlagCount <= SHMEM_BARRIER_SYNC_SIZE && coll::kFlagCount <= SHMEM_BCAST_SYNC_SIZE &&
              coll::kFlagCount <= SHMEM_REDUCE_SYNC_SIZE && coll::kFlagCount <= SHMEM_COLLECT_SYNC_SIZE &&
              coll::kFlagCount <= SHMEM_ALLTOALL_SYNC_SIZE && coll::kFlagCount <= SHMEM_ALLTOALLS_SYNC_SIZE &&
              coll::kFlagCount <= SHMEM_SYNC_SIZE);

namespace vkshmem::api {

coll::Team* team_of(shmem_team_t h, const char* call) {
    Runtime& rt = require_runtime(call);
    if (h == SHMEM_TEAM_INVALID) return nullptr;
    if (h == SHMEM_TEAM_WORLD) return &rt.teams().world();
    if (h == SHMEM_TEAM_SHARED) return &rt.teams().shared();
    auto* t = reinterpret_cast<coll::Team*>(h);
    if (g_state.checks && !rt.teams().live(t))
        fatal(call, "team handle {} is not a team of this PE (destroyed already, or never created)",
              static_cast<void*>(h));
    return t;
}

void detail::check_root(const coll::Team& t, int root, const char* call) {
    if (root < 0 || root >= t.size()) fatal(call, "PE_root {} is not a PE of the team (0..{})", root, t.size() - 1);
}

coll::Team& detail::active_set(int start, int log_stride, int size, long* psync, const char* call) {
    require_runtime(call);
    const bool stride_ok = log_stride >= 0 && log_stride <= 30;
    if (!stride_ok || start < 0 || size < 1 || start + (static_cast<long long>(size - 1) << log_stride) >= g_state.n_pes)
        fatal(call, "PE_start {}, logPE_stride {}, PE_size {} is not an active set of this job's {} PEs", start,
              log_stride, size, g_state.n_pes);
    if (space_of(psync) < 0)
        fatal(call, "pSync {} is not symmetric: allocate it with shmem_malloc or make it a global array",
              static_cast<void*>(psync));
    coll::Team* t = g_runtime->teams().active_set(start, log_stride, size, psync);
    if (!t)
        fatal(call, "PE {} is not in the active set (PE_start {}, logPE_stride {}, PE_size {}): only its PEs may call",
              g_state.my_pe, start, log_stride, size);
    return *t;
}

void detail::bad_count(int nreduce, const char* call) { fatal(call, "nreduce {} is negative", nreduce); }

} // namespace vkshmem::api

namespace {
using vkshmem::api::team_of;

shmem_team_t handle(coll::Team* t) { return reinterpret_cast<shmem_team_t>(t); }

// One split over `parent`, each PE joining the team `members` (parent indices) lists.
int split(coll::Team& parent, const std::vector<int>& members, const shmem_team_config_t* config, long mask,
          shmem_team_t* out, const char* call) {
    const int contexts = config && (mask & SHMEM_TEAM_NUM_CONTEXTS) ? config->num_contexts : 0;
    auto r = g_runtime->teams().split(parent, members, contexts, call);
    if (r.error) {
        if (parent.me == 0) error(call, "{}", r.error);
        *out = SHMEM_TEAM_INVALID;
        return 1;
    }
    if (r.team) g_runtime->publish_device_team(*r.team);
    *out = handle(r.team);
    return 0;
}
} // namespace

extern "C" {

int shmem_team_my_pe(shmem_team_t team) noexcept {
    coll::Team* t = team_of(team, "shmem_team_my_pe");
    return t ? t->me : -1;
}

int shmem_team_n_pes(shmem_team_t team) noexcept {
    coll::Team* t = team_of(team, "shmem_team_n_pes");
    return t ? t->size() : -1;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t* config) noexcept {
    coll::Team* t = team_of(team, "shmem_team_get_config");
    if (!t) return 1;
    if (config && (config_mask & SHMEM_TEAM_NUM_CONTEXTS)) config->num_contexts = t->num_contexts;
    return 0;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team) noexcept {
    coll::Team* s = team_of(src_team, "shmem_team_translate_pe");
    coll::Team* d = team_of(dest_team, "shmem_team_translate_pe");
    if (!s || !d || src_pe < 0 || src_pe >= s->size()) return -1;
    return d->index(s->world(src_pe));
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t* config, long config_mask, shmem_team_t* new_team) noexcept {
    constexpr const char* call = "shmem_team_split_strided";
    if (!new_team) fatal(call, "new_team is NULL");
    coll::Team* parent = team_of(parent_team, call);
    *new_team = SHMEM_TEAM_INVALID;
    if (!parent) return 1; // not a member of the parent: not part of this split
    // The same arguments on every PE: each reaches the same verdict alone.
    const int n = parent->size();
    const long long last = start + static_cast<long long>(stride) * (size - 1);
    const char* bad = size < 1                   ? "size must be at least 1"
                      : start < 0 || start >= n  ? "start is not a PE of the parent team"
                      : stride == 0 && size > 1  ? "a stride of 0 needs size 1"
                      : last < 0 || last >= n    ? "start + stride * (size - 1) lies outside the parent team"
                                                 : nullptr;
    if (bad) {
        if (parent->me == 0)
            error(call, "start {}, stride {}, size {} over a parent team of {} PEs: {}", start, stride, size, n, bad);
        return 1;
    }
    std::vector<int> members;
    const int off = parent->me - start;
    if (stride ? off % stride == 0 && off / stride >= 0 && off / stride < size : off == 0)
        for (int k = 0; k < size; ++k) members.push_back(start + k * stride);
    return split(*parent, members, config, config_mask, new_team, call);
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t* xaxis_config,
                        long xaxis_mask, shmem_team_t* xaxis_team, const shmem_team_config_t* yaxis_config,
                        long yaxis_mask, shmem_team_t* yaxis_team) noexcept {
    constexpr const char* call = "shmem_team_split_2d";
    if (!xaxis_team || !yaxis_team) fatal(call, "xaxis_team or yaxis_team is NULL");
    coll::Team* parent = team_of(parent_team, call);
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (!parent) return 1;
    const int n = parent->size();
    if (xrange < 1) {
        if (parent->me == 0) error(call, "xrange {} must be at least 1", xrange);
        return 1;
    }
    if (xrange > n) xrange = n; // one row holding the whole parent
    const int row = parent->me / xrange, col = parent->me % xrange;
    std::vector<int> x, y;
    for (int i = row * xrange; i < n && i < (row + 1) * xrange; ++i) x.push_back(i);
    for (int i = col; i < n; i += xrange) y.push_back(i);
    if (int r = split(*parent, x, xaxis_config, xaxis_mask, xaxis_team, call)) return r;
    if (int r = split(*parent, y, yaxis_config, yaxis_mask, yaxis_team, call)) {
        shmem_team_destroy(*xaxis_team);
        *xaxis_team = SHMEM_TEAM_INVALID;
        return r;
    }
    return 0;
}

void shmem_team_destroy(shmem_team_t team) noexcept {
    constexpr const char* call = "shmem_team_destroy";
    coll::Team* t = team_of(team, call);
    if (!t) return;
    if (team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
        fatal(call, "SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED last until shmem_finalize and cannot be destroyed");
    const int slot = t->slot;
    g_runtime->teams().destroy(t, call);
    g_runtime->retire_device_team(slot);
}

void* shmem_team_ptr(shmem_team_t team, const void* dest, int pe) noexcept {
    coll::Team* t = team_of(team, "shmem_team_ptr");
    if (!t || pe < 0 || pe >= t->size()) return nullptr;
    return shmem_ptr(dest, t->world(pe));
}

int shmem_team_sync(shmem_team_t team) noexcept {
    coll::Team* t = team_of(team, "shmem_team_sync");
    if (!t) return 1;
    coll::sync(*t, "shmem_team_sync");
    return 0;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long* pSync) noexcept {
    coll::barrier(api::detail::active_set(PE_start, logPE_stride, PE_size, pSync, "shmem_barrier"), "shmem_barrier");
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long* pSync) noexcept {
    coll::sync(api::detail::active_set(PE_start, logPE_stride, PE_size, pSync, "shmem_sync"), "shmem_sync");
}

void shmem_barrier_all(void) noexcept { require_runtime("shmem_barrier_all").barrier_all(); }

void shmem_sync_all(void) noexcept { coll::sync(require_runtime("shmem_sync_all").teams().world(), "shmem_sync_all"); }

} // extern "C"
