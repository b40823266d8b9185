// SPDX-License-Identifier: BSL-1.0
#include "core/log.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <unistd.h>

namespace vkshmem {
namespace log_detail {
LogLevel g_level = LogLevel::Warn;
int g_pe = -1;
namespace {
void (*g_abort_hook)(int, const char*) = nullptr;
const char* level_name(LogLevel l) {
    switch (l) {
    case LogLevel::Error: return "error";
    case LogLevel::Warn: return "warning";
    case LogLevel::Info: return "info";
    case LogLevel::Debug: return "debug";
    case LogLevel::Trace: return "trace";
    }
    return "?";
}
} // namespace

void emit(LogLevel level, std::string_view msg) {
    // One write per line so lines of different PEs do not interleave. Debug and trace lines carry
    // the time of day (seconds within the hour, to the microsecond), to put PEs' events in order.
    std::string at;
    if (level >= LogLevel::Debug) {
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
        at = fmt::format(" {:04}.{:06}", us / 1000000 % 3600, us % 1000000);
    }
    std::string line = fmt::format("{}{} vkshmem {}: {}\n", log_prefix(), at, level_name(level), msg);
    ssize_t r = ::write(STDERR_FILENO, line.data(), line.size());
    (void)r;
}

void die(int status, std::string_view call, std::string_view msg) {
    std::string text = fmt::format("{}: {}", call, msg);
    emit(LogLevel::Error, text);
    std::fflush(stdout);
    if (g_abort_hook) g_abort_hook(status, text.c_str());
    _exit(status);
}
} // namespace log_detail

void set_log_level(LogLevel level) { log_detail::g_level = level; }

void set_log_pe(int pe) { log_detail::g_pe = pe; }
void set_abort_hook(void (*hook)(int, const char*)) { log_detail::g_abort_hook = hook; }

std::string log_prefix() {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    if (log_detail::g_pe >= 0) return fmt::format("[{}:{}:PE {}]", host, getpid(), log_detail::g_pe);
    return fmt::format("[{}:{}]", host, getpid());
}

} // namespace vkshmem
