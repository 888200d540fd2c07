/* Preloaded (LD_PRELOAD) in front of librdl by tests/cli/test_version.sh:
 * a library that says it is another version than the headers the tool was
 * built with, as a librdl upgraded or downgraded under the tool would. */
#include <rdl.h>

const char *rdl_version_string(void)
{
    return "99.98.97";
}
