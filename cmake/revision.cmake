# SPDX-License-Identifier: BSL-1.0
# cmake -DSRC=<source tree> -DOUT=<header> -P revision.cmake
#
# Writes OUT with `#define VKSHMEM_GIT_REVISION "<git describe --always --dirty>"` of the source
# tree ("unknown" outside a git checkout, as in a release tarball), and only when that changed, so
# a build recompiles the one file that includes it only when the revision moved.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty --abbrev=12
                OUTPUT_VARIABLE rev RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT rc EQUAL 0 OR rev STREQUAL "")
  set(rev unknown)
endif()
set(content "#define VKSHMEM_GIT_REVISION \"${rev}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
