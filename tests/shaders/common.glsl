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

// The spec's type tables as the device library has them, one entry per kernel (index,
// TYPENAME[, GLSL type]): a kernel's CHUNK is the index of the one type it calls the routines of.
// lavapipe's first compile of a kernel grows with the square of the library calls in it (a put of
// 1, 2, 3, 6 types: 0.34, 0.73, 1.5, 4.6 s), so one type per kernel costs least.
// BULK: every type with RMA routines; VALUE: p/g and the extended AMO table; STD: the standard AMO
// table, also the point-to-point table (without short/ushort); BIT: the bitwise AMO table;
// SIZED: the sized forms, 0 = mem, then 8 .. 128 bits. shader_test.hpp has the same tables.
#define BULK_0(X) X(0, float)
#define BULK_1(X) X(1, double)
#define BULK_2(X) X(2, char)
#define BULK_3(X) X(3, schar)
#define BULK_4(X) X(4, short)
#define BULK_5(X) X(5, int)
#define BULK_6(X) X(6, long)
#define BULK_7(X) X(7, longlong)
#define BULK_8(X) X(8, uchar)
#define BULK_9(X) X(9, ushort)
#define BULK_10(X) X(10, uint)
#define BULK_11(X) X(11, ulong)
#define BULK_12(X) X(12, ulonglong)
#define BULK_13(X) X(13, int8)
#define BULK_14(X) X(14, int16)
#define BULK_15(X) X(15, int32)
#define BULK_16(X) X(16, int64)
#define BULK_17(X) X(17, uint8)
#define BULK_18(X) X(18, uint16)
#define BULK_19(X) X(19, uint32)
#define BULK_20(X) X(20, uint64)
#define BULK_21(X) X(21, size)
#define BULK_22(X) X(22, ptrdiff)
#define VALUE_0(X) X(0, float, float)
#define VALUE_1(X) X(1, double, double)
#define VALUE_2(X) X(2, int, int)
#define VALUE_3(X) X(3, long, int64_t)
#define VALUE_4(X) X(4, longlong, int64_t)
#define VALUE_5(X) X(5, uint, uint)
#define VALUE_6(X) X(6, ulong, uint64_t)
#define VALUE_7(X) X(7, ulonglong, uint64_t)
#define VALUE_8(X) X(8, int32, int)
#define VALUE_9(X) X(9, int64, int64_t)
#define VALUE_10(X) X(10, uint32, uint)
#define VALUE_11(X) X(11, uint64, uint64_t)
#define VALUE_12(X) X(12, size, uint64_t)
#define VALUE_13(X) X(13, ptrdiff, int64_t)
#define STD_0(X) X(0, int, int)
#define STD_1(X) X(1, long, int64_t)
#define STD_2(X) X(2, longlong, int64_t)
#define STD_3(X) X(3, uint, uint)
#define STD_4(X) X(4, ulong, uint64_t)
#define STD_5(X) X(5, ulonglong, uint64_t)
#define STD_6(X) X(6, int32, int)
#define STD_7(X) X(7, int64, int64_t)
#define STD_8(X) X(8, uint32, uint)
#define STD_9(X) X(9, uint64, uint64_t)
#define STD_10(X) X(10, size, uint64_t)
#define STD_11(X) X(11, ptrdiff, int64_t)
#define BIT_0(X) X(0, uint, uint)
#define BIT_1(X) X(1, ulong, uint64_t)
#define BIT_2(X) X(2, ulonglong, uint64_t)
#define BIT_3(X) X(3, int32, int)
#define BIT_4(X) X(4, int64, int64_t)
#define BIT_5(X) X(5, uint32, uint)
#define BIT_6(X) X(6, uint64, uint64_t)
#define SIZED_0(X) X(0, mem)
#define SIZED_1(X) X(1, 8)
#define SIZED_2(X) X(2, 16)
#define SIZED_3(X) X(3, 32)
#define SIZED_4(X) X(4, 64)
#define SIZED_5(X) X(5, 128)

#ifndef CHUNK
#define CHUNK 0
#endif
#define TABLE_ENTRY2(table, i) table##_##i
#define TABLE_ENTRY(table, i) TABLE_ENTRY2(table, i)
#define BULK_CHUNK(X) TABLE_ENTRY(BULK, CHUNK)(X)
#define VALUE_CHUNK(X) TABLE_ENTRY(VALUE, CHUNK)(X)
#define STD_CHUNK(X) TABLE_ENTRY(STD, CHUNK)(X)
#define BIT_CHUNK(X) TABLE_ENTRY(BIT, CHUNK)(X)
#define SIZED_CHUNK(X) TABLE_ENTRY(SIZED, CHUNK)(X)
