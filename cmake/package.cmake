# SPDX-License-Identifier: BSL-1.0
# vkshmem as a dependency of other projects, from an install tree (cmake --install):
#   <libdir>/cmake/vkshmem/   vkshmemConfig.cmake (find_package), its version file, the exported
#                             target vkshmem::vkshmem, and vkshmem_add_shaders() with its helper
#   <libdir>/pkgconfig/       vkshmem.pc (pkg-config; relocatable through ${pcfiledir})
# Every path in them is relative to the install prefix, so the tree may move.
include(CMakePackageConfigHelpers)

set(VKSHMEM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/vkshmem)
set(VKSHMEM_INSTALL_SHADERDIR ${CMAKE_INSTALL_DATADIR}/vkshmem/shaders)

install(EXPORT vkshmemTargets NAMESPACE vkshmem:: FILE vkshmemTargets.cmake
        DESTINATION ${VKSHMEM_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vkshmemConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/vkshmemConfig.cmake
  INSTALL_DESTINATION ${VKSHMEM_INSTALL_CMAKEDIR}
  PATH_VARS VKSHMEM_INSTALL_SHADERDIR)
# 0.x: a minor release may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/vkshmemConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/vkshmemConfig.cmake
              ${PROJECT_BINARY_DIR}/package/vkshmemConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/VkshmemShaders.cmake
              ${PROJECT_SOURCE_DIR}/cmake/embed_spirv.cmake
        DESTINATION ${VKSHMEM_INSTALL_CMAKEDIR})

file(RELATIVE_PATH VKSHMEM_PC_UP "${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" VKSHMEM_PC_UP "${VKSHMEM_PC_UP}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/vkshmem.pc.in ${PROJECT_BINARY_DIR}/package/vkshmem.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/vkshmem.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
