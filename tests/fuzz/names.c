/* Fuzz target `names`: the checks and builders of names and prefixes
 * (src/core/keys.c: rdl__name_check, rdl__prefix_check, rdl__hash_tag,
 * rdl__key, rdl__client_channel) on any bytes, as an application hands
 * them a lock name or a prefix from its own input. The input is one C
 * string (a NUL ends it, as it would end the caller's), tried as a name
 * and as a prefix.
 *
 * Invariants: a hash tag found lies inside the string and is not empty;
 * a name accepted gives, for every kind and suffix, a key that
 * rdl__key_parse() reads back to a name of the same key, and every key
 * and channel of the name hashes to one slot (its tag's, if it has one);
 * a prefix accepted has no
 * brace, whitespace or control byte, and its keys are read back under
 * it. */
#include "fuzz.h"

#include "alloc.h"
#include "keys.h"
#include "slot.h"

static const char *const kinds[] = {RDL__KIND_LOCK, RDL__KIND_FAIR,
                                    RDL__KIND_RWLOCK, RDL__KIND_SEMAPHORE,
                                    RDL__KIND_LATCH};
static const char *const suffixes[] = {NULL, RDL__SUFFIX_FENCE, "ww", "x",
                                       "ch"};

/* The slot a string hashes to (its tag's, else the whole string's). */
static unsigned slot_of(const char *s, size_t n)
{
    return rdl__slot(s, n);
}

static void check_key(const char *prefix, const char *kind, const char *name,
                      const char *suffix, unsigned slot)
{
    rdl__key_parts p;
    char *key = rdl__key(prefix, kind, name, suffix), *again, *back, *ch;
    size_t len;
    FUZZ_CHECK(key != NULL);
    len = strlen(key);
    FUZZ_CHECK(slot_of(key, len) == slot);
    FUZZ_CHECK(rdl__key_parse(prefix, key, len, &p) == 1);
    FUZZ_CHECK(p.kind_len == strlen(kind) &&
               memcmp(p.kind, kind, p.kind_len) == 0);
    FUZZ_CHECK(suffix == NULL
                   ? p.suffix == NULL
                   : p.suffix_len == strlen(suffix) &&
                         memcmp(p.suffix, suffix, p.suffix_len) == 0);
    back = rdl__strndup(p.name, p.name_len);
    FUZZ_CHECK(back != NULL);
    again = rdl__key(prefix, kind, back, suffix);
    FUZZ_CHECK(again != NULL && strcmp(again, key) == 0);
    ch = rdl__client_channel(key, "0123456789abcdef");
    FUZZ_CHECK(ch != NULL && slot_of(ch, strlen(ch)) == slot);
    rdl__free(ch);
    rdl__free(again);
    rdl__free(back);
    rdl__free(key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    size_t n, off = 0, tl = 0, i, j;
    unsigned slot;

    if (s == NULL)
        return 0;
    n = strlen(s);
    if (rdl__hash_tag(s, n, &off, &tl)) {
        FUZZ_CHECK(off >= 1 && tl >= 1 && off + tl < n);
        FUZZ_CHECK(s[off - 1] == '{' && s[off + tl] == '}');
        FUZZ_CHECK(memchr(s + off, '}', tl) == NULL);
        slot = rdl__crc16(s + off, tl) & 16383;
    } else {
        /* Untagged: the slot of "{name}" (Redis's rule on the wrapped
         * name, whose first '}' may come before the wrapper's). */
        char *wrapped = malloc(n + 3);
        FUZZ_CHECK(wrapped != NULL);
        wrapped[0] = '{';
        memcpy(wrapped + 1, s, n);
        wrapped[n + 1] = '}';
        slot = slot_of(wrapped, n + 2);
        free(wrapped);
    }
    if (rdl__name_check(s) == 0) {
        FUZZ_CHECK(n >= 1 && n <= RDL__NAME_MAX);
        for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
            for (j = 0; j < sizeof(suffixes) / sizeof(suffixes[0]); j++)
                check_key("rdl", kinds[i], s, suffixes[j], slot);
    } else {
        FUZZ_CHECK(n == 0 || n > RDL__NAME_MAX || s[0] == '}');
    }
    if (rdl__prefix_check(s) == 0) {
        FUZZ_CHECK(n >= 1 && n <= RDL__PREFIX_MAX);
        for (i = 0; i < n; i++)
            FUZZ_CHECK(s[i] != '{' && s[i] != '}' &&
                       (unsigned char)s[i] > ' ' && s[i] != 0x7f);
        check_key(s, RDL__KIND_LOCK, "name", NULL,
                  rdl__crc16("name", 4) & 16383);
        check_key(s, RDL__KIND_RWLOCK, "{tag}x", "fence",
                  rdl__crc16("tag", 3) & 16383);
    }
    free(s);
    return 0;
}
