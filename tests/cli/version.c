/* Prints the version of the library it runs with (rdl_version_string()),
 * then that of the headers it was built with (RDL_VERSION_STRING), one a
 * line, for tests/cli/test_version.sh to compare with rdl --version.
 * Exits 1 if rdl_version() and RDL_VERSION_HEX do not say the same. */
#include <rdl.h>

#include <stdio.h>

int main(void)
{
    printf("%s\n%s\n", rdl_version_string(), RDL_VERSION_STRING);
    return rdl_version() == RDL_VERSION_HEX ? 0 : 1;
}
