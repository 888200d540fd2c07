# CPack configuration: Debian packages of the install (cmake/Install.cmake).
# Included from the top-level CMakeLists.txt when rdl is the top-level
# project and RDL_INSTALL is ON.
#
#   cmake -S . -B build-deb -DCMAKE_INSTALL_PREFIX=/usr -DRDL_BUILD_TESTS=OFF
#   cmake --build build-deb
#   (cd build-deb && cpack -G DEB)
#
# makes two packages, one per install component:
#   rdl      (rdl_Runtime)      librdl.so.0.MINOR (the SONAME: before 1.0,
#                               one per minor release), the rdl tool,
#                               rdl(1), README
#   rdl-dev  (rdl_Development)  headers, librdl.so, the CMake package files,
#                               rdl.pc
# rdl's Depends are computed by dpkg-shlibdeps (libc6, libuv1,
# libhiredis0.14, libsodium23, and libssl3 with TLS); rdl-dev depends on rdl
# of the same version and on the -dev packages its rdl.pc and rdlConfig.cmake
# look up.
#
# Configure with CMAKE_INSTALL_PREFIX=/usr: the package installs under /usr
# whatever the prefix, but the libdir (lib/<multiarch> only for /usr) and the
# tool's RUNPATH (none for /usr: tools/rdl/CMakeLists.txt) are chosen from
# the configured prefix. cpack warns when it was something else.

set(CPACK_PACKAGE_NAME "${PROJECT_NAME}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}") # include/rdl/version.h
set(CPACK_PACKAGE_VERSION_MAJOR "${PROJECT_VERSION_MAJOR}")
set(CPACK_PACKAGE_VERSION_MINOR "${PROJECT_VERSION_MINOR}")
set(CPACK_PACKAGE_VERSION_PATCH "${PROJECT_VERSION_PATCH}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VENDOR "rdl maintainers")
set(CPACK_PACKAGE_CONTACT "rdl maintainers")

# Only the two components: anything installed without one (none today)
# stays out of the packages.
set(CPACK_COMPONENTS_ALL rdl_Runtime rdl_Development)
set(CPACK_COMPONENT_RDL_DEVELOPMENT_DEPENDS rdl_Runtime)
set(CPACK_COMPONENT_RDL_RUNTIME_DESCRIPTION
    "librdl, the shared library: locks, fair locks, read-write locks,
semaphores and count-down latches on Redis (standalone, Cluster or
Sentinel), with a watchdog that renews leases. Also rdl(1), flock(1) for
a fleet of machines.")
set(CPACK_COMPONENT_RDL_DEVELOPMENT_DESCRIPTION
    "Headers (rdl.h, and rdl.hpp for C++17), the CMake package
(find_package(rdl), rdl::rdl) and the pkg-config file (rdl.pc) for
building programs against librdl.")

# Debian.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON) # rdl-dev: rdl (= version)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT) # NAME_VERSION_ARCH.deb
set(CPACK_DEBIAN_RDL_RUNTIME_PACKAGE_NAME "rdl")
set(CPACK_DEBIAN_RDL_RUNTIME_PACKAGE_SECTION "libs")
set(CPACK_DEBIAN_RDL_RUNTIME_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_RDL_DEVELOPMENT_PACKAGE_NAME "rdl-dev")
set(CPACK_DEBIAN_RDL_DEVELOPMENT_PACKAGE_SECTION "libdevel")
# rdl.pc: Requires libuv, Requires.private hiredis libsodium (openssl), all
# of which pkg-config wants present even for a shared link; rdlConfig.cmake
# finds libuv with pkg-config.
set(rdl_dev_depends libuv1-dev libhiredis-dev libsodium-dev)
if(RDL_WITH_TLS)
    list(APPEND rdl_dev_depends libssl-dev)
endif()
list(APPEND rdl_dev_depends pkg-config)
list(JOIN rdl_dev_depends ", " CPACK_DEBIAN_RDL_DEVELOPMENT_PACKAGE_DEPENDS)
# Stripped, as Debian ships binaries (cmake --install keeps the symbols).
set(CPACK_STRIP_FILES ON)
# A shlibs file (librdl 0.MINOR rdl (>= VERSION), from the SONAME) and the
# ldconfig calls.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

# Checked when cpack runs (cmake/PackageCheck.cmake).
set(CPACK_RDL_CONFIGURED_PREFIX "${CMAKE_INSTALL_PREFIX}")
set(CPACK_PROJECT_CONFIG_FILE
    "${CMAKE_CURRENT_SOURCE_DIR}/cmake/PackageCheck.cmake")

# `cpack --config CPackSourceConfig.cmake`: the sources, without build trees.
set(CPACK_SOURCE_IGNORE_FILES
    "/\\.git/" "/build/" "/build-[^/]*/")

set(CPACK_VERBATIM_VARIABLES ON) # values written as they are
include(CPack)
