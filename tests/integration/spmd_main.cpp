// SPDX-License-Identifier: BSL-1.0
// The SPMD Catch2 main: shmem_init, a job-wide seed, the session, shmem_finalize.
//
// A listener turns any failed assertion or unexpected exception on any PE into a message naming
// the PE, then shmem_global_exit(1): the job ends at once instead of the other PEs waiting for
// the failed one in a barrier. Catch's own console output is kept on PE 0 only (SPMD_VERBOSE=1
// keeps it on every PE); failures are printed by the listener on the PE that saw them.
//
// Catch's own signal handling is off: it would report the SIGTERM with which the launcher ends
// the other PEs after a failure as a failure of its own on every PE. A small handler of ours
// names the test case a PE crashed in, then hands the signal on to whatever handled it before
// (the runtime's cleanup, or the default action).
#define CATCH_CONFIG_RUNNER
#define CATCH_CONFIG_NO_POSIX_SIGNALS
#include "spmd.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

namespace spmd {
namespace {

int g_me = -1;
int g_npes = -1;
std::uint64_t g_seed = 0;
unsigned char g_poison = 0xa5;
std::mt19937_64 g_rng;
std::mt19937_64 g_shared_rng;

// The static symmetric space: a file-scope array in the program's data segment (.bss).
constexpr std::size_t kStaticPoolBytes = std::size_t{8} << 20;
alignas(4096) unsigned char g_static_pool[kStaticPoolBytes];
std::vector<std::size_t> g_static_stack; // start offsets of live static allocations, in order
std::size_t g_static_top = 0;

std::uint64_t pick_seed() {
    if (const char* env = std::getenv("VKSHMEM_TEST_SEED"); env && *env) {
        char* end = nullptr;
        std::uint64_t s = std::strtoull(env, &end, 0);
        if (end == env || *end != '\0') {
            std::fprintf(stderr, "[spmd] PE %d: VKSHMEM_TEST_SEED='%s' is not a number\n", g_me, env);
            shmem_global_exit(2);
        }
        return s;
    }
    // PE 0 draws the seed and every PE reads it from PE 0, so the printed seed replays the job.
    auto* cell = static_cast<std::uint64_t*>(shmem_malloc(sizeof(std::uint64_t)));
    if (!cell) {
        std::fprintf(stderr, "[spmd] PE %d: shmem_malloc(8) for the seed returned NULL\n", g_me);
        shmem_global_exit(2);
    }
    std::uint64_t s = 0;
    if (g_me == 0) {
        std::random_device rd;
        s = (std::uint64_t{rd()} << 32) ^ rd() ^
            static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
        *cell = s;
    }
    shmem_barrier_all();
    if (g_me != 0) shmem_getmem(&s, cell, sizeof s, 0);
    shmem_barrier_all();
    shmem_free(cell);
    return s;
}

// Each PE's host name (a hash of it), gathered once: which PEs share this PE's node.
std::vector<std::uint64_t> g_node_of;

void gather_nodes() {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    std::uint64_t h = 1469598103934665603ull; // FNV-1a
    for (const char* c = name; *c; ++c) h = (h ^ static_cast<unsigned char>(*c)) * 1099511628211ull;
    g_node_of = gather(h);
}

} // namespace

std::vector<std::uint64_t> gather(std::uint64_t mine) {
    auto* all = static_cast<std::uint64_t*>(shmem_malloc(sizeof(std::uint64_t) * static_cast<std::size_t>(g_npes)));
    if (!all) {
        std::fprintf(stderr, "[spmd] PE %d: shmem_malloc for a gather returned NULL\n", g_me);
        shmem_global_exit(2);
    }
    for (int pe = 0; pe < g_npes; ++pe) shmem_uint64_p(all + g_me, mine, pe);
    shmem_barrier_all();
    std::vector<std::uint64_t> v(all, all + g_npes); // this PE's own host heap: plain memory
    shmem_barrier_all();
    shmem_free(all);
    return v;
}

bool same_node(int pe) { return g_node_of[static_cast<std::size_t>(pe)] == g_node_of[static_cast<std::size_t>(g_me)]; }
int me() { return g_me; }
int npes() { return g_npes; }
std::uint64_t seed() { return g_seed; }
std::mt19937_64& rng() { return g_rng; }
std::mt19937_64& shared_rng() { return g_shared_rng; }
unsigned char poison_byte() { return g_poison; }

InitConfig& init_config() {
    static InitConfig cfg;
    return cfg;
}

std::string diff_bytes(const void* actual, const void* expected, std::size_t n, std::size_t base) {
    const auto* a = static_cast<const unsigned char*>(actual);
    const auto* e = static_cast<const unsigned char*>(expected);
    if (n == 0 || std::memcmp(a, e, n) == 0) return {}; // an empty vector's data() may be null
    std::size_t first = 0, count = 0;
    for (std::size_t i = n; i-- > 0;) {
        if (a[i] != e[i]) {
            first = i;
            ++count;
        }
    }
    char buf[200];
    std::snprintf(buf, sizeof buf, "byte %zu: got 0x%02x, expected 0x%02x (%zu of %zu bytes differ)", base + first,
                  a[first], e[first], count, n);
    return buf;
}

std::string check_poison(const void* buf, std::size_t from, std::size_t to, unsigned char pattern) {
    const auto* p = static_cast<const unsigned char*>(buf);
    for (std::size_t i = from; i < to; ++i) {
        if (p[i] != pattern) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "byte %zu outside the written range was changed: 0x%02x, poison 0x%02x", i,
                          p[i], pattern);
            return msg;
        }
    }
    return {};
}

bool cpu_inaccessible(const void* obj) { return shmemx_addr_space(obj) == SHMEMX_SPACE_DEVICE; }

void local_store(void* obj, const void* src, std::size_t bytes) {
    if (bytes == 0) return;
    if (cpu_inaccessible(obj)) {
        shmem_putmem(obj, src, bytes, g_me);
        shmem_quiet();
    } else {
        std::memcpy(obj, src, bytes);
    }
}

void local_load(void* dst, const void* obj, std::size_t bytes) {
    if (bytes == 0) return;
    if (cpu_inaccessible(obj)) shmem_getmem(dst, obj, bytes, g_me);
    else std::memcpy(dst, obj, bytes);
}

void local_fill(void* obj, unsigned char byte, std::size_t bytes) {
    if (bytes == 0) return;
    if (cpu_inaccessible(obj)) {
        const std::vector<unsigned char> src(bytes, byte);
        local_store(obj, src.data(), bytes);
    } else {
        std::memset(obj, byte, bytes);
    }
}

std::vector<unsigned char> local_bytes(const void* obj, std::size_t bytes) {
    std::vector<unsigned char> v(bytes);
    local_load(v.data(), obj, bytes);
    return v;
}

void local_fill_bytes(void* obj, std::size_t n, Gen g) {
    std::vector<unsigned char> v(n);
    fill_bytes(v.data(), n, g);
    local_store(obj, v.data(), n);
}

std::string diff_sym(const void* obj, const void* expected, std::size_t n, std::size_t base) {
    return diff_bytes(local_bytes(obj, n).data(), expected, n, base);
}

std::string check_poison_sym(const void* obj, std::size_t from, std::size_t to, unsigned char pattern) {
    if (to <= from) return {};
    const std::vector<unsigned char> v = local_bytes(static_cast<const unsigned char*>(obj) + from, to - from);
    for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != pattern) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "byte %zu outside the written range was changed: 0x%02x, poison 0x%02x",
                          from + i, v[i], pattern);
            return msg;
        }
    }
    return {};
}

const char* name(Space s) {
    switch (s) {
    case Space::Host: return "host heap (shmem_malloc)";
    case Space::Device: return "device heap (SHMEMX_MALLOC_DEVICE)";
    case Space::Static: return "static (data segment)";
    }
    return "?";
}

int expected_addr_space(Space s) {
    switch (s) {
    case Space::Host: return SHMEMX_SPACE_HOST;
    case Space::Device: return SHMEMX_SPACE_DEVICE;
    case Space::Static: return SHMEMX_SPACE_STATIC;
    }
    return SHMEMX_SPACE_NONE;
}

void* sym_alloc(Space s, std::size_t bytes, std::size_t align) {
    switch (s) {
    case Space::Host: return align <= 16 ? shmem_malloc(bytes) : shmem_align(align, bytes);
    // The device heap has no aligned form; its objects are aligned for any type.
    case Space::Device: return shmem_malloc_with_hints(bytes, SHMEMX_MALLOC_DEVICE);
    case Space::Static: {
        std::size_t start = (g_static_top + align - 1) / align * align;
        if (start + bytes > kStaticPoolBytes) return nullptr;
        g_static_stack.push_back(g_static_top);
        g_static_top = start + bytes;
        shmem_barrier_all();
        return g_static_pool + start;
    }
    }
    return nullptr;
}

void sym_free(Space s, void* p) {
    switch (s) {
    case Space::Host:
    case Space::Device: shmem_free(p); return;
    case Space::Static:
        if (!p) return;
        shmem_barrier_all();
        REQUIRE(!g_static_stack.empty());
        REQUIRE(static_cast<unsigned char*>(p) >= g_static_pool + g_static_stack.back());
        g_static_top = g_static_stack.back();
        g_static_stack.pop_back();
        return;
    }
}

} // namespace spmd

namespace {

// ---- Crash reports --------------------------------------------------------------------------
char g_crash_prefix[128];     // "[spmd] PE n of N: fatal signal "
char g_current_test[256] = "(none: outside any test case)";
constexpr int kCrashSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction g_previous[sizeof kCrashSignals / sizeof kCrashSignals[0]];

void write_str(const char* s) {
    std::size_t n = std::strlen(s);
    while (n > 0) {
        ssize_t w = ::write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= static_cast<std::size_t>(w);
    }
}

void on_crash(int sig) {
    // Only async-signal-safe calls here.
    write_str(g_crash_prefix);
    write_str(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : "SIGABRT");
    write_str(" in test case \"");
    write_str(g_current_test);
    write_str("\"\n");
    for (std::size_t i = 0; i < sizeof kCrashSignals / sizeof kCrashSignals[0]; ++i)
        if (kCrashSignals[i] == sig) sigaction(sig, &g_previous[i], nullptr);
    // A fault re-executes and reaches the previous handler; a raised signal is delivered to it
    // when this handler returns.
    if (sig == SIGABRT || sig == SIGFPE) raise(sig);
}

void install_crash_handlers() {
    std::snprintf(g_crash_prefix, sizeof g_crash_prefix, "\n[spmd] PE %d of %d: fatal signal ", spmd::me(),
                  spmd::npes());
    for (std::size_t i = 0; i < sizeof kCrashSignals / sizeof kCrashSignals[0]; ++i) {
        struct sigaction sa {};
        sa.sa_handler = on_crash;
        sigemptyset(&sa.sa_mask);
        sigaction(kCrashSignals[i], &sa, &g_previous[i]);
    }
}

// ---- Where each thread is, when a test case hangs ------------------------------------------
// The watchdog has every thread of the process report, one at a time, the instruction it was at
// and the code addresses on its stack (a scan of the words above its stack pointer: it needs no
// unwind tables, which a GPU driver's code may lack). Addresses are printed as module+offset, to
// be named with `addr2line -f -C -e <module> <offset>` on the unstripped build.
constexpr int kWhereSignal = SIGUSR2;
std::atomic<int> g_where_done{0};

void write_addr(const char* what, std::uintptr_t a) {
    char line[512];
    Dl_info di{};
    if (dladdr(reinterpret_cast<void*>(a), &di) && di.dli_fname) {
        const char* base = std::strrchr(di.dli_fname, '/');
        std::snprintf(line, sizeof line, "[spmd] PE %d:     %s %s+%#" PRIxPTR "%s%s\n", spmd::me(), what,
                      base ? base + 1 : di.dli_fname,
                      a - reinterpret_cast<std::uintptr_t>(di.dli_fbase), di.dli_sname ? " " : "",
                      di.dli_sname ? di.dli_sname : "");
    } else {
        std::snprintf(line, sizeof line, "[spmd] PE %d:     %s %#" PRIxPTR " (no module)\n", spmd::me(), what, a);
    }
    write_str(line);
}

void on_where(int, siginfo_t*, void* ctx) {
    const auto* uc = static_cast<const ucontext_t*>(ctx);
#if defined(__x86_64__)
    const auto pc = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
    const auto sp = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
    const auto pc = static_cast<std::uintptr_t>(uc->uc_mcontext.pc);
    const auto sp = static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
    const std::uintptr_t pc = 0, sp = 0; // (the stack scan reads nothing)
#endif
    char head[96];
    std::snprintf(head, sizeof head, "[spmd] PE %d:   thread %ld:\n", spmd::me(),
                  static_cast<long>(::syscall(SYS_gettid)));
    write_str(head);
    write_addr("at", pc);
    // The stack above sp, read through the kernel so that its end faults nothing. (One buffer:
    // report_threads has the threads report one at a time.)
    static std::uintptr_t words[4096];
    iovec local{words, sizeof words}, remote{reinterpret_cast<void*>(sp), sizeof words};
    const ssize_t got = ::process_vm_readv(::getpid(), &local, 1, &remote, 1, 0);
    int shown = 0;
    for (ssize_t i = 0; got > 0 && i < got / static_cast<ssize_t>(sizeof(std::uintptr_t)) && shown < 20; ++i) {
        Dl_info di{};
        // A code address: inside a module, and not the module's data (a crude test: its symbol,
        // where named, is not an object; unnamed ones are shown, as a driver's often are).
        if (words[i] < 4096 || !dladdr(reinterpret_cast<void*>(words[i]), &di) || !di.dli_fname) continue;
        if (di.dli_saddr && di.dli_sname && std::strstr(di.dli_sname, "_ZTV")) continue; // vtables
        write_addr("calls", words[i]);
        ++shown;
    }
    g_where_done.store(1, std::memory_order_release);
}

// Each thread of this process in turn (but the calling one), at most about 2 s each.
void report_threads() {
    struct sigaction sa {};
    sa.sa_sigaction = on_where;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(kWhereSignal, &sa, nullptr);
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return;
    const long self = static_cast<long>(::syscall(SYS_gettid));
    while (dirent* e = ::readdir(d)) {
        const long tid = std::atol(e->d_name);
        if (tid <= 0 || tid == self) continue;
        g_where_done.store(0, std::memory_order_relaxed);
        if (::syscall(SYS_tgkill, ::getpid(), tid, kWhereSignal) != 0) continue;
        for (int i = 0; i < 200 && !g_where_done.load(std::memory_order_acquire); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::closedir(d);
}

// ---- Hang watchdog ---------------------------------------------------------------------------
// A test case that runs longer than SPMD_TEST_TIMEOUT seconds (default 60, below CTest's limit)
// is stuck, most likely in a wait or barrier: name it and end the job, rather than letting CTest
// kill the job later without saying where.
class Watchdog {
public:
    void start() {
        const char* env = std::getenv("SPMD_TEST_TIMEOUT");
        limit_ = std::chrono::seconds(env && std::atoi(env) > 0 ? std::atoi(env) : 60);
        thread_ = std::thread([this] { run(); });
    }
    void stop() {
        {
            std::lock_guard<std::mutex> lock(mu_);
            done_ = true;
        }
        cv_.notify_all();
        if (thread_.joinable()) thread_.join();
    }
    void test_started(const std::string& name) {
        std::lock_guard<std::mutex> lock(mu_);
        name_ = name;
        started_ = std::chrono::steady_clock::now();
        running_ = true;
    }
    void test_ended() {
        std::lock_guard<std::mutex> lock(mu_);
        running_ = false;
    }

private:
    void run() {
        std::unique_lock<std::mutex> lock(mu_);
        while (!done_) {
            cv_.wait_for(lock, std::chrono::seconds(1));
            if (done_ || !running_ || std::chrono::steady_clock::now() - started_ < limit_) continue;
            std::fprintf(stderr,
                         "\n[spmd] PE %d of %d: test case \"%s\" still running after %lld s (SPMD_TEST_TIMEOUT): "
                         "a wait or barrier that never completes? Ending the job.\n",
                         spmd::me(), spmd::npes(), name_.c_str(), static_cast<long long>(limit_.count()));
            std::fprintf(stderr, "[spmd] PE %d: where its threads are:\n", spmd::me());
            std::fflush(stderr);
            report_threads();
            shmem_global_exit(124);
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::thread thread_;
    std::chrono::seconds limit_{60};
    std::chrono::steady_clock::time_point started_;
    std::string name_;
    bool running_ = false;
    bool done_ = false;
};
Watchdog g_watchdog;

// Ends the job on the first failure anywhere, naming the PE and the test.
class PeFailureListener : public Catch::TestEventListenerBase {
public:
    using TestEventListenerBase::TestEventListenerBase;

    void testCaseStarting(Catch::TestCaseInfo const& info) override {
        TestEventListenerBase::testCaseStarting(info);
        test_name_ = info.name;
        std::snprintf(g_current_test, sizeof g_current_test, "%s", info.name.c_str());
        g_watchdog.test_started(info.name);
    }

    void testCaseEnded(Catch::TestCaseStats const& stats) override {
        g_watchdog.test_ended();
        TestEventListenerBase::testCaseEnded(stats);
    }

    bool assertionEnded(Catch::AssertionStats const& stats) override {
        const Catch::AssertionResult& r = stats.assertionResult;
        if (r.isOk()) return true;
        std::ostringstream out;
        out << "\n[spmd] PE " << spmd::me() << " of " << spmd::npes() << ": FAILED in test case \""
            << test_name_ << "\" (seed 0x" << std::hex << spmd::seed() << std::dec
            << ", replay with VKSHMEM_TEST_SEED)\n"
            << "  at " << r.getSourceInfo().file << ":" << r.getSourceInfo().line << "\n";
        if (r.getResultType() == Catch::ResultWas::ThrewException) out << "  unexpected exception\n";
        if (r.hasExpression()) {
            out << "  " << r.getExpressionInMacro() << "\n";
            if (r.hasExpandedExpression()) out << "  with expansion: " << r.getExpandedExpression() << "\n";
        }
        if (r.hasMessage()) out << "  message: " << r.getMessage() << "\n";
        for (const Catch::MessageInfo& m : stats.infoMessages) out << "  with: " << m.message << "\n";
        std::fputs(out.str().c_str(), stderr);
        std::fflush(stderr);
        std::fflush(stdout);
        shmem_global_exit(1);
        return true;
    }

private:
    std::string test_name_;
};

} // namespace

CATCH_REGISTER_LISTENER(PeFailureListener)

// SPMD_HOST_ONLY_PES="0 2": those launcher ranks run without a Vulkan device (VKSHMEM_DEVICE=none)
// beside PEs that have one, so their device heaps are host memory and they reach the others'
// device heaps only through those PEs' proxies.
static void apply_host_only_pes() {
    const char* list = std::getenv("SPMD_HOST_ONLY_PES");
    const char* rank = std::getenv("PMIX_RANK");
    if (!list || !rank) return;
    const std::string padded = " " + std::string(list) + " ";
    if (padded.find(" " + std::string(rank) + " ") != std::string::npos) setenv("VKSHMEM_DEVICE", "none", 1);
}

int main(int argc, char** argv) {
    apply_host_only_pes();
    spmd::InitConfig& cfg = spmd::init_config();
    if (cfg.requested_thread_level >= 0) {
        cfg.init_thread_ret = shmem_init_thread(cfg.requested_thread_level, &cfg.provided);
        if (cfg.init_thread_ret != 0) {
            std::fprintf(stderr, "[spmd] shmem_init_thread(%d) returned %d\n", cfg.requested_thread_level,
                         cfg.init_thread_ret);
            return 1;
        }
    } else {
        shmem_init();
    }
    spmd::g_me = shmem_my_pe();
    spmd::g_npes = shmem_n_pes();

    install_crash_handlers();
    spmd::g_seed = spmd::pick_seed();
    spmd::gather_nodes();
    spmd::g_rng.seed(spmd::mix(spmd::g_seed ^ spmd::mix(static_cast<std::uint64_t>(spmd::g_me) + 1)));
    spmd::g_shared_rng.seed(spmd::g_seed);
    spmd::g_poison = static_cast<unsigned char>(spmd::mix(spmd::g_seed ^ 0x706f69736f6eull) % 253 + 1);
    if (spmd::g_me == 0) {
        std::printf("[spmd] %s: %d PE%s, seed 0x%016" PRIx64 " (replay with VKSHMEM_TEST_SEED=0x%016" PRIx64 ")\n",
                    argv[0], spmd::g_npes, spmd::g_npes == 1 ? "" : "s", spmd::g_seed, spmd::g_seed);
        std::fflush(stdout);
    }

    Catch::Session session;
    const char* verbose = std::getenv("SPMD_VERBOSE");
    if (spmd::g_me != 0 && !(verbose && *verbose && *verbose != '0')) session.configData().outputFilename = "/dev/null";
    // mpirun hands the PEs a pseudo-terminal: no colour codes in CTest logs unless asked for.
    session.configData().useColour = Catch::UseColour::No;
    int rc = session.applyCommandLine(argc, argv);
    if (rc != 0) {
        shmem_finalize();
        return rc;
    }
    g_watchdog.start();
    int failures = session.run();
    g_watchdog.stop();
    shmem_finalize();
    return failures > 255 ? 255 : failures;
}
