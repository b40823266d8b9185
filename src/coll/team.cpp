// SPDX-License-Identifier: BSL-1.0
#include "coll/team.hpp"

#include "coll/coll.hpp"
#include "core/state.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace vkshmem::coll {

std::uint64_t* Team::flag(int f) const {
    if (psync) return reinterpret_cast<std::uint64_t*>(psync + f);
    const std::uintptr_t at = g_state.space[kHostHeap].lo + kTeamAreaAt +
                              static_cast<std::size_t>(slot) * kTeamFlagBytes +
                              static_cast<std::size_t>(f) * 64;
    return reinterpret_cast<std::uint64_t*>(at);
}

namespace {
void and_u64(void* acc, const void* in, std::size_t n) {
    auto* a = static_cast<std::uint64_t*>(acc);
    const auto* b = static_cast<const std::uint64_t*>(in);
    for (std::size_t i = 0; i < n; ++i) a[i] &= b[i];
}
} // namespace

Teams::Teams(const std::vector<int>& node_local_pes, Algorithms algorithms) : algorithms_(algorithms) {
    std::vector<int> all(static_cast<std::size_t>(g_state.n_pes));
    for (int pe = 0; pe < g_state.n_pes; ++pe) all[static_cast<std::size_t>(pe)] = pe;
    world_ = make(std::move(all), 0);
    std::vector<int> local = node_local_pes;
    std::sort(local.begin(), local.end());
    shared_ = make(std::move(local), 1);
    used_slots_ = 0b11;
    active_sets_.reserve(64);
}

Teams::~Teams() = default;

std::unique_ptr<Team> Teams::make(std::vector<int> pes, int slot) {
    auto t = std::make_unique<Team>();
    t->index_of.assign(static_cast<std::size_t>(g_state.n_pes), -1);
    for (std::size_t i = 0; i < pes.size(); ++i) t->index_of[static_cast<std::size_t>(pes[i])] = static_cast<int>(i);
    t->me = t->index_of[static_cast<std::size_t>(g_state.my_pe)];
    t->count = static_cast<int>(pes.size());
    t->pes = std::move(pes);
    t->seen = std::make_unique<std::uint64_t[]>(kFlagCount); // zeroed
    t->slot = slot;
    t->algorithms = &algorithms_;
    return t;
}

Teams::Split Teams::split(Team& parent, const std::vector<int>& members, int num_contexts, const char* call) {
    // A slot free on every PE of the parent: an AND of the free masks. The
    // teams of one split are equal or disjoint, so they can share it.
    std::uint64_t* in = parent.flag(kScratchIn);
    std::uint64_t* out = parent.flag(kScratchOut);
    {
        std::lock_guard lk(mu_);
        *in = ~used_slots_;
    }
    reduce(parent, out, in, 1, sizeof(std::uint64_t), and_u64, call);
    const std::uint64_t common = *out;
    if (!common)
        return {nullptr, "every team slot (64 per PE) is in use on some PE of the parent team; destroy teams that "
                         "are no longer needed"};
    if (members.empty()) return {};
    const int slot = std::countr_zero(common);
    std::vector<int> pes;
    pes.reserve(members.size());
    for (int i : members) pes.push_back(parent.world(i));
    auto t = make(std::move(pes), slot);
    t->num_contexts = num_contexts;
    Team* raw = t.get();
    std::lock_guard lk(mu_);
    used_slots_ |= std::uint64_t(1) << slot;
    user_.push_back(std::move(t));
    return {raw, nullptr};
}

void Teams::destroy(Team* t, const char* call) {
    // After this sync no member signals this PE's flags of the slot again,
    // so they can be zeroed for the next team that takes it.
    sync(*t, call);
    std::memset(t->flag(0), 0, kTeamFlagBytes);
    std::lock_guard lk(mu_);
    used_slots_ &= ~(std::uint64_t(1) << t->slot);
    std::erase_if(contexts_, [t](const std::unique_ptr<Context>& c) { return c->team == t; });
    std::erase_if(user_, [t](const std::unique_ptr<Team>& u) { return u.get() == t; });
}

Context* Teams::create_context(Team* t, long options) {
    auto c = std::make_unique<Context>(t, options); // opens its network domain: outside the lock
    std::lock_guard lk(mu_);
    contexts_.push_back(std::move(c));
    return contexts_.back().get();
}

void Teams::destroy_context(Context* c) {
    std::unique_ptr<Context> gone; // closed (its operations completed) outside the lock
    {
        std::lock_guard lk(mu_);
        auto it = std::find_if(contexts_.begin(), contexts_.end(),
                               [c](const std::unique_ptr<Context>& u) { return u.get() == c; });
        if (it == contexts_.end()) return;
        gone = std::move(*it);
        contexts_.erase(it);
    }
}

bool Teams::live_context(const Context* c) {
    std::lock_guard lk(mu_);
    return std::any_of(contexts_.begin(), contexts_.end(), [c](const std::unique_ptr<Context>& u) { return u.get() == c; });
}

Team* Teams::active_set(int start, int log_stride, int size, long* psync) {
    std::lock_guard lk(mu_);
    std::unique_ptr<Team>& t = active_sets_[{psync, start, log_stride, size}];
    if (!t) {
        t = std::make_unique<Team>();
        t->first = start;
        t->log_stride = log_stride;
        t->count = size;
        t->me = t->index(g_state.my_pe);
        t->psync = psync;
        t->algorithms = &algorithms_;
    }
    return t->me < 0 ? nullptr : t.get();
}

bool Teams::live(const Team* t) {
    if (t == world_.get() || t == shared_.get()) return true;
    std::lock_guard lk(mu_);
    return std::any_of(user_.begin(), user_.end(), [t](const std::unique_ptr<Team>& u) { return u.get() == t; });
}

} // namespace vkshmem::coll
