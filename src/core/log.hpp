// SPDX-License-Identifier: BSL-1.0
// Logging and fatal errors.
//
// Every line carries "[host:pid:PE n] vkshmem <level>: ". The level is checked
// before the arguments are formatted. A problem that is the same on every PE
// is reported once, by PE 0 (log_once).
#pragma once

#include <fmt/format.h>

#include <chrono>

#include <string_view>

namespace vkshmem {

enum class LogLevel : int { Error = 0, Warn = 1, Info = 2, Debug = 3, Trace = 4 };

namespace log_detail {
extern LogLevel g_level;
extern int g_pe;
void emit(LogLevel level, std::string_view msg);
[[noreturn]] void die(int status, std::string_view call, std::string_view msg);
} // namespace log_detail

// Parses error|warn|info|debug|trace; false if the text is none of them.
void set_log_level(LogLevel level);
void set_log_pe(int pe);
// Called by fatal(): ends the whole job (launcher abort when there is one).
void set_abort_hook(void (*hook)(int status, const char* msg));
// "[host:pid:PE n]", for messages built elsewhere.
std::string log_prefix();

inline bool log_enabled(LogLevel l) { return static_cast<int>(l) <= static_cast<int>(log_detail::g_level); }

template <class... A> void log(LogLevel l, fmt::format_string<A...> f, A&&... a) {
    if (log_enabled(l)) log_detail::emit(l, fmt::format(f, std::forward<A>(a)...));
}
#define VKSHMEM_LOG_(LVL, ...)                                                                                   \
    do {                                                                                                         \
        if (::vkshmem::log_enabled(::vkshmem::LogLevel::LVL))                                                    \
            ::vkshmem::log_detail::emit(::vkshmem::LogLevel::LVL, fmt::format(__VA_ARGS__));                     \
    } while (0)
#define VKSHMEM_WARN(...) VKSHMEM_LOG_(Warn, __VA_ARGS__)
#define VKSHMEM_INFO(...) VKSHMEM_LOG_(Info, __VA_ARGS__)
#define VKSHMEM_DEBUG(...) VKSHMEM_LOG_(Debug, __VA_ARGS__)
#define VKSHMEM_TRACE(...) VKSHMEM_LOG_(Trace, __VA_ARGS__)
// Same on every PE: only PE 0 says it.
#define VKSHMEM_WARN_ONCE(...)                                                                                   \
    do {                                                                                                         \
        if (::vkshmem::log_detail::g_pe <= 0) VKSHMEM_WARN(__VA_ARGS__);                                         \
    } while (0)

// Times a step for a debug-level diagnostic ("this took long"): reads the clock only with debug
// logging on, so it costs nothing otherwise.
class DebugTimer {
public:
    DebugTimer() : on_(log_enabled(LogLevel::Debug)), t0_(on_ ? clock::now() : clock::time_point{}) {}
    // The milliseconds since construction where debug logging is on and they exceed `limit`; else 0.
    double over(std::chrono::milliseconds limit) const {
        if (!on_) return 0.0;
        const auto d = clock::now() - t0_;
        return d > limit ? std::chrono::duration<double, std::milli>(d).count() : 0.0;
    }

private:
    using clock = std::chrono::steady_clock;
    bool on_;
    clock::time_point t0_;
};

// Prints "[host:pid:PE n] vkshmem error: <call>: <message>" and ends the job
// with status 1. Never returns.
template <class... A> [[noreturn]] void fatal(std::string_view call, fmt::format_string<A...> f, A&&... a) {
    log_detail::die(1, call, fmt::format(f, std::forward<A>(a)...));
}
// Prints the error line without ending the job (for routines that return a status).
template <class... A> void error(std::string_view call, fmt::format_string<A...> f, A&&... a) {
    log_detail::emit(LogLevel::Error, fmt::format("{}: {}", call, fmt::format(f, std::forward<A>(a)...)));
}

} // namespace vkshmem
