// SPDX-License-Identifier: BSL-1.0
// Shared by the test shaders: one work record per invocation (or per workgroup), written by the
// host into its own host heap, and plain local loads/stores of test data by device address.
// The record layout matches `Rec` in shader_test.hpp.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

struct Rec {
    uint op;
    uint type;
    int pe;
    uint flags;
    uint64_t dst;
    uint64_t src;
    uint64_t n;
    uint64_t a;
    uint64_t b;
    uint64_t c;
};
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Recs { Rec r[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer L32 { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer L64 { uint64_t v; };

// state: vkshmemx_device_state(); recs: the records; count: how many; arg: test-specific.
layout(push_constant) uniform Push {
    uint64_t state;
    uint64_t recs;
    uint64_t arg0;
    uint64_t arg1;
    uint count;
    uint mode;
} pc;

Rec rec(uint i) { return Recs(pc.recs).r[i]; }

// Values of every GLSL type from and to 64-bit patterns (4-byte types use the low half).
float cv_float(uint64_t b) { return uintBitsToFloat(uint(b)); }
double cv_double(uint64_t b) { return uint64BitsToDouble(b); }
int cv_int(uint64_t b) { return int(uint(b)); }
uint cv_uint(uint64_t b) { return uint(b); }
int64_t cv_int64_t(uint64_t b) { return int64_t(b); }
uint64_t cv_uint64_t(uint64_t b) { return b; }
float ld_float(uint64_t a) { return uintBitsToFloat(L32(a).v); }
double ld_double(uint64_t a) { return uint64BitsToDouble(L64(a).v); }
int ld_int(uint64_t a) { return int(L32(a).v); }
uint ld_uint(uint64_t a) { return L32(a).v; }
int64_t ld_int64_t(uint64_t a) { return int64_t(L64(a).v); }
uint64_t ld_uint64_t(uint64_t a) { return L64(a).v; }
void st(uint64_t a, float v) { L32(a).v = floatBitsToUint(v); }
void st(uint64_t a, double v) { L64(a).v = doubleBitsToUint64(v); }
void st(uint64_t a, int v) { L32(a).v = uint(v); }
void st(uint64_t a, uint v) { L32(a).v = v; }
void st(uint64_t a, int64_t v) { L64(a).v = uint64_t(v); }
void st(uint64_t a, uint64_t v) { L64(a).v = v; }

// X-macros over the spec's type tables as the device library has them (index, TYPENAME[, GLSL
// type]). BULK: every type with RMA routines; VALUE: p/g and the extended AMO table; STD: the
// standard AMO table, also the point-to-point table (without short/ushort); BIT: the bitwise AMO
// table. Each table comes in chunks (a kernel holds one chunk: lavapipe's JIT time grows faster
// than linearly with the number of library calls in one shader); shader_test.hpp has the same
// chunk boundaries. The including kernel defines CHUNK.
#define BULK_0(X) X(0, float) X(1, double) X(2, char) X(3, schar) X(4, short) X(5, int)
#define BULK_1(X) X(6, long) X(7, longlong) X(8, uchar) X(9, ushort) X(10, uint) X(11, ulong)
#define BULK_2(X) X(12, ulonglong) X(13, int8) X(14, int16) X(15, int32) X(16, int64) X(17, uint8)
#define BULK_3(X) X(18, uint16) X(19, uint32) X(20, uint64) X(21, size) X(22, ptrdiff)
#define VALUE_0(X) X(0, float, float) X(1, double, double) X(2, int, int) X(3, long, int64_t)
#define VALUE_1(X) X(4, longlong, int64_t) X(5, uint, uint) X(6, ulong, uint64_t) X(7, ulonglong, uint64_t)
#define VALUE_2(X) X(8, int32, int) X(9, int64, int64_t) X(10, uint32, uint)
#define VALUE_3(X) X(11, uint64, uint64_t) X(12, size, uint64_t) X(13, ptrdiff, int64_t)
#define STD_0(X) X(0, int, int) X(1, long, int64_t) X(2, longlong, int64_t) X(3, uint, uint)
#define STD_1(X) X(4, ulong, uint64_t) X(5, ulonglong, uint64_t) X(6, int32, int) X(7, int64, int64_t)
#define STD_2(X) X(8, uint32, uint) X(9, uint64, uint64_t) X(10, size, uint64_t) X(11, ptrdiff, int64_t)
#define BIT_0(X) X(0, uint, uint) X(1, ulong, uint64_t) X(2, ulonglong, uint64_t)
#define BIT_1(X) X(3, int32, int) X(4, int64, int64_t)
#define BIT_2(X) X(5, uint32, uint) X(6, uint64, uint64_t)

#ifndef CHUNK
#define CHUNK 0
#endif
#if CHUNK == 0
#define BULK_CHUNK(X) BULK_0(X)
#define VALUE_CHUNK(X) VALUE_0(X)
#define STD_CHUNK(X) STD_0(X)
#define BIT_CHUNK(X) BIT_0(X)
#elif CHUNK == 1
#define BULK_CHUNK(X) BULK_1(X)
#define VALUE_CHUNK(X) VALUE_1(X)
#define STD_CHUNK(X) STD_1(X)
#define BIT_CHUNK(X) BIT_1(X)
#elif CHUNK == 2
#define BULK_CHUNK(X) BULK_2(X)
#define VALUE_CHUNK(X) VALUE_2(X)
#define STD_CHUNK(X) STD_2(X)
#define BIT_CHUNK(X) BIT_2(X)
#else
#define BULK_CHUNK(X) BULK_3(X)
#define VALUE_CHUNK(X) VALUE_3(X)
#endif

// The sized forms: 0 = mem, then 8 .. 128 bits.
#define SIZED_ALL(X) X(0, mem) X(1, 8) X(2, 16) X(3, 32) X(4, 64) X(5, 128)
