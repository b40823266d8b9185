# SPDX-License-Identifier: BSL-1.0
# Turns a SPIR-V binary into a C/C++ header with a static uint32_t array, in
# linear time (one regex pass; a per-word loop is quadratic in CMake).
# cmake -DSPV=in.spv -DOUT=out.h -DNAME=symbol -P embed_spirv.cmake
file(READ ${SPV} hex HEX)
# SPIR-V words are little-endian in the file.
string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])" "0x\\4\\3\\2\\1u,"
       words "${hex}")
file(WRITE ${OUT} "/* Generated from ${SPV} at build time. */\n#pragma once\n#include <stdint.h>\n"
     "static const uint32_t ${NAME}[] = {\n${words}\n};\n")
