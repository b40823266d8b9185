/* SPDX-License-Identifier: BSL-1.0 */
/*
 * vkshmem_abi.h — the records shared by the runtime (C++) and the device
 * library (GLSL, HLSL): the device state block, the peer table and the proxy
 * ring. Included by C++ and by GLSL; every field is 4 or 8 bytes, laid out as
 * std430 and as C without padding surprises (sizes are asserted in C++).
 *
 * All addresses are Vulkan buffer device addresses of the calling PE's device.
 */
#ifndef VKSHMEM_ABI_H
#define VKSHMEM_ABI_H

#define VKSHMEM_ABI_MAGIC 0x766b7368u /* "vksh" */
#define VKSHMEM_ABI_VERSION 10u

/* vkshmem_state.flags */
#define VKSHMEM_FLAG_FORCE_PROXY 1u /* VKSHMEM_FORCE_PROXY=1: every operation goes through the proxy */
/* This node's PEs use several GPUs: AMOs on host heaps go through the proxy (a GPU performs its
 * atomics on host memory in its own cache, so two GPUs' are not atomic with each other). */
#define VKSHMEM_FLAG_HOST_AMO_PROXY 2u

/* The device library's specialization constant (constant_id, a 4-byte VkBool32; default true):
 * whether it may use device-scope memory barriers (memoryBarrierBuffer, acquire/release atomics).
 * lavapipe (Mesa 22.3) cannot take them wherever the subgroups of a workgroup would execute them
 * different numbers of times (in a loop; it executes both sides of every `if`): each is a
 * coroutine switch there, and it silently stops running the subgroups that switched more than
 * the first one to finish. vkshmemx_kernel_create sets it to false for
 * VK_DRIVER_ID_MESA_LLVMPIPE; the library then orders with relaxed atomics, which the CPU's
 * memory order (x86 TSO) makes sufficient. -DVKSHMEM_DEVICE_FENCES=0/1 fixes it at compile time.
 * It has to be a specialization constant, not a flag in the state block: lavapipe runs both sides
 * of a branch (masked), so a barrier behind a runtime `if` still switches. */
#define VKSHMEM_SPEC_DEVICE_FENCES 2046 /* the highest id glslang accepts: out of the way of the application's ids */
/* The HLSL library's second one (a 4-byte uint; default VKSHMEM_HLSL_HEAP_BINDINGS): the highest heap
 * binding the descriptor set fills (vkshmemx_kernel_create sets it, except on lavapipe, whose shader
 * cache then serves every PE count). Every memory access of the library selects its binding by a
 * chain of tests, and the driver drops those beyond it: fewer PEs, faster first compiles. */
#define VKSHMEM_SPEC_HLSL_BINDINGS 2045

/* vkshmem_state.error: the first device-side error of a dispatch (0 = none).
 * The host reports it after the dispatch and clears it. */
#define VKSHMEM_ERR_NONE 0u
#define VKSHMEM_ERR_WAIT_TIMEOUT 1u   /* a bounded wait gave up; error_info = which wait */
#define VKSHMEM_ERR_BAD_PE 2u         /* error_info = the PE */
#define VKSHMEM_ERR_NOT_SYMMETRIC 3u  /* an address outside both heaps; error_info = low 32 bits */
#define VKSHMEM_ERR_PROXY_TIMEOUT 4u  /* the proxy did not answer within the bound */
#define VKSHMEM_ERR_TOO_LARGE 5u      /* one operation larger than the device library takes */
#define VKSHMEM_ERR_WG_SIZE 6u        /* a _wg routine saw a workgroup size other than the declared one */
#define VKSHMEM_ERR_BAD_TEAM 7u       /* a team handle that is no live team of this PE; error_info = low 32 bits */
#define VKSHMEM_ERR_COLL_BUSY 8u      /* a collective on a team that another invocation or workgroup of this PE
                                       * was running at the same time; error_info = the team's slot */
#define VKSHMEM_ERR_BAD_ROOT 9u       /* a broadcast root outside the team; error_info = the root */

/* Proxy request operations (vkshmem_request.op) */
#define VKSHMEM_OP_PUT 1u         /* payload -> target on pe */
#define VKSHMEM_OP_GET 2u         /* target on pe -> payload */
#define VKSHMEM_OP_AMO 3u         /* amo_op on target on pe; old value -> payload[0..7] */
#define VKSHMEM_OP_PUT_SIGNAL 4u  /* PUT, then signal_op of `operand` on `cond` (the signal address) */
#define VKSHMEM_OP_QUIET 5u       /* nothing: completes when every earlier request has */

/* amo_op values, in the runtime's AmoOp order */
#define VKSHMEM_AMO_FETCH 0u
#define VKSHMEM_AMO_SET 1u
#define VKSHMEM_AMO_SWAP 2u
#define VKSHMEM_AMO_COMPARE_SWAP 3u
#define VKSHMEM_AMO_ADD 4u
#define VKSHMEM_AMO_AND 5u
#define VKSHMEM_AMO_OR 6u
#define VKSHMEM_AMO_XOR 7u

/* The reduction core's element kinds and operations (shaders/vkshmem_coll.glsl; the typed
 * routines, the device library's and vkshmemx_cmd_TYPENAME_OP_reduce, pass them). */
#define VKSHMEM_RK_I32 0u
#define VKSHMEM_RK_U32 1u
#define VKSHMEM_RK_I64 2u
#define VKSHMEM_RK_U64 3u
#define VKSHMEM_RK_F32 4u
#define VKSHMEM_RK_F64 5u
#define VKSHMEM_RED_AND 0u
#define VKSHMEM_RED_OR 1u
#define VKSHMEM_RED_XOR 2u
#define VKSHMEM_RED_MIN 3u
#define VKSHMEM_RED_MAX 4u
#define VKSHMEM_RED_SUM 5u
#define VKSHMEM_RED_PROD 6u

/* Signal operations (put_signal) */
#define VKSHMEM_SIGNAL_SET 0u
#define VKSHMEM_SIGNAL_ADD 1u

/* The HLSL library's descriptor set (shaders/vkshmem.hlsl; GLSL uses device addresses instead):
 * binding 0 is the allocation that holds the state block (it starts at offset 0), the peer table,
 * the ring and the HLSL heap map; binding 1 (VKSHMEM_HLSL_ANSWERS_BINDING) what the proxy writes
 * for shaders: the allocation at vkshmem_ring_layout's completed_at when the ring has one
 * (completed at offset 0, the answers at answers - completed_at), else binding 0's again;
 * bindings 2 .. VKSHMEM_HLSL_HEAP_BINDINGS are heap segments; binding VKSHMEM_HLSL_MAILBOX_BINDING
 * this PE's AMO mailbox request (the copy after the device heap where there is one, whose `taken`
 * is the claim word) and VKSHMEM_HLSL_REPLY_BINDING its reply (binding 0's allocation when the
 * ring lists no mailbox); binding VKSHMEM_HLSL_HEAD_BINDING, read only, binding 0's head again in
 * device memory where the device has memory the host maps there: the state block, the peer table
 * and the ring layout at their offsets in binding 0 (offsets 0 .. the ring's requests), then the
 * heap map, which that copy's hlsl_map names; binding 0's allocation again where there is no copy.
 * (Every workgroup reads the head: in host memory those reads crossed the bus.)
 * glslang's HLSL front end cannot call methods on an element of an array of buffers, so every
 * segment has a binding of its own. */
#define VKSHMEM_HLSL_HEAP_BINDINGS 16u
#define VKSHMEM_HLSL_ANSWERS_BINDING 1u
#define VKSHMEM_HLSL_MAILBOX_BINDING 17 /* (no suffix: an HLSL [[vk::binding]] takes a plain literal) */
#define VKSHMEM_HLSL_REPLY_BINDING 18
#define VKSHMEM_HLSL_HEAD_BINDING 19
#define VKSHMEM_HLSL_NO_SLOT 0xffffffffu /* hlsl map entry of a heap without bindings */

/* A power of two. Its payload (RING_SLOTS * RING_PAYLOAD_BYTES) bounds what is in flight between
 * a PE's shaders and its proxy: a proxied bulk put moves about that much per completion round
 * trip of the proxy's device copies (tens of microseconds on an H100). */
#define VKSHMEM_RING_SLOTS 1024u
#define VKSHMEM_RING_PAYLOAD_BYTES 8192u /* per slot; larger puts and gets are split */
/* Where the ring has device memory for what the proxy writes (vkshmem_ring_layout's completed_at),
 * the shaders' own words are there too, at these offsets from completed_at: the head (a u32) and
 * the slots' answer flags (a u32 per slot) */
#define VKSHMEM_RING_HEAD_AT 64u
#define VKSHMEM_RING_BUSY_AT 128u
/* ... and, where vkshmem_ring_layout's local_mailboxes is 1, a copy of its mailbox entries (which
 * every waiting subgroup of the GLSL library reads at each poll) */
#define VKSHMEM_RING_MAILBOXES_AT 4352u

#ifdef __cplusplus
#include <cstdint>
namespace vkshmem::abi {
using u32 = std::uint32_t;
using i32 = std::int32_t;
using u64 = std::uint64_t;
#define VKSHMEM_ABI_STRUCT(name) struct name
#else /* GLSL and HLSL */
#define u32 uint
#define i32 int
#define u64 uint64_t
#define VKSHMEM_ABI_STRUCT(name) struct name
#endif

/*
 * The device state block (vkshmemx_device_state() gives its address).
 *   offset  0: magic, version, my_pe, n_pes
 *   offset 16: host_base, host_size      (this PE's host heap)
 *   offset 32: device_base, device_size  (this PE's device heap; 0 when none)
 *   offset 48: peers                     (vkshmem_peer[n_pes])
 *   offset 56: ring                      (vkshmem_ring)
 *   offset 64: flags, error, error_info, wait_polls
 *   offset 80: self                      (this block's own device address; in the device-local
 *                                         copy of the state, peer table and ring layout that
 *                                         vkshmemx_device_state() gives where the device has such
 *                                         memory, the host block's: shaders record errors there)
 *   offset 88: hlsl_seg_shift, hlsl_map  (the HLSL library's heap bindings, see below)
 *   offset 96: teams, team_stride, n_teams (the team records, vkshmem_team_layout)
 *   offset 112: relay (counts the workgroups of relayed waits that finished: vulkan/kernels/cmd.glsl)
 *   offset 120: teams_local (a copy of the team records in device-local memory, or 0; the GLSL
 *               library reads and updates a team's record there: teams_local + (handle - teams))
 * 128 bytes.
 *
 * HLSL heap bindings: every heap is cut in segments of 1 << hlsl_seg_shift bytes (the last one
 * shorter); hlsl_map is the byte offset from this block of u32[n_pes * 2], entry pe * 2 + space
 * (0 host, 1 device): the binding of that heap's first segment (its segment k is binding + k), or
 * VKSHMEM_HLSL_NO_SLOT when the heap has no bindings (not reachable directly, or no binding left:
 * the HLSL library then goes through the proxy).
 */
VKSHMEM_ABI_STRUCT(vkshmem_state_layout) {
    u32 magic;
    u32 version;
    i32 my_pe;
    i32 n_pes;
    u64 host_base;
    u64 host_size;
    u64 device_base;
    u64 device_size;
    u64 peers;
    u64 ring;
    u32 flags;
    u32 error;      /* written with atomicCompSwap(0, code): the first error wins */
    u32 error_info;
    u32 wait_polls; /* polls a bounded wait makes before it reports VKSHMEM_ERR_WAIT_TIMEOUT */
    u64 self;
    u32 hlsl_seg_shift;
    u32 hlsl_map;
    u64 teams;       /* device address of team slot 0's record; slot k's is teams + k * team_stride */
    u32 team_stride; /* bytes from one record to the next (the record, then its member table) */
    u32 n_teams;     /* slots: 0 is SHMEM_TEAM_WORLD, 1 SHMEM_TEAM_SHARED, the rest split teams */
    u32 relay;
    u32 pad0;
    u64 teams_local;
};

/*
 * A team as the device library sees it: one record per team slot of this PE (the slots of
 * src/coll/team.hpp), written by the host when a team is made or destroyed. A device team handle
 * (vkshmemx_team_device(), SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED in shaders) is the device
 * address of a record. 64 bytes, then the member table i32[size] (the world PE of each member).
 *   offset  0: live (VKSHMEM_TEAM_LIVE while the team exists), size, me (this PE's index), slot
 *   offset 16: sync     the team's sync counter on this PE (a symmetric uint64_t): low 32 bits count
 *                       arrivals (each member adds 1 per sync), high 32 bits this PE's own syncs
 *   offset 24: scratch  the team's scratch area on this PE (symmetric): sizes of collect, the
 *                       contributions of reductions (in the half of the area that the parity
 *                       of this PE's syncs so far names: shaders/vkshmem_reduce.glsl)
 *   offset 32: scratch_bytes, busy (0, or 1 while a collective of this PE runs on the team)
 *   offset 40: pes      device address of the member table
 *   offset 48: reserved0: for this PE's recorded team syncs (vulkan/kernels/cmd.glsl): the count
 *                       the wait waits for (low 32 bits) and this PE's syncs before it (high)
 *   offset 56: reserved1: the workgroups of a recorded movement that have finished their part
 */
#define VKSHMEM_TEAM_LIVE 0x7465616du /* "team" */
VKSHMEM_ABI_STRUCT(vkshmem_team_layout) {
    u32 live;
    i32 size;
    i32 me;
    i32 slot;
    u64 sync;
    u64 scratch;
    u32 scratch_bytes;
    u32 busy;
    u64 pes;
    u64 reserved0;
    u64 reserved1;
};

/* Where this device reaches PE p's heaps directly; 0: through the proxy.
 * 16 bytes per PE. */
VKSHMEM_ABI_STRUCT(vkshmem_peer_layout) {
    u64 host_base;
    u64 device_base;
};

/*
 * The proxy ring. A shader takes a ticket with atomicAdd(head, 1); its slot is
 * ticket % VKSHMEM_RING_SLOTS and it may use it once completed >= ticket -
 * VKSHMEM_RING_SLOTS + 1 (the slot's last occupant is done). It fills the
 * request (and the slot's payload for a put), then publishes it by storing
 * ticket + 1 into `ready` with release semantics. The proxy serves tickets in
 * order, writes the payload of a get or fetching AMO, then stores
 * completed = ticket + 1 (release). A shader's quiet waits for completed to
 * pass its last ticket.
 * What the proxy writes for the shaders (completed, answers) is also in device
 * memory the host can write (DEVICE_LOCAL|HOST_VISIBLE), where the device has
 * such memory: on NVIDIA (driver 580) a running shader does not see a host
 * write to host memory until the line leaves its GPU's cache (about 13 ms
 * measured), but sees host writes to that memory at once. Shaders read
 * `completed` at completed_at and answers at answers (slot i at answers + i *
 * payload_bytes) when those are not 0, else the fields above. Where completed_at
 * is not 0, shaders also keep the head and the slots' answer flags (a request's
 * reserved0, below) in that memory, at completed_at + VKSHMEM_RING_HEAD_AT and
 * completed_at + VKSHMEM_RING_BUSY_AT + 4 * slot: the proxy never reads them, and
 * a shader's atomics and polls on host memory each cross the bus (several
 * microseconds per ticket, with thousands of subgroups contending for them).
 *   offset 0: head, completed, slots, payload_bytes
 *   offset 16: requests (vkshmem_request[slots]), payload (slots * payload_bytes)
 *   offset 32: completed_at (a u32), answers (slots * payload_bytes)
 *   offset 48: mailboxes (vkshmem_mailbox_entry[n_mailboxes]: the AMO mailboxes that this
 *              device's library kernels carry out, this PE's first, then those of the PEs that
 *              share this GPU and its device heaps), n_mailboxes (0: none),
 *              local_mailboxes (1: the entries are also at completed_at +
 *              VKSHMEM_RING_MAILBOXES_AT, in device memory)
 * 64 bytes.
 */
VKSHMEM_ABI_STRUCT(vkshmem_ring_layout) {
    u32 head;
    u32 completed;
    u32 slots;
    u32 payload_bytes;
    u64 requests;
    u64 payload;
    u64 completed_at;
    u64 answers;
    u64 mailboxes;
    u32 n_mailboxes;
    u32 local_mailboxes;
};

/*
 * A PE's AMO mailbox (vkshmem_mailbox.glsl): device atomics its host asks for, one at a time.
 * The request is in memory where running kernels see the host's writes: DEVICE_LOCAL|HOST_VISIBLE
 * memory of the PE's own (the BAR on a GPU), written by CPU stores. Where PEs share a GPU and its
 * device heaps, a copy of it is also in the page after the PE's device heap (which the others
 * import), written by a copy on the transfer queue, which runs beside other processes' kernels,
 * and the claim word is that copy's `taken`. The host writes target_pe .. cond, then posted =
 * its sequence number. The first of the PE's sweeper kernel and the waiting library kernels on
 * that GPU to move the claim word from posted - 1 to posted carries it out on `target` (the
 * poster's own device address, for the poster's kernels and sweeper) or, in another PE's kernel,
 * at target_off in target_pe's device heap; then it stores result, then done = posted, in the
 * reply: host memory the poster's host reads (the BAR allocation again, or the poster's host
 * heap), with plain stores, which reach the host during the dispatch (a GPU's atomics on host
 * memory stay in its cache).
 *   request  0: posted, taken, target_pe, op_width (amo_op | width << 8)   16: target, target_off
 *           32: operand, cond
 *   reply    0: done, pad   8: result
 */
VKSHMEM_ABI_STRUCT(vkshmem_mailbox_layout) {
    u32 posted;
    u32 taken;
    i32 target_pe;
    u32 op_width;
    u64 target;
    u64 target_off;
    u64 operand;
    u64 cond;
};
VKSHMEM_ABI_STRUCT(vkshmem_mailbox_reply) {
    u32 done;
    u32 pad;
    u64 result;
};
/* Where a kernel finds one mailbox (device addresses): its request, its claim word (the `taken`
 * of the request or of its copy after the device heap), its reply, and the PE whose it is (the
 * HLSL library finds the others by its bindings: the request after its device heap, the reply in
 * its host heap). */
VKSHMEM_ABI_STRUCT(vkshmem_mailbox_entry) {
    u64 request;
    u64 claim;
    u64 reply;
    i32 pe;
    u32 pad0;
};

/*
 * One request, 64 bytes:
 *   0: ready (ticket + 1 once published), op, pe, bytes
 *   16: target (device address of the symmetric object on the calling PE)
 *   24: operand (AMO operand; PUT_SIGNAL: the signal value)
 *   32: cond (AMO compare value; PUT_SIGNAL: the signal's symmetric address)
 *   40: amo_op (AMO) or signal_op (PUT_SIGNAL), width (AMO: 4 or 8)
 *   48: reserved0: its low 32 bits belong to the device library (the proxy ignores them): 1 while
 *       the sender still has to read an answer from the payload (a get or AMO it waits for); the
 *       slot is reused only once they are 0 again, besides completed > ticket. (The answer flag
 *       is here only where the ring has no completed_at; see vkshmem_ring_layout.)
 *   56..63: reserved
 */
VKSHMEM_ABI_STRUCT(vkshmem_request_layout) {
    u32 ready;
    u32 op;
    i32 pe;
    u32 bytes;
    u64 target;
    u64 operand;
    u64 cond;
    u32 amo_op;
    u32 width;
    u64 reserved0;
    u64 reserved1;
};

#ifdef __cplusplus
static_assert(sizeof(vkshmem_state_layout) == 128);
static_assert(sizeof(vkshmem_team_layout) == 64);
static_assert(sizeof(vkshmem_peer_layout) == 16);
static_assert(sizeof(vkshmem_ring_layout) == 64);
static_assert(sizeof(vkshmem_mailbox_layout) == 48);
static_assert(sizeof(vkshmem_mailbox_reply) == 16);
static_assert(sizeof(vkshmem_mailbox_entry) == 32);
static_assert(sizeof(vkshmem_request_layout) == 64);
} /* namespace vkshmem::abi */
#else
#undef u32
#undef i32
#undef u64
#endif
#undef VKSHMEM_ABI_STRUCT

#endif /* VKSHMEM_ABI_H */
