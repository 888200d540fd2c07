/* keys.c: every key and channel name is built here (docs/design.md#key-layout),
 * and read back here. Any thread; rdl__key() returns memory the caller frees
 * with rdl__free(). */
#ifndef RDL_CORE_KEYS_H
#define RDL_CORE_KEYS_H

#include <stddef.h>

#include "rdl.h"

#define RDL__NAME_MAX 1024
#define RDL__PREFIX_MAX 64

/* The kind segments of the keys, one per kind of object: the layout's
 * <kind>, named for the kind (lock, fair, rwlock, semaphore, latch). Keys
 * of one kind share a segment whatever view opens them (both sides of a
 * read-write lock use RDL__KIND_RWLOCK). The read-write lock and the
 * semaphore store theirs in the short form ("rw", "sem") that every
 * release has used: a lock's keys are its identity across releases, and
 * clients of two releases running side by side (a rolling upgrade) must
 * lock the same keys (docs/design.md#key-layout). rdl__key_parse() and
 * the listing (list.c) read them back, so they are written here only. */
#define RDL__KIND_LOCK "lock"
#define RDL__KIND_FAIR "fair"
#define RDL__KIND_RWLOCK "rw"
#define RDL__KIND_SEMAPHORE "sem"
#define RDL__KIND_LATCH "latch"
/* The suffix of the key that keeps a lock's last fencing token when its
 * hold key does not (the read-write lock's; lock.c builds it for every
 * kind). */
#define RDL__SUFFIX_FENCE "fence"

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
/* "<channel>:<client id>": where one client hears the messages that name
 * its waiters, for kinds whose every message names one (the scripts build
 * the same name: lib/waiters.lua waiter_say). The hash tag is channel's,
 * so the slot is too. Returns an rdl__malloc'd string or NULL. */
char *rdl__client_channel(const char *channel, const char *client_id);

/* The parts of a key, as rdl__key_parse() finds them. Each points into
 * the key; the lengths exclude any terminator. */
typedef struct rdl__key_parts {
    const char *kind; /* the kind segment, e.g. "rw" */
    size_t kind_len;
    const char *suffix; /* e.g. "fence"; NULL (length 0) if none */
    size_t suffix_len;
    const char *name; /* the name that rdl__key() makes this key of */
    size_t name_len;
} rdl__key_parts;

/* rdl__key() the other way: 1 if key[0..len) is a key of `prefix` in the
 * layout above, with its parts stored in *out; 0 if it is not one of
 * ours (another prefix, no kind, a brace before the name, no hash tag in
 * the name part, a NUL byte, or a name that rdl__name_check() refuses).
 * The name is X for a tagged part "{X}" when X holds no tag of its own
 * (the wrapping rdl__key() adds), else the part itself, so that
 * rdl__key(prefix, kind, name, suffix) gives the key back. */
int rdl__key_parse(const char *prefix, const char *key, size_t len,
                   rdl__key_parts *out);

#endif
