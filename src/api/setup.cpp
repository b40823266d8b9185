// SPDX-License-Identifier: BSL-1.0
// Setup, exit and query routines (OpenSHMEM 1.6 §9.1).
#include <shmem.h>

#include "api/guard.hpp"
#include "core/log.hpp"
#include "runtime/runtime.hpp"

#include <cstdio>
#include <cstring>

using namespace vkshmem;

namespace {
int init_common(int requested, int* provided, const char* call, bool fatal_on_error) {
    if (g_runtime) {
        if (provided) *provided = g_runtime->thread_level();
        return 0;
    }
    auto r = Runtime::init(requested);
    if (!r) {
        if (fatal_on_error) fatal(call, "{}", r.error().message);
        error(call, "{}", r.error().message);
        return 1;
    }
    if (provided) *provided = g_runtime->thread_level();
    return 0;
}
} // namespace

extern "C" {

void shmem_init(void) noexcept { init_common(SHMEM_THREAD_SINGLE, nullptr, "shmem_init", true); }

int shmem_init_thread(int requested, int* provided) noexcept {
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE) {
        error("shmem_init_thread", "requested thread level {} is not one of SHMEM_THREAD_SINGLE (0) .. "
                                   "SHMEM_THREAD_MULTIPLE (3)",
              requested);
        return 1;
    }
    return init_common(requested, provided, "shmem_init_thread", false);
}

void shmem_query_thread(int* provided) noexcept {
    if (provided) *provided = require_runtime("shmem_query_thread").thread_level();
}

void shmem_finalize(void) noexcept { Runtime::finalize(); }

// 1.6: 1 between an initialization and its finalize, else 0; callable at any time.
void shmem_query_initialized(int* initialized) noexcept {
    if (initialized) *initialized = g_runtime && g_state.initialized ? 1 : 0;
}

// Profiling control: levels are hints for a profiling library placed in front of this one; with
// none, there is nothing to switch, as the specification allows.
void shmem_pcontrol(int, ...) noexcept {}

void shmem_global_exit(int status) noexcept {
    if (g_runtime) g_runtime->global_exit(status);
    std::fflush(nullptr);
    _exit(status);
}

int shmem_my_pe(void) noexcept { return g_state.initialized ? g_state.my_pe : -1; }
int shmem_n_pes(void) noexcept { return g_state.initialized ? g_state.n_pes : -1; }

void shmem_info_get_version(int* major, int* minor) noexcept {
    if (major) *major = SHMEM_MAJOR_VERSION;
    if (minor) *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char* name) noexcept {
    if (name) std::snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

} // extern "C"
