# SPDX-License-Identifier: BSL-1.0
# Optimizes a test kernel's SPIR-V with spirv-opt -O, or keeps it as compiled where spirv-opt
# fails: inlined, a kernel as large as all_calls.comp runs out of SPIR-V ids, and Debian 12's
# glslc -O (the same optimizer, in-process) crashed on two of the test kernels. Every test kernel
# optimizes today.
# Why optimize: lavapipe translates and optimizes every pipeline's SPIR-V again in each PE of each
# run (its disk cache keeps only the machine code), and the inlined, optimized SPIR-V halves that
# time (shaders.shader_rma.np1 with a warm cache: 23 s -> 10 s; shader_hlsl.np1: 23 s -> 13 s),
# for about 5 minutes more build on 2 cores. The first compile of each (at its first dispatch) costs
# about the same either way.
# cmake -DOPT=spirv-opt -DENV=vulkan1.2 -DIN=raw.spv -DOUT=out.spv -P optimize_spirv.cmake
execute_process(COMMAND ${OPT} -O --target-env=${ENV} ${IN} -o ${OUT}.tmp
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc EQUAL 0)
  file(RENAME ${OUT}.tmp ${OUT})
else()
  file(REMOVE ${OUT}.tmp)
  file(COPY_FILE ${IN} ${OUT})
endif()
