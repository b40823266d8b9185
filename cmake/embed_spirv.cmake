# Turns a SPIR-V binary into a C/C++ header with a static uint32_t array.
# cmake -DSPV=in.spv -DOUT=out.hpp -DNAME=symbol -P embed_spirv.cmake
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" n)
set(words "")
math(EXPR last "${n} - 8")
foreach(i RANGE 0 ${last} 8)
  string(SUBSTRING "${hex}" ${i} 8 w)
  # SPIR-V words are little-endian in the file.
  string(SUBSTRING "${w}" 6 2 b3)
  string(SUBSTRING "${w}" 4 2 b2)
  string(SUBSTRING "${w}" 2 2 b1)
  string(SUBSTRING "${w}" 0 2 b0)
  string(APPEND words "0x${b3}${b2}${b1}${b0}u,")
  math(EXPR col "(${i} / 8) % 8")
  if(col EQUAL 7)
    string(APPEND words "\n")
  endif()
endforeach()
file(WRITE ${OUT} "/* Generated from ${SPV} at build time. */\n#pragma once\n#include <stdint.h>\n"
     "static const uint32_t ${NAME}[] = {\n${words}\n};\n")
