/* Fuzz target `reply_scan`: what the listing of locks (src/core/list.c)
 * reads from a master: a SCAN reply, [cursor, [key, ...]], checked by
 * rdl__list_scan_ok(), then each of its keys read back by
 * rdl__key_parse() under the prefix "rdl", as the listing does with the
 * keys other programs wrote. The input is the RESP reply.
 *
 * Invariants: a reply taken has a cursor that fits the listing's buffer
 * and only string keys; a key taken as rdl's is rebuilt exactly by
 * rdl__key() from its parts. */
#include "fuzz.h"

#include "alloc.h"
#include "keys.h"
#include "list.h"

#define CURSOR_MAX 32 /* list.c's cursor buffer */

static void check_key(const redisReply *key)
{
    rdl__key_parts p;
    char *kind, *suffix = NULL, *name, *k;
    if (!rdl__key_parse("rdl", key->str, key->len, &p))
        return;
    kind = fuzz_dup_n(p.kind, p.kind_len);
    if (p.suffix != NULL)
        suffix = fuzz_dup_n(p.suffix, p.suffix_len);
    name = fuzz_dup_n(p.name, p.name_len);
    FUZZ_CHECK(rdl__name_check(name) == 0);
    k = rdl__key("rdl", kind, name, suffix);
    FUZZ_CHECK(k != NULL && strlen(k) == key->len &&
               memcmp(k, key->str, key->len) == 0);
    rdl__free(k);
    free(kind);
    free(suffix);
    free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReply *r = fuzz_reply(data, size);
    size_t i;

    if (r == NULL)
        return 0;
    if (rdl__list_scan_ok(r, CURSOR_MAX)) {
        const redisReply *keys = r->element[1];
        FUZZ_CHECK(r->type == REDIS_REPLY_ARRAY && r->elements == 2);
        FUZZ_CHECK(r->element[0]->type == REDIS_REPLY_STRING &&
                   r->element[0]->len >= 1 && r->element[0]->len < CURSOR_MAX);
        FUZZ_CHECK(keys->type == REDIS_REPLY_ARRAY);
        for (i = 0; i < keys->elements; i++) {
            FUZZ_CHECK(keys->element[i]->type == REDIS_REPLY_STRING);
            check_key(keys->element[i]);
        }
    }
    freeReplyObject(r);
    return 0;
}
