/* Names of keys and channels: the one place they are built, and read
 * back (rdl__key_parse, for the listing of locks). The layout, every key
 * and channel of each kind, and why a name can neither reach another
 * lock's key nor scatter over slots: docs/design.md#key-layout (its
 * history: docs/design-notes.md "Key layout"). In short,
 * "<prefix>:<kind>[.<suffix>]:<tagged-name>", the name last. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "keys.h"

/* 1 if name[0..n) is a valid name: see rdl__name_check(). */
static int name_ok(const char *name, size_t n)
{
    size_t off, tl;
    if (n < 1 || n > RDL__NAME_MAX)
        return 0;
    return name[0] != '}' || rdl__hash_tag(name, n, &off, &tl);
}

int rdl__name_check(const char *name)
{
    if (name == NULL)
        return RDL_EINVAL;
    return name_ok(name, strnlen(name, RDL__NAME_MAX + 1)) ? 0 : RDL_EINVAL;
}

int rdl__prefix_check(const char *prefix)
{
    size_t n, i;
    if (prefix == NULL)
        return RDL_EINVAL;
    n = strnlen(prefix, RDL__PREFIX_MAX + 1);
    if (n < 1 || n > RDL__PREFIX_MAX)
        return RDL_EINVAL;
    /* Braces would change the slot of every key; whitespace and control
     * characters make keys that cannot be typed in redis-cli. */
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)prefix[i];
        if (ch == '{' || ch == '}' || ch <= ' ' || ch == 0x7f)
            return RDL_EINVAL;
    }
    return 0;
}

/* The Redis Cluster rule: the first '{', then the first '}' after it, with
 * at least one byte between. */
int rdl__hash_tag(const char *s, size_t len, size_t *off, size_t *taglen)
{
    const char *open = memchr(s, '{', len), *close;
    if (open == NULL)
        return 0;
    close = memchr(open + 1, '}', len - (size_t)(open + 1 - s));
    if (close == NULL || close == open + 1)
        return 0;
    *off = (size_t)(open + 1 - s);
    *taglen = (size_t)(close - open - 1);
    return 1;
}

char *rdl__key(const char *prefix, const char *kind, const char *name,
               const char *suffix)
{
    size_t np = strlen(prefix), nk = strlen(kind), nn = strlen(name);
    size_t ns = suffix != NULL ? strlen(suffix) : 0, off, tl;
    int tagged = rdl__hash_tag(name, nn, &off, &tl);
    size_t total = np + 1 + nk + (suffix != NULL ? 1 + ns : 0) + 1 + nn +
                   (tagged ? 0 : 2) + 1;
    char *key = rdl__malloc(total), *p = key;

    if (key == NULL)
        return NULL;
    memcpy(p, prefix, np);
    p += np;
    *p++ = ':';
    memcpy(p, kind, nk);
    p += nk;
    if (suffix != NULL) {
        *p++ = '.';
        memcpy(p, suffix, ns);
        p += ns;
    }
    *p++ = ':';
    if (!tagged)
        *p++ = '{';
    memcpy(p, name, nn);
    p += nn;
    if (!tagged)
        *p++ = '}';
    *p = '\0';
    return key;
}

/* The layout read back. The prefix is matched whole (with the ':' after
 * it, so "rdl" does not take the keys of "rdlx"); the kind segment runs to
 * the next ':' (kinds, suffixes and prefixes hold no brace, so the first
 * brace of an rdl key is in its name part, and the name part holds the
 * key's hash tag). */
int rdl__key_parse(const char *prefix, const char *key, size_t len,
                   rdl__key_parts *out)
{
    size_t np = strlen(prefix), off, tl, n;
    const char *seg, *end = key + len, *colon, *dot, *t;

    if (len <= np + 1 || memcmp(key, prefix, np) != 0 || key[np] != ':' ||
        memchr(key, '\0', len) != NULL)
        return 0;
    seg = key + np + 1;
    colon = memchr(seg, ':', (size_t)(end - seg));
    if (colon == NULL || colon == seg ||
        memchr(seg, '{', (size_t)(colon - seg)) != NULL ||
        memchr(seg, '}', (size_t)(colon - seg)) != NULL)
        return 0;
    dot = memchr(seg, '.', (size_t)(colon - seg));
    if (dot != NULL && (dot == seg || dot + 1 == colon))
        return 0; /* an empty kind or suffix: not made by rdl__key() */
    t = colon + 1;
    n = (size_t)(end - t);
    if (!rdl__hash_tag(t, n, &off, &tl))
        return 0;
    out->kind = seg;
    out->kind_len = (size_t)((dot != NULL ? dot : colon) - seg);
    out->suffix = dot != NULL ? dot + 1 : NULL;
    out->suffix_len = dot != NULL ? (size_t)(colon - dot - 1) : 0;
    /* "{X}" is X wrapped, unless X has a tag of its own: rdl__key() keeps
     * such a name as it is, and "{X}" is then that name. */
    if (n >= 3 && t[0] == '{' && t[n - 1] == '}' &&
        !rdl__hash_tag(t + 1, n - 2, &off, &tl)) {
        t++;
        n -= 2;
    }
    out->name = t;
    out->name_len = n;
    return name_ok(t, n);
}

char *rdl__client_channel(const char *channel, const char *client_id)
{
    size_t n = strlen(channel) + 1 + strlen(client_id) + 1;
    char *ch = rdl__malloc(n);
    if (ch != NULL)
        snprintf(ch, n, "%s:%s", channel, client_id);
    return ch;
}
