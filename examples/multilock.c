/* A MultiLock: an order, its payment and its stock, all or nothing.
 *
 *   RDL_URL=redis://127.0.0.1:6379 ./multilock
 *
 * Two threads each need the three resources at once, and list them in
 * different orders. The multilock takes its parts in one canonical order,
 * so the threads cannot deadlock; each either holds all three or waits.
 * The fair lock among the parts shows that any kind can be a part. */
#include <stdio.h>
#include <stdlib.h>

#include <rdl.h>

#include "example_server.h"
#include <uv.h>

static rdl_lock_t *order_first, *stock_first;

static void worker(void *arg)
{
    rdl_lock_t *ml = arg == NULL ? order_first : stock_first;
    const char *who = arg == NULL ? "thread A" : "thread B";
    rdl_owner_t me = rdl_owner_self();
    int i, rc;

    for (i = 0; i < 3; i++) {
        rc = rdl_lock_acquire(ml, 5000, 10000);
        if (rc != 0) {
            fprintf(stderr, "%s: %s\n", who, rdl_strerror(rc));
            return;
        }
        printf("%s holds %s (part tokens %llu, %llu, %llu)\n", who,
               rdl_lock_name(ml),
               (unsigned long long)rdl_multilock_part_token(ml, me, 0),
               (unsigned long long)rdl_multilock_part_token(ml, me, 1),
               (unsigned long long)rdl_multilock_part_token(ml, me, 2));
        fflush(stdout);
        uv_sleep(20);
        if ((rc = rdl_lock_release(ml)) != 0)
            fprintf(stderr, "%s: release: %s\n", who, rdl_strerror(rc));
    }
}

int main(void)
{
    const char *url = getenv("RDL_URL");
    rdl_client_t *client;
    rdl_lock_t *order = NULL, *payment = NULL, *stock = NULL;
    rdl_lock_t *parts[3];
    uv_thread_t a, b;
    int rc;

    if ((rc = rdl_client_new(&client)) != 0)
        return 1;
    if ((url != NULL && (rc = example_set_server(client, url)) != 0) ||
        (rc = rdl_client_connect(client)) != 0 ||
        (rc = rdl_lock_new(client, "example:order:42", &order)) != 0 ||
        (rc = rdl_fairlock_new(client, "example:payment:42", &payment)) != 0 ||
        (rc = rdl_lock_new(client, "example:stock:42", &stock)) != 0) {
        fprintf(stderr, "set-up: %s (%s)\n", rdl_strerror(rc),
                rdl_client_errmsg(client));
        return 1;
    }
    parts[0] = order;
    parts[1] = payment;
    parts[2] = stock;
    if ((rc = rdl_multilock_new(parts, 3, &order_first)) != 0)
        return 1;
    parts[0] = stock; /* the same three, listed the other way round */
    parts[2] = order;
    if ((rc = rdl_multilock_new(parts, 3, &stock_first)) != 0)
        return 1;

    uv_thread_create(&a, worker, NULL);
    uv_thread_create(&b, worker, "b");
    uv_thread_join(&a);
    uv_thread_join(&b);

    rdl_lock_free(order_first);
    rdl_lock_free(stock_first);
    rdl_lock_free(order);
    rdl_lock_free(payment);
    rdl_lock_free(stock);
    rdl_client_free(client);
    return 0;
}
