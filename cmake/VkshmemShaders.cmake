# SPDX-License-Identifier: BSL-1.0
# vkshmem_add_shaders(<target> SOURCES <file.comp|file.hlsl>... [OUTPUT_DIR <dir>])
#
# Compiles compute shaders that `#include "vkshmem.glsl"` (or "vkshmem.hlsl")
# to SPIR-V with the device library's include path, validates each with
# spirv-val, and embeds it as `<name>_spv.h` (a `uint32_t <name>_spv[]` array,
# <name> being the file name with dots made underscores) in a directory added
# to <target>'s include path. GLSL targets Vulkan 1.2; HLSL (through glslang)
# targets Vulkan 1.1, the newest that spirv-val accepts for its buffers.
#
# The device library's folders come from the global property
# VKSHMEM_SHADER_INCLUDE_DIRS: the installed package sets it (vkshmemConfig.cmake)
# before including this file; in vkshmem's own tree it is the source shaders/.
include_guard(GLOBAL)

find_program(VKSHMEM_GLSLC glslc REQUIRED)
find_program(VKSHMEM_GLSLANG glslangValidator REQUIRED)
find_program(VKSHMEM_SPIRV_VAL spirv-val REQUIRED)
get_property(_vkshmem_shader_dirs_set GLOBAL PROPERTY VKSHMEM_SHADER_INCLUDE_DIRS SET)
if(NOT _vkshmem_shader_dirs_set)
  set_property(GLOBAL PROPERTY VKSHMEM_SHADER_INCLUDE_DIRS
               ${CMAKE_CURRENT_LIST_DIR}/../shaders ${CMAKE_CURRENT_LIST_DIR}/../shaders/generated)
endif()
set(VKSHMEM_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_spirv.cmake CACHE INTERNAL "")

function(vkshmem_add_shaders target)
  cmake_parse_arguments(ARG "" "OUTPUT_DIR" "SOURCES" ${ARGN})
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR}/${target}_shaders)
  endif()
  set(includes "")
  get_property(_dirs GLOBAL PROPERTY VKSHMEM_SHADER_INCLUDE_DIRS)
  foreach(dir IN LISTS _dirs)
    list(APPEND includes -I${dir})
  endforeach()
  # HLSL kernels have no depfile (the GLSL compiler writes one): they depend on every HLSL file and
  # header of the library's folders instead, so that a change there recompiles them.
  set(hlsl_library "")
  foreach(dir IN LISTS _dirs)
    file(GLOB _found ${dir}/*.hlsl ${dir}/*.h)
    list(APPEND hlsl_library ${_found})
  endforeach()
  set(headers "")
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs ${src} ABSOLUTE)
    get_filename_component(name ${src} NAME)
    string(MAKE_C_IDENTIFIER ${name} ident)
    set(spv ${ARG_OUTPUT_DIR}/${name}.spv)
    set(hdr ${ARG_OUTPUT_DIR}/${ident}_spv.h)
    if(name MATCHES "\\.hlsl$")
      # -Od: the library passes no buffers to functions, so its unoptimized SPIR-V is legal.
      set(compile ${VKSHMEM_GLSLANG} -D -V -Od --target-env vulkan1.1 -S comp -e main ${includes} -o ${spv} ${abs})
      set(env vulkan1.1)
      set(depends ${hlsl_library})
    else()
      # Unoptimized (glslc -O crashes on some kernels in Debian 12; shaders/README.md has what
      # spirv-opt -O on the result changes: faster pipeline creation, 4-5x the SPIR-V).
      # -MT: the depfile must name the custom command's output (the header), or ninja rebuilds it every time.
      set(compile ${VKSHMEM_GLSLC} --target-env=vulkan1.2 -MD -MF ${spv}.d -MT ${hdr} ${includes} -o ${spv} ${abs})
      set(env vulkan1.2)
      set(depends DEPFILE ${spv}.d)
    endif()
    add_custom_command(OUTPUT ${hdr}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${ARG_OUTPUT_DIR}
      COMMAND ${compile}
      COMMAND ${VKSHMEM_SPIRV_VAL} --target-env ${env} ${spv}
      COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DOUT=${hdr} -DNAME=${ident}_spv -P ${VKSHMEM_EMBED_SCRIPT}
      DEPENDS ${abs} ${VKSHMEM_EMBED_SCRIPT} ${depends}
      COMMENT "Compiling shader ${name}")
    list(APPEND headers ${hdr})
  endforeach()
  target_sources(${target} PRIVATE ${headers})
  target_include_directories(${target} PRIVATE ${ARG_OUTPUT_DIR})
endfunction()
