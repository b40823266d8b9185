# Embeds a SPIR-V binary as a C++ array in linear time (the loop in cmake/embed_spirv.cmake is
# quadratic: minutes for a 1 MB module).
# cmake -DSPV=in.spv -DOUT=out.hpp -DNAME=symbol -P embed_spirv.cmake
file(READ ${SPV} hex HEX)
# SPIR-V words are little-endian in the file.
string(REGEX REPLACE "([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])([0-9a-f][0-9a-f])" "0x\\4\\3\\2\\1u,"
       words "${hex}")
file(WRITE ${OUT} "// Generated from ${SPV} at build time.\n#pragma once\n#include <cstdint>\n"
     "inline constexpr std::uint32_t ${NAME}[] = {\n${words}\n};\n")
