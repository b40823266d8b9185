// SPDX-License-Identifier: BSL-1.0
// Collective operations on teams (OpenSHMEM 1.6 §9.9), over RMA and the
// team's flags (team.hpp). Sizes are in bytes; typed front ends are in
// rma/rma.hpp. `call` names the C routine for error messages.
//
// As the specification requires, every PE's destination must be ready to be
// written when any PE calls a collective; then the binomial broadcast and
// reduction, and the exchanges, need no opening sync: each reads only memory
// its owner has signalled ready. The linear reduction gathers readiness
// signals at its root first; the linear broadcast and the scans start with a
// team sync. Each moves data with puts
// and gets that take each peer's route, and ends when this PE's part of the
// result is in place.
#pragma once

#include "coll/team.hpp"

#include <cstddef>
#include <cstdint>

namespace vkshmem::coll {

// Waits for every member of the team, without completing this PE's
// operations (shmem_team_sync, shmem_sync_all). Dissemination (log2 n rounds
// of one signal each) or linear (all signal PE 0, which releases all).
void sync(Team& t, const char* call);
// quiet, then sync (shmem_barrier_all).
void barrier(Team& t, const char* call);

// source on team PE `root` to dest on every member; with to_root, also into
// the root's own dest (1.6 team broadcasts; the deprecated active-set form
// leaves it alone). Binomial tree or linear (the root puts to every member).
void broadcast(Team& t, void* dest, const void* source, std::size_t bytes, int root, bool to_root, const char* call);
// Each member's `bytes` (the same on all) at offset index * bytes of every member's dest.
void fcollect(Team& t, void* dest, const void* source, std::size_t bytes, const char* call);
// As fcollect, with each member's own size; blocks are packed in team order.
void collect(Team& t, void* dest, const void* source, std::size_t bytes, const char* call);
// Block j (of `bytes`) of each member's source to block (that member's index) of member j's dest.
void alltoall(Team& t, void* dest, const void* source, std::size_t bytes, const char* call);
// alltoall of nelems elements of `elem` bytes per block, with element strides dst and sst.
void alltoalls(Team& t, void* dest, const void* source, std::ptrdiff_t dst, std::ptrdiff_t sst, std::size_t nelems,
               std::size_t elem, const char* call);

// acc[i] = acc[i] OP in[i] for n elements.
using Combine = void (*)(void* acc, const void* in, std::size_t n);
// dest on every member = the combination of all members' source (n elements of `elem` bytes).
// Binomial tree (partials combine up to PE 0, the result goes down a binomial tree) or linear
// (every member signals PE 0, which reads every source and puts the result to every member).
void reduce(Team& t, void* dest, const void* source, std::size_t n, std::size_t elem, Combine combine,
            const char* call);
// Prefix combinations in team order: inclusive (members 0..me) or exclusive (0..me-1; member 0's
// dest is left as it was).
void scan(Team& t, void* dest, const void* source, std::size_t n, std::size_t elem, Combine combine, bool inclusive,
          const char* call);

} // namespace vkshmem::coll
