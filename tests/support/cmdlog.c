/* The commands a test server received (the fake cluster node, the fault
 * proxy): their names in order, and how many of each. Thread-safe: the
 * server's thread adds, the test's thread reads. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rdlt.h"

void rdlt_cmdlog_init(rdlt_cmdlog *l)
{
    memset(l, 0, sizeof(*l));
    pthread_mutex_init(&l->mu, NULL);
}

void rdlt_cmdlog_free(rdlt_cmdlog *l)
{
    pthread_mutex_destroy(&l->mu);
    free(l->log);
    l->log = NULL;
}

unsigned rdlt_cmdlog_add(rdlt_cmdlog *l, const char *name, size_t len)
{
    char up[sizeof(l->names[0])];
    size_t i, n = len < sizeof(up) - 1 ? len : sizeof(up) - 1;
    unsigned count = 0;
    for (i = 0; i < n; i++)
        up[i] = (char)toupper((unsigned char)name[i]);
    up[n] = '\0';
    pthread_mutex_lock(&l->mu);
    if (l->len + n + 2 > l->cap) {
        l->cap = (l->len + n + 2) * 2;
        l->log = realloc(l->log, l->cap);
        if (l->log == NULL)
            abort();
    }
    if (l->len > 0)
        l->log[l->len++] = ' ';
    memcpy(l->log + l->len, up, n + 1);
    l->len += n;
    for (i = 0; i < RDLT_CMDLOG_NAMES; i++) {
        if (l->names[i][0] == '\0')
            memcpy(l->names[i], up, n + 1);
        if (strcmp(l->names[i], up) == 0) {
            count = ++l->counts[i];
            break;
        }
    }
    pthread_mutex_unlock(&l->mu);
    return count;
}

unsigned rdlt_cmdlog_count(rdlt_cmdlog *l, const char *name)
{
    unsigned n = 0;
    int i;
    pthread_mutex_lock(&l->mu);
    for (i = 0; i < RDLT_CMDLOG_NAMES; i++)
        if (strcasecmp(l->names[i], name) == 0)
            n = l->counts[i];
    pthread_mutex_unlock(&l->mu);
    return n;
}

char *rdlt_cmdlog_text(rdlt_cmdlog *l)
{
    char *s;
    pthread_mutex_lock(&l->mu);
    s = strdup(l->log != NULL ? l->log : "");
    pthread_mutex_unlock(&l->mu);
    assert_non_null(s);
    return s;
}
