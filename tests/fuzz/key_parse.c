/* Fuzz target `key_parse`: rdl__key_parse() (src/core/keys.c) on any key
 * bytes, as the listing of locks reads them from SCAN: keys that other
 * programs wrote, of any length, with NULs, braces and colons anywhere.
 * The input is the prefix (up to the first NUL; "rdl" if it is not a
 * valid prefix), then the key (every byte after that NUL).
 *
 * Invariants: a key taken as rdl's has parts inside the key, a kind and
 * suffix without separators or braces, a name that rdl__name_check()
 * accepts, and rdl__key() of those parts gives back exactly the key. */
#include "fuzz.h"

#include "alloc.h"
#include "keys.h"

static int inside(const char *p, size_t n, const char *key, size_t len)
{
    return p >= key && n <= len && p + n <= key + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *prefix = fuzz_take(&data, &size), *key, *kind, *suffix, *name, *k;
    rdl__key_parts parts;
    int rc;

    if (prefix == NULL || rdl__prefix_check(prefix) != 0) {
        free(prefix);
        prefix = fuzz_dup_n("rdl", 3);
    }
    /* Exactly the key's bytes: a read past them is ASan's to report. */
    key = malloc(size > 0 ? size : 1);
    FUZZ_CHECK(key != NULL);
    memcpy(key, data, size);
    memset(&parts, 0, sizeof(parts));
    rc = rdl__key_parse(prefix, key, size, &parts);
    FUZZ_CHECK(rc == 0 || rc == 1);
    if (rc == 1) {
        FUZZ_CHECK(inside(parts.kind, parts.kind_len, key, size));
        FUZZ_CHECK(parts.kind_len > 0);
        FUZZ_CHECK(inside(parts.name, parts.name_len, key, size));
        FUZZ_CHECK(parts.name_len >= 1 && parts.name_len <= RDL__NAME_MAX);
        FUZZ_CHECK((parts.suffix == NULL) == (parts.suffix_len == 0));
        kind = fuzz_dup_n(parts.kind, parts.kind_len);
        FUZZ_CHECK(strpbrk(kind, ":.{}") == NULL);
        suffix = NULL;
        if (parts.suffix != NULL) {
            FUZZ_CHECK(inside(parts.suffix, parts.suffix_len, key, size));
            suffix = fuzz_dup_n(parts.suffix, parts.suffix_len);
            FUZZ_CHECK(strpbrk(suffix, ":{}") == NULL);
        }
        FUZZ_CHECK(memchr(parts.name, '\0', parts.name_len) == NULL);
        name = fuzz_dup_n(parts.name, parts.name_len);
        FUZZ_CHECK(rdl__name_check(name) == 0);
        k = rdl__key(prefix, kind, name, suffix);
        FUZZ_CHECK(k != NULL);
        FUZZ_CHECK(strlen(k) == size && memcmp(k, key, size) == 0);
        rdl__free(k);
        free(kind);
        free(suffix);
        free(name);
    }
    free(key);
    free(prefix);
    return 0;
}
