/* errmsg.c: the detail rdl_client_errmsg() returns, kept per thread and
 * per client. Any thread; the strings are the library's. */
#ifndef RDL_CORE_ERRMSG_H
#define RDL_CORE_ERRMSG_H

#include "rdl.h"

void rdl__errmsg_set(const rdl_client_t *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The calling thread's detail for c ("" if none). */
const char *rdl__errmsg_get(const rdl_client_t *c);

#endif
