// SPDX-License-Identifier: BSL-1.0
#include "core/version.hpp"

#include "vkshmem_revision.h" // written at build time (cmake/revision.cmake)

namespace vkshmem {

const char* version() { return VKSHMEM_VERSION_STRING; }
const char* revision() { return VKSHMEM_GIT_REVISION; }

} // namespace vkshmem
