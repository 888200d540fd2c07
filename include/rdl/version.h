/* rdl: version of the headers. The library reports its own version through
 * rdl_version() and rdl_version_string(); compare them with these macros to
 * detect a header/library mismatch. CMakeLists.txt reads the project version
 * from this file, so it is the one place the version is written. */
#ifndef RDL_VERSION_H
#define RDL_VERSION_H

#define RDL_VERSION_MAJOR 0
#define RDL_VERSION_MINOR 2
#define RDL_VERSION_PATCH 0

#define RDL_VERSION_HEX                                                        \
    ((RDL_VERSION_MAJOR << 16) | (RDL_VERSION_MINOR << 8) | RDL_VERSION_PATCH)

#define RDL_STRINGIFY_(x) #x
#define RDL_STRINGIFY(x) RDL_STRINGIFY_(x)
#define RDL_VERSION_STRING                                                     \
    RDL_STRINGIFY(RDL_VERSION_MAJOR)                                           \
    "." RDL_STRINGIFY(RDL_VERSION_MINOR) "." RDL_STRINGIFY(RDL_VERSION_PATCH)

#endif
