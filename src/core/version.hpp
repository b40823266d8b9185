// SPDX-License-Identifier: BSL-1.0
// What this build is: the release (shmem.h's VKSHMEM_VERSION, which CMake also reads) and the
// git revision of the tree it was built from (cmake/revision.cmake).
#pragma once

namespace vkshmem {

// "0.1.0"
const char* version();
// `git describe --always --dirty` of the source tree at build time ("0123456789ab",
// "v0.1.0-3-g0123456789ab-dirty"), or "unknown" when it was not a git checkout.
const char* revision();

} // namespace vkshmem
