// SPDX-License-Identifier: BSL-1.0
// shmem_team_t handles to the runtime's teams (api/teams.cpp).
#pragma once

#include "coll/team.hpp"

struct vkshmem_team; // shmem_team_t points to it: never defined, only cast

namespace vkshmem::api {

// The team behind a handle; null for SHMEM_TEAM_INVALID. With
// VKSHMEM_ERROR_CHECKS, a handle that is no live team ends the job.
coll::Team* team_of(vkshmem_team* handle, const char* call);

} // namespace vkshmem::api
