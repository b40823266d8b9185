// SPDX-License-Identifier: BSL-1.0
// The runtime's own symmetric state at the start of every host heap, below
// what shmem_malloc hands out. Every node-local peer maps every host heap, so
// this is where PEs signal each other: barrier flags, and the active messages
// by which a PE reaches a peer's memory that only the peer itself can reach
// (a device heap on another GPU: DESIGN §6, src/rma/am.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace vkshmem {

// One active message: an operation on the receiving PE's memory, filled in by
// the sender in a slot of the receiver's inbox.
//   state    round * 2 while the slot is free for the ticket of that round
//            (round = ticket / kAmSlots), round * 2 + 1 once it is published
//   op       AmOp
//   space    Space of the target (in the receiver's memory)
//   width    AMO width in bytes (4 or 8)
//   amo_op   rma::detail::AmoOp
//   from     sending PE; channel: which of its AmChannels waits for the reply
//   offset   target offset in `space`; bytes: length of a put or get (of a
//            PutList or GetList: of its list)
//   local    offset in the sender's host heap of a put's data or a get's
//            destination (its staging area, or the caller's own buffer there;
//            of a PutList or GetList: of its list)
//   operand, cond   AMO operands; seq: echoed into the reply
struct alignas(64) AmSlot {
    std::uint64_t state;
    std::uint8_t op, space, width, amo_op;
    std::int32_t from;
    std::uint64_t offset, bytes, local, operand, cond;
    std::uint32_t seq;
    std::uint8_t channel;
};
static_assert(sizeof(AmSlot) == 64, "one active message is one cache line");

enum class AmOp : std::uint8_t { Put = 1, Get = 2, Amo = 3, PutList = 4, GetList = 5 };

// One put of a PutList message: `bytes` from offset `local` of the sender's host heap to offset
// `offset` of the message's space; of a GetList, one get the other way. The list lies in the
// sender's host heap at the message's `local`, `bytes` long; the owner carries out its puts in
// order, by device copies in one submission where they are more than BAR stores (or loads) should
// carry (VKSHMEM_BAR_PUT_MAX, VKSHMEM_BAR_GET_MAX).
struct AmPiece {
    std::uint64_t offset, local, bytes;
};

constexpr std::uint32_t kAmSlots = 64;

// The inbox every PE's proxy thread serves; any node-local peer sends.
struct alignas(64) AmInbox {
    std::uint64_t tail; // the next ticket a sender takes
    alignas(64) std::uint32_t doorbell; // futex word the idle proxy thread sleeps on
    std::uint32_t sleeping;             // the proxy thread is (about to be) asleep
    alignas(64) AmSlot slots[kAmSlots];
};

// Where a sender waits for its reply. Channel 0 is shared by the
// application's threads (one at a time); channel 1 belongs to the proxy thread,
// which forwards its shaders' requests and must never wait for them.
struct alignas(64) AmChannel {
    std::uint32_t done; // seq of the last message answered
    std::uint32_t pad;
    std::uint64_t value; // an AMO's old value
};
constexpr int kAmChannels = 2;

struct alignas(64) InternalArea {
    AmInbox inbox;
    AmChannel channel[kAmChannels];
    // The reply half of this PE's AMO mailbox where the PEs on its GPU share
    // it (vkshmem_mailbox_reply in shaders/vkshmem_abi.h): kernels store the
    // result here, which the host sees during their dispatch. Aligned for a
    // storage-buffer descriptor (the HLSL library binds it).
    alignas(256) std::uint64_t amo_reply[2];
};

// After the InternalArea, each channel's staging area: the data of a message
// whose local buffer is not in the sender's host heap passes through it.
constexpr std::size_t kAmStagingAt = 64 * 1024;
constexpr std::size_t kAmStagingBytes = 512 * 1024;
static_assert(sizeof(InternalArea) <= kAmStagingAt);

// After the staging areas, the flags of each team slot (src/coll/team.hpp).
// Slot 0 is SHMEM_TEAM_WORLD's, 1 SHMEM_TEAM_SHARED's.
constexpr std::size_t kTeamAreaAt = kAmStagingAt + kAmChannels * kAmStagingBytes;
constexpr int kMaxTeams = 64;
constexpr std::size_t kTeamFlagBytes = 128 * 64;
// The runtime's part of the host heap, below what shmem_malloc hands out.
constexpr std::size_t kInternalReserve = kTeamAreaAt + kMaxTeams * kTeamFlagBytes;
static_assert(kInternalReserve == 1600 * 1024, "docs/architecture.md states this size: change it there too");

// The device collectives' area (shaders/vkshmem_coll.glsl): one block per team slot holding the
// team's sync counter (first kDeviceCollCounterBytes, zeroed whenever the slot is given back) and
// its scratch area. At the start of the device heap, where device-side waits see other PEs'
// updates soonest (a GPU sees host writes to host memory late: DESIGN §1), when the device heap
// (VKSHMEM_DEVICE_HEAP_SIZE) has kDeviceCollMinHeap bytes; otherwise after the internal area of
// the host heap, which then grows by as much. The choice depends on configuration only, so every
// PE makes the same one and offsets stay symmetric.
constexpr std::size_t kDeviceCollSlotBytes = 16 * 1024;
constexpr std::size_t kDeviceCollCounterBytes = 256;
constexpr std::size_t kDeviceCollBytes = kMaxTeams * kDeviceCollSlotBytes;
constexpr std::size_t kDeviceCollMinHeap = 4 * kDeviceCollBytes;

// The host heap's base is aligned to min(this, its size rounded up to a power
// of two): the largest alignment shmem_align can honour.
constexpr std::size_t kMaxHeapAlign = std::size_t(1) << 30;

} // namespace vkshmem
