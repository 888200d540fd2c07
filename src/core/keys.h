/* keys.c: every key and channel name is built here (DESIGN §6). Any
 * thread; rdl__key() returns memory the caller frees with rdl__free(). */
#ifndef RDL_CORE_KEYS_H
#define RDL_CORE_KEYS_H

#include <stddef.h>

#include "rdl.h"

#define RDL__NAME_MAX 1024
#define RDL__PREFIX_MAX 64

/* 0 if name is a valid lock name (1..RDL__NAME_MAX bytes, and not an
 * untagged name starting with '}', see keys.c), else RDL_EINVAL. */
int rdl__name_check(const char *name);
/* 0 if prefix is valid, else RDL_EINVAL. */
int rdl__prefix_check(const char *prefix);
/* If s[0..len) holds a Redis Cluster hash tag (first '{', first '}' after
 * it, non-empty between), stores its offset and length and returns 1. */
int rdl__hash_tag(const char *s, size_t len, size_t *off, size_t *taglen);
/* "<prefix>:<kind>[.<suffix>]:<tagged-name>" where tagged-name is name if
 * it holds a hash tag, else "{name}". Returns an rdl__malloc'd string or
 * NULL. */
char *rdl__key(const char *prefix, const char *kind, const char *name,
               const char *suffix);

#endif
