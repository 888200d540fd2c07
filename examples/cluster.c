/* Locks on a Redis Cluster: the same calls as on one server, only the URL
 * differs. Names with a hash tag ("{order:42}:...") share a slot, so they
 * live on one master; other names spread over all of them.
 *
 *   url=$(bash tools/cluster.sh start /tmp/rdl-cluster)
 *   RDL_URL=$url ./cluster
 *   bash tools/cluster.sh stop /tmp/rdl-cluster */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"

static const char *const names[] = {
    "{order:42}:stock", "{order:42}:payment", "invoices", "reports", "users",
};
#define NLOCKS (sizeof(names) / sizeof(names[0]))

int main(void)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    rdl_lock_t *locks[NLOCKS] = {NULL};
    size_t i;
    int rc, status = 0;

    if (url == NULL) {
        fprintf(stderr, "set RDL_URL=redis+cluster://host:port[,...]\n");
        return 2;
    }
    if ((rc = rdl_client_new(&client)) != 0) {
        fprintf(stderr, "rdl_client_new: %s\n", rdl_strerror(rc));
        return 1;
    }
    if ((rc = example_set_server(client, url)) != 0 ||
        (rc = rdl_client_connect(client)) != 0) {
        fprintf(stderr, "%s: %s (%s)\n", url, rdl_strerror(rc),
                rdl_client_errmsg(client));
        rdl_client_free(client);
        return 1;
    }
    for (i = 0; i < NLOCKS && status == 0; i++) {
        if ((rc = rdl_lock_new(client, names[i], &locks[i])) != 0 ||
            (rc = rdl_lock_acquire(locks[i], 5000, 10000)) != 0) {
            fprintf(stderr, "%s: %s (%s)\n", names[i], rdl_strerror(rc),
                    rdl_client_errmsg(client));
            status = 1;
            break;
        }
        printf("holding \"%s\", fencing token %llu\n", names[i],
               (unsigned long long)rdl_lock_fencing_token(locks[i],
                                                          rdl_owner_self()));
    }
    for (i = 0; i < NLOCKS; i++) {
        if (locks[i] != NULL &&
            rdl_lock_fencing_token(locks[i], rdl_owner_self()) != 0 &&
            (rc = rdl_lock_release(locks[i])) != 0) {
            fprintf(stderr, "release %s: %s\n", names[i], rdl_strerror(rc));
            status = 1;
        }
        rdl_lock_free(locks[i]);
    }
    rdl_client_free(client);
    return status;
}
