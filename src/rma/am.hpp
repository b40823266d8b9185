// SPDX-License-Identifier: BSL-1.0
// Active messages (DESIGN §6): how a PE reaches memory of a node-local peer
// that only the peer's own process can reach — a device heap on another GPU,
// one that is not exported, or any peer's device heap when
// VKSHMEM_SHARE_DEVICE_HEAPS=0 (route Proxy).
//
// The sender writes a message into the peer's inbox (in the peer's host heap,
// which every node-local PE maps) and waits; the peer's proxy thread carries
// it out on its own memory and writes the reply into the sender's host heap.
// Data never passes through a socket: the receiver reads a put's bytes from,
// and writes a get's bytes to, the sender's host heap — the caller's own
// buffer when it lies there, otherwise the sender's staging area — with a
// device copy where its device imports that heap. Every message is complete
// when its send returns. Only non-blocking puts and gets wait, in a queue per
// channel (queue_put, queue_get), which quiet and fence send as one PutList or
// GetList message, as every other message on the channel does before it goes.
//
// A peer whose host heap is reached through the network transport (another
// node) gets the same messages through it: the sender takes a ticket with a
// network atomic, writes the slot and publishes it with network puts; the
// receiver reads and writes the sender's data with network gets and puts and
// answers with network puts into the sender's reply channel. So a GPU's
// device heap on another node is reached through its owner's proxy.
#pragma once

#include "core/state.hpp"
#include "memory/internal_area.hpp"
#include "vulkan/device.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace vkshmem {
class SymmetricMemory;
} // namespace vkshmem

namespace vkshmem::am {

class Inbox;

// Non-blocking puts into memory that only its owner reaches (route Proxy), of the application's
// threads and of the proxy thread (its shaders' puts), each on its channel: queued for one PE and
// space at a time and sent as one PutList message at the next quiet or fence, before any other
// message on the channel, or when the queue is full. The owner reads the bytes from the caller's
// buffer where it lies in this PE's host heap (`in_heap`: its offset there; the proxy's ring lies
// there), else from a copy in the staging area. False where the put is not queued, and the caller
// then sends it at once: a peer reached over the network, a copy larger than the staging area.
bool queue_put(int pe, int space, std::uint64_t offset, const void* src, std::size_t n,
               std::optional<std::uint64_t> in_heap);
// The same for non-blocking gets of the application's threads (a queue holds puts or gets, and
// sends the one before it takes the other): sent as one GetList message. The owner writes the
// bytes into `dst` where it lies in this PE's host heap (`in_heap`), else into the staging area,
// from where the sender copies them on into `dst` once the list is done: dst holds them only then.
bool queue_get(int pe, int space, std::uint64_t offset, void* dst, std::size_t n, std::optional<std::uint64_t> in_heap);
// Sends the calling thread's channel's queued puts or gets and waits until the owner has carried
// them out (and the lists post_queue sent before).
void flush_queue();
// The proxy thread only: sends its queued puts as one PutList without waiting for the owner, and
// returns the list's number for list_done, so that the thread serves its ring while the owner
// copies. At most kPostedLists are out: another waits for the oldest first. Where the queue cannot
// be posted (gets, bytes staged, lists to another PE out) it is sent and waited for, and the
// result is empty, as it is for an empty queue: the lists out are then done too.
std::optional<std::uint32_t> post_queue();
constexpr int kPostedLists = 3;
// Whether the owner has carried out posted list `seq` (and every one before it); with `wait`,
// waits for that first.
bool list_done(std::uint32_t seq, bool wait);
// Whether the calling thread is this PE's proxy thread.
bool on_proxy_thread();
// The bytes and pieces (after joining those that continue each other) the proxy thread's channel
// has queued (its flush policy: proxy.cpp), and how many puts or gets it queued so far.
std::size_t queued_bytes();
std::size_t queued_pieces();
std::uint64_t queued_count();

// One sender: holds a channel of this PE for its lifetime. The proxy thread
// has its own channel (and serves its inbox while it waits, so two proxies
// sending to each other cannot deadlock); the application's threads share the
// other one, one at a time.
class Sender {
public:
    Sender();
    ~Sender() = default;
    Sender(const Sender&) = delete;
    Sender& operator=(const Sender&) = delete;

    // kAmStagingBytes in this PE's host heap, and their offset there.
    char* staging() const;
    std::uint64_t staging_offset() const;

    // Each returns once `pe` has carried it out. `local` is an offset in this
    // PE's host heap (staging_offset() or the caller's own buffer).
    void put(int pe, int space, std::uint64_t offset, std::uint64_t local, std::size_t n) {
        transfer(AmOp::Put, pe, space, offset, local, n);
    }
    void get(int pe, int space, std::uint64_t offset, std::uint64_t local, std::size_t n) {
        transfer(AmOp::Get, pe, space, offset, local, n);
    }
    std::uint64_t amo(int pe, int space, std::uint64_t offset, unsigned op, unsigned width, std::uint64_t operand,
                      std::uint64_t cond);

    // The queued puts or gets (queue_put, queue_get) as one PutList or GetList, if there are any:
    // before the staging area takes other bytes (send() sends them before any other message by
    // itself).
    void send_queue();
    // post_queue and list_done (the proxy thread's channel).
    std::optional<std::uint32_t> post_queue();
    bool list_done(std::uint32_t seq, bool wait);

private:
    friend bool queue_put(int, int, std::uint64_t, const void*, std::size_t, std::optional<std::uint64_t>);
    friend bool queue_get(int, int, std::uint64_t, void*, std::size_t, std::optional<std::uint64_t>);
    // Queues one put or get: false where it cannot be queued (queue_put).
    bool queue(bool get, int pe, int space, std::uint64_t offset, void* buf, std::size_t n,
               std::optional<std::uint64_t> in_heap);
    void transfer(AmOp op, int pe, int space, std::uint64_t offset, std::uint64_t local, std::size_t n);
    // Returns once `pe` answered, or at once with `!wait` (a posted list); every other message
    // first waits for the posted lists' answers, which share its reply channel.
    void send(int pe, AmSlot& m, bool wait = true);
    int channel_;
    Inbox* serving_; // the calling thread's own inbox (proxy thread), else null
    std::unique_lock<std::mutex> lock_;
};

// This PE's inbox; its proxy thread is the one reader.
class Inbox {
public:
    Inbox(VulkanDevice& dev, SymmetricMemory& mem) : dev_(dev), mem_(mem) {}
    // Carries out every message published so far; true if there was any.
    bool serve();
    // Sleeps up to `us` microseconds or until a message or wake() arrives
    // (not one sent over the network: those are found when it wakes); not at
    // all when `busy` is already nonzero (the waker raises it before wake()).
    // Up to `long_us` instead while `soon` is false, read after the doorbell,
    // so that a wake() after setting it is not missed.
    void sleep(int us, const std::atomic<int>& busy, const std::atomic<bool>& soon, int long_us);
    // Wakes the thread in sleep() (any thread; cheap when none sleeps).
    void wake();
    // Makes the calling thread this inbox's server (Sender uses its channel).
    void bind_thread();
    // Lists of puts whose copies still run (serve answers them once they are done), and answering
    // them now, after waiting for their copies with `wait`: true if any was answered.
    bool answering() const { return !pending_.empty(); }
    bool answer_lists(bool wait);

private:
    std::uint64_t execute(const AmSlot& m);
    // The two ends of a device copy of `bytes` between this PE's `space` and PE `from`'s host heap
    // (into `space`: `put`), or nulls where CPU accesses carry them.
    std::pair<const DeviceMemory*, const DeviceMemory*> copy_ends(int space, int from, bool put,
                                                                  std::uint64_t bytes) const;
    // A large put or get between a device heap of this PE and the sender's
    // host heap as one device copy; false where there is none to make.
    bool device_copy(const AmSlot& m);
    // A PutList or GetList message's puts or gets (AmPiece): the copy batch the answer of a
    // PutList waits for, or 0 where it is carried out.
    std::uint64_t list(const AmSlot& m);
    void answer(int from, int channel, std::uint32_t seq, std::uint64_t value);
    struct Pending {
        int from, channel;
        std::uint32_t seq;
        std::uint64_t batch;
    };
    std::deque<Pending> pending_; // oldest first
    std::uint64_t list_batch_ = 0; // execute's list(), for serve
    VulkanDevice& dev_;
    SymmetricMemory& mem_;
    std::uint64_t next_ = 0;           // the next ticket to serve
    std::vector<unsigned char> bounce_; // data of messages from PEs reached over the network
    std::unique_ptr<VulkanDevice::CopyStream> stream_; // a list's copies (made at the first)
};

} // namespace vkshmem::am
