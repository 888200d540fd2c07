/** @file
 * rdl: version of the headers. The library reports its own version through
 * rdl_version() and rdl_version_string(); compare them with these macros to
 * detect a header/library mismatch. CMakeLists.txt reads the project version
 * from this file, so it is the one place the version is written. */
#ifndef RDL_VERSION_H
#define RDL_VERSION_H

/** The major version (Semantic Versioning, as CHANGELOG.md says). The
 * shared library's SONAME is librdl.so.MAJOR from 1.0, librdl.so.0.MINOR
 * before. */
#define RDL_VERSION_MAJOR 0
/** The minor version. */
#define RDL_VERSION_MINOR 2
/** The patch version. */
#define RDL_VERSION_PATCH 0

/** The version as one number, 0x00MMmmpp, as rdl_version() returns it. */
#define RDL_VERSION_HEX                                                        \
    ((RDL_VERSION_MAJOR << 16) | (RDL_VERSION_MINOR << 8) | RDL_VERSION_PATCH)

#define RDL_STRINGIFY_(x) #x
/** `x`, macros in it expanded, as a string literal. */
#define RDL_STRINGIFY(x) RDL_STRINGIFY_(x)
/** The version as "major.minor.patch" (rdl_version_string()'s form). */
#define RDL_VERSION_STRING                                                     \
    RDL_STRINGIFY(RDL_VERSION_MAJOR)                                           \
    "." RDL_STRINGIFY(RDL_VERSION_MINOR) "." RDL_STRINGIFY(RDL_VERSION_PATCH)

#endif
