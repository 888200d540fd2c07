# Install rules: the library, its headers, a CMake package (rdlConfig.cmake,
# rdlConfigVersion.cmake, rdlTargets.cmake exporting rdl::rdl) and rdl.pc.
# Included from the top-level CMakeLists.txt when RDL_INSTALL is ON.
#
# Consumers:
#   find_package(rdl REQUIRED)             then link rdl::rdl
#   pkg-config --cflags --libs rdl         (add --static for a static librdl)
#
# Components: rdl_Runtime (the shared library and its SONAME link; also the
# rdl tool, from tools/rdl, its man page and the README) and
# rdl_Development (headers, the .so name link, the static archive, the
# package files), so packagers can split lib and -dev packages: the .deb
# packages rdl and rdl-dev of cmake/Package.cmake are these two.

include(CMakePackageConfigHelpers)

set(rdl_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/rdl")
set(rdl_pkgconfig_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

install(TARGETS rdl
    EXPORT rdlTargets
    RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
        COMPONENT rdl_Runtime
    LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        COMPONENT rdl_Runtime
        NAMELINK_COMPONENT rdl_Development
    ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        COMPONENT rdl_Development)

# rdl.hpp is the header-only C++ layer: C++ consumers of rdl::rdl (or of
# rdl.pc) include it with no other target or flag.
install(FILES include/rdl.h include/rdl.hpp
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
    COMPONENT rdl_Development)
install(DIRECTORY include/rdl/
    DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/rdl"
    COMPONENT rdl_Development
    FILES_MATCHING PATTERN "*.h")

# rdlTargets.cmake names the targets rdl links to by their names in this
# build: PkgConfig::rdl_uv always (public), and for a static library also
# PkgConfig::rdl_hiredis, PkgConfig::rdl_sodium and Threads::Threads. The
# package config recreates them before loading it, so it needs to know which
# kind of library was built.
get_target_property(rdl_library_type rdl TYPE)

install(EXPORT rdlTargets
    NAMESPACE rdl::
    DESTINATION "${rdl_cmake_dir}"
    COMPONENT rdl_Development)

configure_package_config_file(
    "${CMAKE_CURRENT_SOURCE_DIR}/cmake/rdlConfig.cmake.in"
    "${CMAKE_CURRENT_BINARY_DIR}/rdlConfig.cmake"
    INSTALL_DESTINATION "${rdl_cmake_dir}")

# Before 1.0 a minor release may break the API, so only the same minor
# version is compatible (the SameMinorVersion rule); from 1.0 on, the same
# major version.
if(PROJECT_VERSION_MAJOR EQUAL 0)
    set(rdl_compatibility SameMinorVersion)
else()
    set(rdl_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
    "${CMAKE_CURRENT_BINARY_DIR}/rdlConfigVersion.cmake"
    VERSION "${PROJECT_VERSION}"
    COMPATIBILITY ${rdl_compatibility})

install(FILES
        "${CMAKE_CURRENT_BINARY_DIR}/rdlConfig.cmake"
        "${CMAKE_CURRENT_BINARY_DIR}/rdlConfigVersion.cmake"
    DESTINATION "${rdl_cmake_dir}"
    COMPONENT rdl_Development)

# rdl.pc is written at install time, not at configure time, so that it names
# the prefix actually installed to (`cmake --install build --prefix DIR`
# overrides CMAKE_INSTALL_PREFIX only then). Directories that GNUInstallDirs
# made relative are written relative to ${prefix}.
foreach(dir LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
        set(rdl_pc_${dir} "${CMAKE_INSTALL_${dir}}")
    else()
        set(rdl_pc_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
    endif()
endforeach()
set(rdl_pc_file "${CMAKE_CURRENT_BINARY_DIR}/rdl.pc")
install(CODE "
    set(rdl_pc_prefix \"\${CMAKE_INSTALL_PREFIX}\")
    set(rdl_pc_libdir [==[${rdl_pc_LIBDIR}]==])
    set(rdl_pc_includedir [==[${rdl_pc_INCLUDEDIR}]==])
    set(rdl_pc_version [==[${PROJECT_VERSION}]==])
    set(rdl_pc_description [==[${PROJECT_DESCRIPTION}]==])
    set(rdl_pc_requires_private [==[${rdl_pc_requires_private}]==])
    configure_file([==[${CMAKE_CURRENT_SOURCE_DIR}/cmake/rdl.pc.in]==]
        [==[${rdl_pc_file}]==] @ONLY)
    " COMPONENT rdl_Development)
install(FILES "${rdl_pc_file}"
    DESTINATION "${rdl_pkgconfig_dir}"
    COMPONENT rdl_Development)

if(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/docs/rdl.1")
    install(FILES docs/rdl.1
        DESTINATION "${CMAKE_INSTALL_MANDIR}/man1"
        COMPONENT rdl_Runtime)
endif()

install(FILES README.md
    DESTINATION "${CMAKE_INSTALL_DOCDIR}"
    COMPONENT rdl_Runtime)
