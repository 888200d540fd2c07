# Read by cpack (CPACK_PROJECT_CONFIG_FILE, set in cmake/Package.cmake) once
# per generator. A Debian package installs under /usr, but the tree decided
# its libdir and the rdl tool's RUNPATH from the prefix it was configured
# with: warn when that was not /usr, since the package then has /usr/lib
# rather than /usr/lib/<multiarch> and a (harmless) $ORIGIN RUNPATH.
if(CPACK_GENERATOR STREQUAL "DEB"
   AND NOT CPACK_RDL_CONFIGURED_PREFIX STREQUAL "/usr")
    message(WARNING
        "rdl: this tree was configured with CMAKE_INSTALL_PREFIX="
        "${CPACK_RDL_CONFIGURED_PREFIX}; for a Debian-layout package "
        "(multiarch libdir, no RUNPATH) configure it with "
        "-DCMAKE_INSTALL_PREFIX=/usr")
endif()
