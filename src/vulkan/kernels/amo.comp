// SPDX-License-Identifier: BSL-1.0
// The sweeper: carries out the atomic posted in this PE's AMO mailbox unless a
// waiting kernel of the device library already took it (vkshmem_mailbox.glsl).
// One invocation. Host-initiated AMOs on a device heap need it where the CPU
// reaches the heap only through a GPU's BAR, whose CPU atomics are not atomic
// with respect to the device.
#version 460
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_GOOGLE_include_directive : require

layout(local_size_x = 1) in;

#include "vkshmem_mailbox.glsl"

// Must match the push constant of VulkanDevice::atomic (vulkan/amo.cpp).
layout(push_constant) uniform Push {
    uint64_t request;
    uint64_t claim;
    uint64_t reply;
} pc;

void main() { vkshmem_mailbox_serve_(pc.request, pc.claim, pc.reply, 0ul); }
