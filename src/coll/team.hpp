// SPDX-License-Identifier: BSL-1.0
// Teams (OpenSHMEM 1.6 §9.4) and the signalling their collectives build on.
//
// A team is an ordered list of world PEs. Each team has a slot: a block of
// the internal area of every member's host heap (memory/internal_area.hpp)
// holding its flags. A flag is a counter that only grows: a PE signals a
// peer's flag with an atomic add (any route: mapped, network, proxy), and the
// owner waits until the count reaches the number of signals it has consumed
// so far (Team::seen). Adds commute, so signals from one PE need no ordering
// among themselves; each flag has one writer per use, or a count of writers
// known to the reader, and every data collective starts with a team sync, so
// signals of consecutive collectives cannot be mistaken for each other.
#pragma once

#include "memory/internal_area.hpp"
#include "rma/rma.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace vkshmem::coll {

// Teams of up to 2^kReadyLevels PEs hand over broadcasts by kReady; larger ones sync first.
constexpr int kReadyLevels = 20;

// The flags of a slot, one cache line each.
enum Flag : int {
    kDiss = 0,        // [32] dissemination barrier, round r: from PE me - 2^r
    kArrive = 32,     // linear barrier: arrivals at team PE 0
    kRelease = 33,    // linear barrier: release from team PE 0
    kUp = 34,         // [32] binomial reduction: the partial of child me + 2^k is ready
    kDown = 66,       // [32] binomial broadcast: parent me - 2^k delivered the data
    kData = 98,       // linear broadcast and reduction: the root delivered the result
    kExchange = 99,   // [2] fcollect, collect, alltoall: one count per PE that delivered its blocks
    kSizes = 101,     // [2] collect: one count per PE whose size is in its kScratchIn word
    kScratchIn = 103, // one word each: the operands of the runtime's own reductions (team split), collect's size
    kScratchOut = 104,
    kGather = 105,    // linear reduction: one count per PE whose source is ready, at team PE 0
    kReady = 106,     // [kReadyLevels] binomial broadcast: child me + 2^k entered the call
    kFlagCount = kReady + kReadyLevels
};
static_assert(kFlagCount <= 128, "an active set's flags are its pSync's 128 words (SHMEM_BCAST_SYNC_SIZE)");
static_assert(kFlagCount * 64 <= kTeamFlagBytes);

// Algorithms, chosen by VKSHMEM_BARRIER_ALGORITHM, VKSHMEM_BCAST_ALGORITHM and VKSHMEM_REDUCE_ALGORITHM.
// Auto (reductions): linear up to kLinearReduceMax PEs, where reading every
// source at one PE takes fewer hops (measured: bench/results), tree above.
enum class Algorithm : std::uint8_t { Linear, Tree /* dissemination for barriers */, Auto };
constexpr int kLinearReduceMax = 8;
struct Algorithms {
    Algorithm barrier = Algorithm::Tree, bcast = Algorithm::Tree, reduce = Algorithm::Auto;
};

struct Team {
    // Members: the world PEs in `pes` (in team order, with `index_of` mapping world PE -> index or
    // -1), or, for an active set (pes empty), first + (i << log_stride) for i < count: an active
    // set is made at its first collective with a new pSync, so it holds no per-member tables.
    std::vector<int> pes;
    std::vector<int> index_of;
    int first = 0, log_stride = 0, count = 0;
    int me = -1;               // this PE's index
    int slot = -1;             // -1: an active set (below)
    int num_contexts = 0;      // shmem_team_config_t as created
    const Algorithms* algorithms = nullptr; // the job's (Teams owns them)
    // Signals of each own flag consumed so far (teams with a slot; an active set consumes its
    // signals from pSync instead, and is made without this 848-byte table).
    std::unique_ptr<std::uint64_t[]> seen;
    // The deprecated active-set collectives keep their flags in the caller's
    // pSync array (8 bytes apart) and consume signals by subtracting them,
    // so pSync is back at SHMEM_SYNC_VALUE (0) once no collective runs.
    long* psync = nullptr;
    // Exchanges (fcollect, collect, alltoall) so far: they have no opening
    // sync, so a PE may be one exchange ahead of another, and consecutive
    // exchanges signal alternate flags (kExchange + parity). An active set
    // uses one set: its pSync contract already keeps consecutive calls apart.
    std::uint64_t exchanges = 0;

    int size() const { return count; }
    int world(int index) const {
        return pes.empty() ? first + (index << log_stride) : pes[static_cast<std::size_t>(index)];
    }
    // This team's index of world PE `pe`, or -1.
    int index(int pe) const {
        if (!pes.empty()) return index_of[static_cast<std::size_t>(pe)];
        const int off = pe - first;
        return off >= 0 && off % (1 << log_stride) == 0 && (off >> log_stride) < count ? off >> log_stride : -1;
    }
    // The symmetric address of flag f (this PE's copy; a peer's copy is the same address on that PE).
    std::uint64_t* flag(int f) const;
};

// A communication context (shmem_ctx_t points to one): its team, the options it was created
// with, and its own network domain where the transport gives one (rma::open_domain), which it
// closes, completing what is in flight, when it goes.
struct Context {
    Context(Team* t, long o) : team(t), options(o), domain(rma::open_domain()) {}
    ~Context() { rma::close_domain(domain); }
    Context(const Context&) = delete;
    Context& operator=(const Context&) = delete;
    Team* team = nullptr;
    long options = 0;
    net::Domain* domain = nullptr;
};

// Every team (and context) of this PE. Created after the heaps (and the network) at init.
class Teams {
public:
    Teams(const std::vector<int>& node_local_pes, Algorithms algorithms);
    ~Teams();
    Team& world() { return *world_; }
    Team& shared() { return *shared_; }
    const Algorithms& algorithms() const { return algorithms_; }

    // Collective over `parent`: every PE passes the parent indices of the
    // team it joins, in team order (empty: none). Returns this PE's new team
    // (null when none), or an error message, the same on every PE of the
    // parent, when no slot is free on all of them.
    struct Split {
        Team* team = nullptr;
        const char* error = nullptr;
    };
    Split split(Team& parent, const std::vector<int>& members, int num_contexts, const char* call);
    // Collective over the team: syncs, frees its slot, deletes it and its contexts.
    void destroy(Team* t, const char* call);
    Context* create_context(Team* t, long options);
    void destroy_context(Context* c);
    bool live_context(const Context* c);
    // Whether `t` is a live team of this PE (VKSHMEM_ERROR_CHECKS).
    bool live(const Team* t);
    // The active set PE_start, PE_start + 2^log_stride, ... (size of them)
    // with its flags in pSync; null when this PE is not in it. One object per
    // (set, pSync), kept until finalize: threads may run collectives on other
    // sets (with other pSync arrays) at the same time.
    Team* active_set(int start, int log_stride, int size, long* psync);

private:
    std::unique_ptr<Team> make(std::vector<int> pes, int slot);

    Algorithms algorithms_;
    std::unique_ptr<Team> world_, shared_;
    std::vector<std::unique_ptr<Team>> user_;
    std::vector<std::unique_ptr<Context>> contexts_;
    // Active sets by (pSync, PE_start, logPE_stride, PE_size): a hash, so that a program that
    // cycles through many pSync arrays finds each in constant time.
    struct SetKey {
        long* psync;
        int start, log_stride, size;
        bool operator==(const SetKey&) const = default;
    };
    struct SetHash {
        std::size_t operator()(const SetKey& k) const noexcept {
            std::size_t h = std::hash<long*>{}(k.psync);
            for (int v : {k.start, k.log_stride, k.size}) h = h * 0x9e3779b97f4a7c15ull + static_cast<std::size_t>(v);
            return h;
        }
    };
    std::unordered_map<SetKey, std::unique_ptr<Team>, SetHash> active_sets_;
    std::uint64_t used_slots_ = 0; // slots of teams this PE belongs to
    std::mutex mu_;
};

} // namespace vkshmem::coll
