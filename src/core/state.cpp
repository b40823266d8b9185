// SPDX-License-Identifier: BSL-1.0
#include "core/state.hpp"

namespace vkshmem {
FastState g_state;
}
