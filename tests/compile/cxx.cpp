// SPDX-License-Identifier: BSL-1.0
// The generated calls of every generic interface, compiled as C++: there they resolve to the
// overloads <shmem.h> declares for C++ instead of the C11 _Generic macros.
#include "generated/generics.c"
#include "generated/generics_ctx.c"
