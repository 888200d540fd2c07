/* rdl_client_errmsg(): the detail of the last error a call on a client
 * returned to the calling thread. Kept per thread, so threads sharing a
 * client never see each other's messages. */
#include <stdarg.h>
#include <stdio.h>

#include "errmsg.h"

static _Thread_local struct {
    const rdl_client_t *client;
    char msg[256];
} last;

void rdl__errmsg_set(const rdl_client_t *c, const char *fmt, ...)
{
    va_list ap;
    last.client = c;
    va_start(ap, fmt);
    vsnprintf(last.msg, sizeof(last.msg), fmt, ap);
    va_end(ap);
}

const char *rdl__errmsg_get(const rdl_client_t *c)
{
    return c != NULL && last.client == c ? last.msg : "";
}

const char *rdl_client_errmsg(const rdl_client_t *c)
{
    return rdl__errmsg_get(c);
}
