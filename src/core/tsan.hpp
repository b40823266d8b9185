// SPDX-License-Identifier: BSL-1.0
// Synchronization that ThreadSanitizer cannot see. PEs order each other through memory that
// several processes map (barrier flags, signals, active-message slots): a thread of this process
// writes, another process acts on it, and then another thread of this process (the proxy
// thread serving that PE's message, or the application thread after a barrier) touches the same
// bytes. ThreadSanitizer sees only this process, so it reports those accesses as races. Under it,
// every data-path operation releases and every observation of another PE acquires one
// process-wide token, which tells it that such accesses are ordered. Nothing otherwise.
#pragma once

#if defined(__SANITIZE_THREAD__)
#include <sanitizer/tsan_interface.h>
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
#endif

namespace vkshmem {

#if defined(__SANITIZE_THREAD__)
inline char g_cross_process_token;
// Before an operation other PEs may act upon (a put, an atomic, a signal, an answer).
inline void cross_process_release() { __tsan_release(&g_cross_process_token); }
// After observing what other PEs did (a wait that ended, a message to serve, data read).
inline void cross_process_acquire() { __tsan_acquire(&g_cross_process_token); }
#else
inline void cross_process_release() {}
inline void cross_process_acquire() {}
#endif

// Around what a thread of this process carries out for other PEs: a transport's progress (the
// puts and atomics of remote PEs over tcp, executed by whichever thread progresses) and the proxy
// serving an active message. Those are the other PEs' accesses, ordered by them across processes;
// ThreadSanitizer, which would pair them with this process's threads (a put into a variable that
// the application thread polls with shmem_wait_until), ignores them, and their results are
// released to the threads that observe the PEs afterwards. Nothing outside sanitizer builds.
class ForPeers {
public:
#if defined(__SANITIZE_THREAD__)
    ForPeers() { __tsan_ignore_thread_begin(); }
    ~ForPeers() {
        __tsan_ignore_thread_end();
        cross_process_release();
    }
#else
    ForPeers() = default;
#endif
    ForPeers(const ForPeers&) = delete;
    ForPeers& operator=(const ForPeers&) = delete;
};

} // namespace vkshmem
