// SPDX-License-Identifier: BSL-1.0
// Queue-ordered operations (vkshmem/vulkan.h, vkshmemx_cmd_*): host operations recorded into the
// application's command buffer, executed in queue order with its own work. Each is one or a few
// dispatches of the internal kernels (vulkan/kernels/cmd.glsl) over the device library:
//   putmem, getmem                  one dispatch over the whole device (the library's route for
//                                    each byte); putmem_signal: then a quiet and the signal
//   signal_wait_until, quiet         a relayed wait (vulkan/cmd.hpp)
//   team_sync                        an arrival (adds to every member's sync counter), then a
//                                    relayed wait for this PE's counter; barrier_all: the arrival
//                                    completes this PE's proxy requests first
//   broadcast/fcollect/alltoallmem   sync, the data movement (completed) with this PE's arrival
//                                    at the next sync, its wait
//   reductions                       per chunk of half the team's scratch area (the half of the
//                                    sync's parity: no sync before): this PE's chunk into its slot
//                                    on every member with its arrival, the wait, the combine
// Recording never waits for the device or another PE; misuse ends the job with a message, as the
// host routines do.
#include "api/cmd.hpp"

#include "api/guard.hpp"
#include "api/team_handle.hpp"
#include "vulkan/cmd.hpp"

#include "vkshmem_abi.h"

using namespace vkshmem;

namespace {

struct Recorder {
    VkCommandBuffer cb;
    const char* call;
    CmdKernels& kernels;
    Proxy& proxy;

    void record(CmdOp op, CmdPush push, std::uint32_t groups = 1, bool f64 = false) {
        push.state = proxy.cmd_state_address();
        if (auto r = kernels.record(cb, op, groups, push, f64); !r) fatal(call, "{}", r.error().message);
    }
    // A team sync (the recorded form of vkshmem_arrive_wait_); a barrier's (quiet) completes this
    // PE's proxy requests first.
    void sync(std::uint64_t team, bool quiet = false) {
        CmdPush p;
        p.team = team;
        p.arg = quiet ? 1 : 0;
        record(CmdOp::Arrive, p);
        p.arg = 0;
        wait(CmdOp::WaitTeam, p);
    }
    // The movement of a collective (or a reduction's chunk), then this PE's arrival at the team's
    // next sync (made by the movement's last workgroup), then the wait for that sync.
    void move_sync(CmdPush move, std::uint32_t groups) {
        move.arg2 = 1;
        record(CmdOp::Move, move, groups);
        CmdPush p;
        p.team = move.team;
        wait(CmdOp::WaitTeam, p);
    }
    void quiet() { wait(CmdOp::WaitQuiet, CmdPush{}); }
    void wait(CmdOp op, CmdPush push) {
        push.state = proxy.cmd_state_address();
        if (auto r = kernels.record_wait(cb, op, push); !r) fatal(call, "{}", r.error().message);
    }
};

Recorder recorder(VkCommandBuffer cb, const char* call) {
    Runtime& rt = require_runtime(call);
    if (!rt.proxy()) fatal(call, "this PE runs without a Vulkan device ({})", rt.no_device_reason());
    if (cb == VK_NULL_HANDLE) fatal(call, "the command buffer is VK_NULL_HANDLE");
    return Recorder{cb, call, rt.cmd_kernels(), *rt.proxy()};
}

// The device address of `bytes` at symmetric address p of this PE.
std::uint64_t device_of(const void* p, std::size_t bytes, const char* what, const char* call) {
    const int s = space_of(p);
    if (s != kHostHeap && s != kDeviceHeap)
        fatal(call, "{} {} is not in a symmetric heap (recorded operations reach the heaps only)", what, p);
    const std::uintptr_t off = reinterpret_cast<std::uintptr_t>(p) - g_state.space[s].lo;
    if (bytes > g_state.space[s].size - off) fatal(call, "{} {} + {} bytes runs past its heap", what, p, bytes);
    return g_runtime->memory().device_address(g_state.my_pe, static_cast<Space>(s)) + off;
}

void check_pe(int pe, const char* call) {
    if (pe < 0 || pe >= g_state.n_pes) fatal(call, "PE {} does not exist (0..{})", pe, g_state.n_pes - 1);
}

// The team's record and this PE's index in it, for recorded collectives.
struct DeviceTeam {
    coll::Team* t;
    std::uint64_t record;
};
DeviceTeam device_team(shmem_team_t team, const char* call) {
    coll::Team* t = api::team_of(team, call);
    if (!t) fatal(call, "SHMEM_TEAM_INVALID, or a team this PE is not a member of");
    const std::uint64_t record = g_runtime->proxy()->team_address(t->slot);
    if (!record) fatal(call, "the team has no device record (an active set)");
    return {t, record};
}

// A put or get over the whole device; with `sig`, then a quiet and the signal (the data first).
void xfer(CmdOp op, VkCommandBuffer cb, void* dest, const void* source, std::size_t bytes, int pe, const char* call,
          std::uint64_t* sig = nullptr, std::uint64_t signal = 0, int sig_op = 0) {
    Recorder r = recorder(cb, call);
    check_pe(pe, call);
    CmdPush p;
    p.dest = device_of(dest, bytes, "dest", call);
    p.src = device_of(source, bytes, "source", call);
    p.bytes = bytes;
    p.pe = pe;
    if (bytes) r.record(op, p, r.kernels.bulk_groups(bytes));
    if (!sig) return;
    r.quiet();
    p.sig = device_of(sig, sizeof *sig, "sig_addr", call);
    p.value = signal;
    p.arg = static_cast<std::uint32_t>(sig_op);
    r.record(CmdOp::Signal, p);
}

// sync, the data movement of collective `kind` (VKSHMEM_COLL_*_ of vkshmem_coll.glsl), sync.
void collective(std::uint32_t kind, VkCommandBuffer cb, shmem_team_t team, void* dest, const void* source,
                std::size_t bytes, int root, const char* call) {
    Recorder r = recorder(cb, call);
    const DeviceTeam d = device_team(team, call);
    const std::size_t n = static_cast<std::size_t>(d.t->size());
    const bool bcast = kind == 0;
    if (bcast && (root < 0 || root >= d.t->size())) fatal(call, "PE_root {} is not a PE of the team (0..{})", root, n - 1);
    CmdPush p;
    p.team = d.record;
    p.dest = device_of(dest, bcast ? bytes : bytes * n, "dest", call) +
             (bcast ? 0 : static_cast<std::uint64_t>(d.t->me) * bytes);
    p.src = device_of(source, kind == 3 ? bytes * n : bytes, "source", call);
    p.bytes = bytes;
    p.pe = root;
    p.arg = kind;
    r.sync(d.record);
    if (bytes) r.move_sync(p, r.kernels.bulk_groups(bytes * (bcast ? 1 : n)));
    else r.sync(d.record);
}

} // namespace

void vkshmem::api::cmd_reduce(VkCommandBuffer cb, shmem_team_t team, void* dest, const void* source,
                              std::size_t nreduce, std::uint32_t kind, std::uint32_t op, const char* call) {
    Recorder r = recorder(cb, call);
    const DeviceTeam d = device_team(team, call);
    const std::size_t w = kind == VKSHMEM_RK_I64 || kind == VKSHMEM_RK_U64 || kind == VKSHMEM_RK_F64 ? 8 : 4;
    const std::uint64_t dst = device_of(dest, nreduce * w, "dest", call), src = device_of(source, nreduce * w, "source", call);
    const std::size_t members = static_cast<std::size_t>(d.t->size());
    // Chunks of half the team's scratch area (vkshmem_reduce.glsl): each is this PE's part into its
    // slot on every member then a sync (one dispatch and a wait), then the combine.
    const std::size_t chunk = (kDeviceCollSlotBytes - kDeviceCollCounterBytes) / 2 / members / w;
    if (!chunk) fatal(call, "a team of {} PEs is too large for the device reductions' scratch area", members);
    for (std::size_t first = 0; first < nreduce; first += chunk) {
        const std::size_t m = std::min(chunk, nreduce - first);
        CmdPush move;
        move.team = d.record;
        move.dest = static_cast<std::uint64_t>(d.t->me) * chunk * w; // in the half (cmd.glsl)
        move.src = src + first * w;
        move.bytes = m * w;
        move.arg = 4; // CMD_MOVE_REDUCE
        r.move_sync(move, r.kernels.bulk_groups(m * w * members));
        CmdPush comb;
        comb.team = d.record;
        comb.dest = dst + first * w;
        comb.bytes = m;
        comb.sig = chunk;
        comb.arg = kind;
        comb.arg2 = op;
        r.record(CmdOp::Combine, comb, 1, kind == VKSHMEM_RK_F64);
    }
}

extern "C" {

void vkshmemx_cmd_putmem(VkCommandBuffer cmd, void* dest, const void* source, size_t nelems, int pe) noexcept {
    xfer(CmdOp::Put, cmd, dest, source, nelems, pe, "vkshmemx_cmd_putmem");
}

void vkshmemx_cmd_getmem(VkCommandBuffer cmd, void* dest, const void* source, size_t nelems, int pe) noexcept {
    xfer(CmdOp::Get, cmd, dest, source, nelems, pe, "vkshmemx_cmd_getmem");
}

void vkshmemx_cmd_putmem_signal(VkCommandBuffer cmd, void* dest, const void* source, size_t nelems,
                                uint64_t* sig_addr, uint64_t signal, int sig_op, int pe) noexcept {
    constexpr const char* call = "vkshmemx_cmd_putmem_signal";
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        fatal(call, "sig_op {} is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
    xfer(CmdOp::Put, cmd, dest, source, nelems, pe, call, sig_addr, signal, sig_op);
}

void vkshmemx_cmd_signal_wait_until(VkCommandBuffer cmd, uint64_t* sig_addr, int cmp, uint64_t cmp_value) noexcept {
    constexpr const char* call = "vkshmemx_cmd_signal_wait_until";
    Recorder r = recorder(cmd, call);
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE) fatal(call, "cmp {} is no SHMEM_CMP_* comparison", cmp);
    CmdPush p;
    p.sig = device_of(sig_addr, sizeof *sig_addr, "sig_addr", call);
    p.value = cmp_value;
    p.arg = static_cast<std::uint32_t>(cmp);
    r.wait(CmdOp::WaitSignal, p);
}

void vkshmemx_cmd_quiet(VkCommandBuffer cmd) noexcept { recorder(cmd, "vkshmemx_cmd_quiet").quiet(); }

void vkshmemx_cmd_barrier_all(VkCommandBuffer cmd) noexcept {
    constexpr const char* call = "vkshmemx_cmd_barrier_all";
    Recorder r = recorder(cmd, call);
    r.sync(device_team(SHMEM_TEAM_WORLD, call).record, true);
}

void vkshmemx_cmd_team_sync(VkCommandBuffer cmd, shmem_team_t team) noexcept {
    constexpr const char* call = "vkshmemx_cmd_team_sync";
    Recorder r = recorder(cmd, call);
    r.sync(device_team(team, call).record);
}

void vkshmemx_cmd_broadcastmem(VkCommandBuffer cmd, shmem_team_t team, void* dest, const void* source, size_t nelems,
                               int PE_root) noexcept {
    collective(0, cmd, team, dest, source, nelems, PE_root, "vkshmemx_cmd_broadcastmem");
}

void vkshmemx_cmd_fcollectmem(VkCommandBuffer cmd, shmem_team_t team, void* dest, const void* source,
                              size_t nelems) noexcept {
    collective(2, cmd, team, dest, source, nelems, 0, "vkshmemx_cmd_fcollectmem");
}

void vkshmemx_cmd_alltoallmem(VkCommandBuffer cmd, shmem_team_t team, void* dest, const void* source,
                              size_t nelems) noexcept {
    collective(3, cmd, team, dest, source, nelems, 0, "vkshmemx_cmd_alltoallmem");
}

} // extern "C"
