// SPDX-License-Identifier: BSL-1.0
// A pipeline of the queue-ordered operations: cmd.glsl says which.
#version 460
#extension GL_GOOGLE_include_directive : require
#define CMD_XFER
#include "cmd.glsl"
