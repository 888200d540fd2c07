/* The program every consumer project builds: it uses the installed (or
 * added) headers and library the way an application would, so a missing
 * header, a missing symbol or a header/library version mismatch fails the
 * build or the run. One file shared by the three projects, which differ
 * only in how they find rdl. */
#include <rdl.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    rdl_client_t *client = NULL;
    const char *version = rdl_version_string();
    int rc;

    if (version == NULL || strcmp(version, RDL_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: library %s, headers %s\n",
                version ? version : "(null)", RDL_VERSION_STRING);
        return 1;
    }
    if (rdl_version() != RDL_VERSION_HEX) {
        fprintf(stderr, "consumer: rdl_version() != RDL_VERSION_HEX\n");
        return 1;
    }
    printf("consumer: rdl %s; RDL_EBUSY: %s\n", version,
           rdl_strerror(RDL_EBUSY));

    rc = rdl_client_new(&client);
    if (rc != 0) {
        fprintf(stderr, "consumer: rdl_client_new: %s\n", rdl_strerror(rc));
        return 1;
    }
    rdl_client_free(client);
    return 0;
}
