// SPDX-License-Identifier: BSL-1.0
// The OpenSHMEM 1.6 type tables, written out here (not taken from the generator) so that the
// tests check the generated header against the spec: a missing or misspelled typed routine is a
// compile or link error in the test. X(C type, TYPENAME).
#pragma once

#include <cstddef>
#include <cstdint>

// Standard RMA types (24): put, get, put_nbi, get_nbi, p, g, iput, iget.
#define SPMD_RMA_TYPES(X)                                                                                    \
    X(float, float)                                                                                          \
    X(double, double)                                                                                        \
    X(long double, longdouble)                                                                               \
    X(char, char)                                                                                            \
    X(signed char, schar)                                                                                    \
    X(short, short)                                                                                          \
    X(int, int)                                                                                              \
    X(long, long)                                                                                            \
    X(long long, longlong)                                                                                   \
    X(unsigned char, uchar)                                                                                  \
    X(unsigned short, ushort)                                                                                \
    X(unsigned int, uint)                                                                                    \
    X(unsigned long, ulong)                                                                                  \
    X(unsigned long long, ulonglong)                                                                         \
    X(int8_t, int8)                                                                                          \
    X(int16_t, int16)                                                                                        \
    X(int32_t, int32)                                                                                        \
    X(int64_t, int64)                                                                                        \
    X(uint8_t, uint8)                                                                                        \
    X(uint16_t, uint16)                                                                                      \
    X(uint32_t, uint32)                                                                                      \
    X(uint64_t, uint64)                                                                                      \
    X(size_t, size)                                                                                          \
    X(ptrdiff_t, ptrdiff)

// Standard AMO types (12): compare_swap, fetch_inc, inc, fetch_add, add (+ fetching _nbi forms).
#define SPMD_AMO_STANDARD_TYPES(X)                                                                           \
    X(int, int)                                                                                              \
    X(long, long)                                                                                            \
    X(long long, longlong)                                                                                   \
    X(unsigned int, uint)                                                                                    \
    X(unsigned long, ulong)                                                                                  \
    X(unsigned long long, ulonglong)                                                                         \
    X(int32_t, int32)                                                                                        \
    X(int64_t, int64)                                                                                        \
    X(uint32_t, uint32)                                                                                      \
    X(uint64_t, uint64)                                                                                      \
    X(size_t, size)                                                                                          \
    X(ptrdiff_t, ptrdiff)

// Extended AMO types (14): fetch, set, swap (+ fetch_nbi, swap_nbi).
#define SPMD_AMO_EXTENDED_TYPES(X)                                                                           \
    X(float, float)                                                                                          \
    X(double, double)                                                                                        \
    SPMD_AMO_STANDARD_TYPES(X)

// Bitwise AMO types (7): and, or, xor and their fetching forms (+ fetching _nbi forms).
#define SPMD_AMO_BITWISE_TYPES(X)                                                                            \
    X(unsigned int, uint)                                                                                    \
    X(unsigned long, ulong)                                                                                  \
    X(unsigned long long, ulonglong)                                                                         \
    X(int32_t, int32)                                                                                        \
    X(int64_t, int64)                                                                                        \
    X(uint32_t, uint32)                                                                                      \
    X(uint64_t, uint64)

// Point-to-point synchronization types (OpenSHMEM 1.5/1.6 table: the standard AMO types plus
// short and unsigned short): wait_until, test and the _all/_any/_some(_vector) forms.
#define SPMD_SYNC_TYPES(X)                                                                                   \
    X(short, short)                                                                                          \
    X(unsigned short, ushort)                                                                                \
    SPMD_AMO_STANDARD_TYPES(X)
