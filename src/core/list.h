/* list.c: the listing of locks (rdl_client_list_locks). The reading of a
 * SCAN reply is exposed for the fuzz target reply_scan (tests/fuzz). */
#ifndef RDL_CORE_LIST_H
#define RDL_CORE_LIST_H

#include <stddef.h>

#include <hiredis/hiredis.h>

/* 1 if r is a SCAN reply, [cursor, [key, ...]], whose cursor is 1 to
 * cursor_max - 1 bytes and whose keys are all strings; else 0. */
int rdl__list_scan_ok(const redisReply *r, size_t cursor_max);

#endif
