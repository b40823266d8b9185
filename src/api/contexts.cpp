// SPDX-License-Identifier: BSL-1.0
// Communication contexts (OpenSHMEM 1.6 §9.5). A context numbers PEs in its
// team, and has its own network domain where the transport gives one (UCX: a
// worker of its own; libfabric: its own count of operations in flight), so its
// quiet and fence complete and order its own network operations only, and
// threads on different contexts do not wait for each other's. Node-local
// routes complete every operation before it returns, so there a context's
// fence and quiet only order this PE's stores.
#include <shmem.h>

#include "api/guard.hpp"
#include "api/team_handle.hpp"
#include "api/typed.hpp"

#include <vector>

using namespace vkshmem;

namespace {

constexpr long kKnownOptions = SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED | SHMEM_CTX_NOSTORE;

coll::Context* context_of(shmem_ctx_t ctx, const char* call) {
    Runtime& rt = require_runtime(call);
    if (ctx == SHMEM_CTX_INVALID) fatal(call, "the context is SHMEM_CTX_INVALID (a failed shmem_ctx_create sets it)");
    auto* c = reinterpret_cast<coll::Context*>(ctx);
    if (g_state.checks && !rt.teams().live_context(c))
        fatal(call, "context handle {} is not a context of this PE (destroyed already, or its team was)",
              static_cast<void*>(ctx));
    return c;
}

int create(coll::Team* team, long options, shmem_ctx_t* ctx, const char* call) {
    if (!ctx) fatal(call, "ctx is NULL");
    *ctx = SHMEM_CTX_INVALID;
    if (!team || (options & ~kKnownOptions)) return 1;
    *ctx = reinterpret_cast<shmem_ctx_t>(g_runtime->teams().create_context(team, options));
    return 0;
}

// Completes the context's operations.
void complete(shmem_ctx_t ctx, const char* call) {
    rma::quiet_on(ctx == SHMEM_CTX_DEFAULT ? nullptr : context_of(ctx, call)->domain, call);
}

} // namespace

net::Domain* vkshmem::api::ctx_domain(vkshmem_ctx* handle, const char* call) {
    return context_of(handle, call)->domain;
}

int vkshmem::api::ctx_pe_slow(vkshmem_ctx* handle, int pe, const char* call) {
    coll::Context* c = context_of(handle, call);
    const coll::Team& t = *c->team;
    if (pe < 0 || pe >= t.size())
        fatal(call, "PE {} is not in the context's team, which has {} PEs (0..{})", pe, t.size(), t.size() - 1);
    return t.world(pe);
}

extern "C" {

int shmem_ctx_create(long options, shmem_ctx_t* ctx) noexcept {
    return create(&require_runtime("shmem_ctx_create").teams().world(), options, ctx, "shmem_ctx_create");
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t* ctx) noexcept {
    return create(api::team_of(team, "shmem_team_create_ctx"), options, ctx, "shmem_team_create_ctx");
}

void shmem_ctx_destroy(shmem_ctx_t ctx) noexcept {
    constexpr const char* call = "shmem_ctx_destroy";
    if (ctx == SHMEM_CTX_INVALID) return;
    if (ctx == SHMEM_CTX_DEFAULT) fatal(call, "SHMEM_CTX_DEFAULT lasts until shmem_finalize and cannot be destroyed");
    coll::Context* c = context_of(ctx, call);
    rma::quiet_on(c->domain, call); // a failure is reported here, naming the call
    g_runtime->teams().destroy_context(c);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t* team) noexcept {
    constexpr const char* call = "shmem_ctx_get_team";
    if (!team) fatal(call, "team is NULL");
    *team = SHMEM_TEAM_INVALID;
    if (ctx == SHMEM_CTX_INVALID) return 1;
    Runtime& rt = require_runtime(call);
    coll::Team* t = ctx == SHMEM_CTX_DEFAULT ? &rt.teams().world() : context_of(ctx, call)->team;
    *team = t == &rt.teams().world()    ? SHMEM_TEAM_WORLD
            : t == &rt.teams().shared() ? SHMEM_TEAM_SHARED
                                        : reinterpret_cast<shmem_team_t>(t);
    return 0;
}

// Sessions are hints: every operation here already completes or is ordered as it would be
// without one, so there is nothing to batch. What is checked is what would be a program error.
void shmem_ctx_session_start(shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t* config,
                             long config_mask) noexcept {
    constexpr const char* call = "shmem_ctx_session_start";
    if (ctx == SHMEM_CTX_INVALID) return;
    if (ctx != SHMEM_CTX_DEFAULT) context_of(ctx, call);
    if ((config_mask & SHMEM_CTX_SESSION_TOTAL_OPS) && !config)
        fatal(call, "config is NULL while config_mask names SHMEM_CTX_SESSION_TOTAL_OPS");
    if (options & ~SHMEM_CTX_SESSION_BATCH)
        VKSHMEM_WARN_ONCE("{}: ignoring unknown option bits {:#x}", call, options & ~SHMEM_CTX_SESSION_BATCH);
}
void shmem_ctx_session_stop(shmem_ctx_t ctx) noexcept {
    if (ctx != SHMEM_CTX_DEFAULT && ctx != SHMEM_CTX_INVALID) context_of(ctx, "shmem_ctx_session_stop");
}
void shmem_session_start(shmem_ctx_t ctx, long options, const shmem_session_config_t* config,
                         long config_mask) noexcept {
    shmem_ctx_session_start(ctx, options, config, config_mask);
}
void shmem_session_stop(shmem_ctx_t ctx) noexcept { shmem_ctx_session_stop(ctx); }

// On SHMEM_CTX_INVALID, fence, quiet and pe_quiet do nothing (OpenSHMEM 1.6 §9.5.1: a PE left out
// of a team gets an invalid context from shmem_team_create_ctx, and the specification's own example
// then calls them on it).
void shmem_ctx_fence(shmem_ctx_t ctx) noexcept {
    if (ctx == SHMEM_CTX_INVALID) return;
    constexpr const char* call = "shmem_ctx_fence";
    rma::fence_on(ctx == SHMEM_CTX_DEFAULT ? nullptr : context_of(ctx, call)->domain, call);
}
void shmem_ctx_quiet(shmem_ctx_t ctx) noexcept {
    if (ctx == SHMEM_CTX_INVALID) return;
    complete(ctx, "shmem_ctx_quiet");
}

void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int* target_pes, size_t npes) noexcept {
    constexpr const char* call = "shmem_ctx_pe_quiet";
    if (ctx == SHMEM_CTX_INVALID) return;
    if (npes && !target_pes) fatal(call, "target_pes is NULL with npes {}", npes);
    for (size_t i = 0; i < npes; ++i) api::ctx_pe(ctx, target_pes[i], call); // each must be in the team
    complete(ctx, call);
}

void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t* sig_addr, uint64_t signal, int pe) noexcept {
    api::InCtx in(ctx, "shmem_ctx_signal_add");
    shmem_signal_add(sig_addr, signal, api::ctx_pe(ctx, pe, "shmem_ctx_signal_add"));
}
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t* sig_addr, uint64_t signal, int pe) noexcept {
    api::InCtx in(ctx, "shmem_ctx_signal_set");
    shmem_signal_set(sig_addr, signal, api::ctx_pe(ctx, pe, "shmem_ctx_signal_set"));
}

} // extern "C"
