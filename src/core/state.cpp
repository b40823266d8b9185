#include "core/state.hpp"

namespace vkshmem {
FastState g_state;
}
