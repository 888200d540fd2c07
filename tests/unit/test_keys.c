/* Key and channel names (src/core/keys.c, docs/design.md#key-layout): the Redis
 * Cluster hash-tag rule exactly, the layout
 * "<prefix>:<kind>[.<suffix>]:<tagged>", and the name and prefix limits. The
 * rule and CRC16 are written out here from the Redis Cluster specification,
 * independently of the library, and the library is compared with them over
 * every short string of '{', '}' and 'a'. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rdlt.h"
#include "internal.h"

/* CRC16-CCITT (XMODEM), as in the Redis Cluster specification. */
static unsigned crc16(const char *buf, size_t len)
{
    unsigned crc = 0;
    size_t i;
    int bit;
    for (i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)buf[i] << 8;
        for (bit = 0; bit < 8; bit++)
            crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff
                               : (crc << 1) & 0xffff;
    }
    return crc;
}

/* The specification's HASH_SLOT: the first '{'; the first '}' after it;
 * hash what is between if non-empty, else the whole key. */
static int ref_tag(const char *key, size_t len, size_t *off, size_t *n)
{
    size_t s, e;
    for (s = 0; s < len && key[s] != '{'; s++)
        ;
    if (s == len)
        return 0;
    for (e = s + 1; e < len && key[e] != '}'; e++)
        ;
    if (e == len || e == s + 1)
        return 0;
    *off = s + 1;
    *n = e - s - 1;
    return 1;
}

static unsigned slot(const char *key)
{
    size_t len = strlen(key), off, n;
    if (ref_tag(key, len, &off, &n))
        return crc16(key + off, n) & 0x3fff;
    return crc16(key, len) & 0x3fff;
}

static char *key(const char *prefix, const char *kind, const char *name,
                 const char *suffix)
{
    char *k = rdl__key(prefix, kind, name, suffix);
    assert_non_null(k);
    return k;
}

static void expect_key(const char *prefix, const char *kind, const char *name,
                       const char *suffix, const char *want)
{
    char *k = key(prefix, kind, name, suffix);
    assert_string_equal(k, want);
    rdl__free(k);
}

static void test_keys_crc16_reference(void **state)
{
    (void)state;
    /* Check values of the specification and of CLUSTER KEYSLOT. */
    assert_int_equal(crc16("123456789", 9), 0x31c3);
    assert_int_equal(slot("foo"), 12182);
    assert_int_equal(slot("somekey"), 11058);
    assert_int_equal(slot("{user1000}.following"),
                     slot("{user1000}.followers"));
    assert_int_equal(slot("foo{}{bar}"), crc16("foo{}{bar}", 10) & 0x3fff);
    assert_int_equal(slot("foo{{bar}}zap"), crc16("{bar", 4) & 0x3fff);
    assert_int_equal(slot("foo{bar}{zap}"), slot("bar"));
}

static void test_keys_hash_tag_examples(void **state)
{
    size_t off = 99, n = 99;
    (void)state;
    assert_true(rdl__hash_tag("a}b{c}", 6, &off, &n));
    assert_int_equal(off, 4);
    assert_int_equal(n, 1);
    assert_false(rdl__hash_tag("{}", 2, &off, &n));
    assert_true(rdl__hash_tag("{{x}}", 5, &off, &n));
    assert_int_equal(off, 1);
    assert_int_equal(n, 2);
    assert_false(rdl__hash_tag("x{}{y}", 6, &off, &n));
    assert_false(rdl__hash_tag("plain", 5, &off, &n));
    assert_false(rdl__hash_tag("{open", 5, &off, &n));
    assert_false(rdl__hash_tag("close}", 6, &off, &n));
    assert_false(rdl__hash_tag("", 0, &off, &n));
    assert_true(rdl__hash_tag("{order:42}:stock", 16, &off, &n));
    assert_int_equal(off, 1);
    assert_int_equal(n, 8);
    /* Only the first len bytes count. */
    assert_false(rdl__hash_tag("{ab}", 3, &off, &n));
    assert_true(rdl__hash_tag("{ab}", 4, &off, &n));
}

/* Calls fn on every string over {'{', '}', 'a'} of length 1..maxlen. */
static void each_string(size_t maxlen, void (*fn)(const char *s, size_t len))
{
    static const char alphabet[] = "{}a";
    char s[16];
    size_t len, i;
    unsigned long v, count, k;
    for (len = 1; len <= maxlen; len++) {
        for (count = 1, i = 0; i < len; i++)
            count *= 3;
        for (k = 0; k < count; k++) {
            for (v = k, i = 0; i < len; i++, v /= 3)
                s[i] = alphabet[v % 3];
            s[len] = '\0';
            fn(s, len);
        }
    }
}

static void check_tag(const char *s, size_t len)
{
    size_t off = 0, n = 0, roff = 0, rn = 0;
    int got = rdl__hash_tag(s, len, &off, &n);
    int want = ref_tag(s, len, &roff, &rn);
    if (got != want)
        fail_msg("\"%s\": hash_tag %d, specification %d", s, got, want);
    if (got && (off != roff || n != rn))
        fail_msg("\"%s\": tag at %zu+%zu, specification %zu+%zu", s, off, n,
                 roff, rn);
}

static void test_keys_hash_tag_matches_specification(void **state)
{
    (void)state;
    each_string(8, check_tag);
}

/* Every key of one lock in one slot; a tagged name keeps its tag (and its
 * slot); other names are wrapped whole; the layout is exact. Problems are
 * collected over all names, so a failure shows how many names it hits. */
static int bad_names;
static char bad_first[8][256];

static void bad(const char *fmt, ...)
{
    va_list ap;
    if (bad_names < 8) {
        va_start(ap, fmt);
        vsnprintf(bad_first[bad_names], sizeof(bad_first[0]), fmt, ap);
        va_end(ap);
    }
    bad_names++;
}

static void check_key(const char *name, size_t len)
{
    static const char *const suffixes[] = {NULL, "ch", "fence", "queue"};
    char want[64];
    size_t off = 0, n = 0, koff, kn, i;
    int tagged = ref_tag(name, len, &off, &n);
    unsigned first = 0;

    /* Untagged names that start with '}' cannot be wrapped into one slot
     * and are refused; every other name is accepted. */
    if ((rdl__name_check(name) != 0) != (name[0] == '}' && !tagged)) {
        bad("name \"%s\": name_check %d", name, rdl__name_check(name));
        return;
    }
    if (rdl__name_check(name) != 0)
        return;
    for (i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        char *k = key("rdl", "lock", name, suffixes[i]), got[64];
        snprintf(got, sizeof(got), "%s", k);
        rdl__free(k);
        snprintf(want, sizeof(want), "rdl:lock%s%s:%s%s%s",
                 suffixes[i] ? "." : "", suffixes[i] ? suffixes[i] : "",
                 tagged ? "" : "{", name, tagged ? "" : "}");
        if (strcmp(got, want) != 0) {
            bad("name \"%s\": key \"%s\", expected \"%s\"", name, got, want);
            return;
        }
        if (!ref_tag(got, strlen(got), &koff, &kn)) {
            bad("name \"%s\": key \"%s\" holds no hash tag", name, got);
            return;
        }
        if (i == 0) {
            first = slot(got);
        } else if (slot(got) != first) {
            bad("name \"%s\": keys \"rdl:lock:...\" and \"%s\" in slots %u "
                "and %u",
                name, got, first, slot(got));
            return;
        }
    }
    if (tagged && first != (crc16(name + off, n) & 0x3fff))
        bad("name \"%s\": its tag's slot was not kept", name);
    else if (memchr(name, '}', len) == NULL && !tagged &&
             first != (crc16(name, len) & 0x3fff))
        bad("name \"%s\": slot of the wrapped name differs", name);
}

static void test_keys_layout_and_slots(void **state)
{
    int i;
    (void)state;
    bad_names = 0;
    each_string(7, check_key);
    for (i = 0; i < bad_names && i < 8; i++)
        print_error("%s\n", bad_first[i]);
    if (bad_names > 0)
        fail_msg("%d of the names over {'{', '}', 'a'} up to 7 bytes break "
                 "the rules (first ones above)",
                 bad_names);
}

/* A name that starts with '}' and holds no tag would be wrapped as
 * "{}...}", whose tag is empty, so Redis Cluster would hash each whole key
 * and the keys of one lock would scatter: such names are refused. With a
 * tag they are fine and keep one slot. */
static void test_keys_close_brace_first_one_slot(void **state)
{
    static const char *const refused[] = {"}", "}abc", "}{", "}}x{", "}{}"};
    static const char *const tagged[] = {"}{a}", "}}{b}c", "}{{x}}"};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
        assert_int_equal(rdl__name_check(refused[i]), RDL_EINVAL);
    for (i = 0; i < sizeof(tagged) / sizeof(tagged[0]); i++) {
        char *a = key("rdl", "lock", tagged[i], NULL);
        char *b = key("rdl", "lock", tagged[i], "ch");
        unsigned sa = slot(a), sb = slot(b);
        char ka[64], kb[64];
        assert_int_equal(rdl__name_check(tagged[i]), 0);
        snprintf(ka, sizeof(ka), "%s", a);
        snprintf(kb, sizeof(kb), "%s", b);
        rdl__free(a);
        rdl__free(b);
        if (sa != sb)
            fail_msg("name \"%s\": \"%s\" in slot %u, \"%s\" in slot %u",
                     tagged[i], ka, sa, kb, sb);
    }
}

/* A key with a suffix (a lock's fence, channel, ...) is never the key of
 * another lock: names may hold ':' and braces, and a tagged name is kept as it
 * is, so "{a}" with suffix "fence" and the name "{a}:fence" must not meet, or
 * one lock's release rewrites the other's hold. Checked over every name of up
 * to 5 bytes of '{', '}', 'a' and ':', with suffixes of the same bytes. (Names
 * that differ only by wrapping, "a" and "{a}", share every key by the layout
 * (docs/design.md#key-layout): they are one lock. That is counted and printed,
 * not failed.) */
static char *all_keys[5000];
static int nkeys;

static void collect(const char *name, size_t len)
{
    static const char *const suffixes[] = {NULL, "a", "fence"};
    size_t i;
    (void)len;
    if (rdl__name_check(name) != 0)
        return;
    for (i = 0; i < 3; i++) {
        char *k = key("rdl", "lock", name, suffixes[i]);
        char *copy = malloc(strlen(k) + strlen(name) + 16);
        assert_non_null(copy);
        /* "key\nname\nsuffix", so a duplicate key shows where it came
         * from. */
        sprintf(copy, "%s\n%s\n%s", k, name, suffixes[i] ? suffixes[i] : "-");
        rdl__free(k);
        all_keys[nkeys++] = copy;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static size_t key_len(const char *entry)
{
    return (size_t)(strchr(entry, '\n') - entry);
}

static void each_string4(size_t maxlen, void (*fn)(const char *s, size_t len))
{
    static const char alphabet[] = "{}a:";
    char s[16];
    size_t len, i;
    unsigned long v, count, k;
    for (len = 1; len <= maxlen; len++) {
        for (count = 1, i = 0; i < len; i++)
            count *= 4;
        for (k = 0; k < count; k++) {
            for (v = k, i = 0; i < len; i++, v /= 4)
                s[i] = alphabet[v % 4];
            s[len] = '\0';
            fn(s, len);
        }
    }
}

static const char *entry_suffix(const char *entry)
{
    return strrchr(entry, '\n') + 1;
}

static void test_keys_suffix_never_forged_by_a_name(void **state)
{
    int i, forged = 0, aliased = 0;
    (void)state;
    nkeys = 0;
    each_string4(5, collect);
    qsort(all_keys, (size_t)nkeys, sizeof(all_keys[0]), cmp_str);
    for (i = 1; i < nkeys; i++) {
        size_t n = key_len(all_keys[i]);
        if (n != key_len(all_keys[i - 1]) ||
            memcmp(all_keys[i], all_keys[i - 1], n) != 0)
            continue;
        if (strcmp(entry_suffix(all_keys[i]), entry_suffix(all_keys[i - 1])) ==
            0) {
            aliased++;
            continue;
        }
        if (forged++ < 4)
            print_error("one key for (name, suffix) \"%s\" and \"%s\"\n",
                        all_keys[i - 1], all_keys[i]);
    }
    for (i = 0; i < nkeys; i++)
        free(all_keys[i]);
    print_message("%d keys shared by names that differ only by wrapping\n",
                  aliased);
    if (forged > 0)
        fail_msg("%d keys with a suffix are also keys of another name", forged);
}

static void test_keys_examples(void **state)
{
    char *a, *b;
    (void)state;
    expect_key("rdl", "lock", "orders", NULL, "rdl:lock:{orders}");
    expect_key("rdl", "lock", "orders", "ch", "rdl:lock.ch:{orders}");
    expect_key("myapp", "fair", "x", "queue", "myapp:fair.queue:{x}");
    expect_key("rdl", "lock", "a}b{c}", NULL, "rdl:lock:a}b{c}");
    expect_key("rdl", "lock", "a}b", NULL, "rdl:lock:{a}b}");
    expect_key("rdl", "lock", "{}", NULL, "rdl:lock:{{}}");
    expect_key("rdl", "lock", "{{x}}", NULL, "rdl:lock:{{x}}");
    expect_key("rdl", "lock", "x{}{y}", "s", "rdl:lock.s:{x{}{y}}");
    expect_key("rdl", "lock", "with space\x01\xff", NULL,
               "rdl:lock:{with space\x01\xff}");
    /* Locks meant to share a slot do. */
    a = key("rdl", "lock", "{order:42}:stock", NULL);
    b = key("rdl", "lock", "{order:42}:payment", "ch");
    assert_string_equal(a, "rdl:lock:{order:42}:stock");
    assert_string_equal(b, "rdl:lock.ch:{order:42}:payment");
    assert_int_equal(slot(a), slot(b));
    assert_int_equal(slot(a), slot("order:42"));
    rdl__free(a);
    rdl__free(b);
}

/* A client's own wake-up channel: the lock's channel and the client id,
 * on the lock's slot (sharded pub/sub publishes it from the lock's
 * scripts, which may only touch that slot). */
static void test_keys_client_channel(void **state)
{
    char *ch = key("rdl", "lock", "{order:42}:payment", "ch");
    char *own = rdl__client_channel(ch, "0123abcd");
    (void)state;
    assert_string_equal(own, "rdl:lock.ch:{order:42}:payment:0123abcd");
    assert_int_equal(slot(own), slot(ch));
    rdl__free(own);
    rdl__free(ch);
    ch = key("rdl", "fair", "a}b", "ch");
    own = rdl__client_channel(ch, "ff");
    assert_string_equal(own, "rdl:fair.ch:{a}b}:ff");
    assert_int_equal(slot(own), slot(ch));
    rdl__free(own);
    rdl__free(ch);
}

static void test_keys_longest_name(void **state)
{
    char *name = malloc(RDL__NAME_MAX + 1), *k;
    (void)state;
    assert_non_null(name);
    memset(name, 'n', RDL__NAME_MAX);
    name[RDL__NAME_MAX] = '\0';
    k = key("rdl", "lock", name, "ch");
    assert_int_equal(strlen(k), strlen("rdl:lock.ch:{}") + RDL__NAME_MAX);
    assert_int_equal(strncmp(k, "rdl:lock.ch:{nnn", 16), 0);
    rdl__free(k);
    free(name);
}

static void test_keys_alloc_failure(void **state)
{
    (void)state;
    rdl__alloc_fail_at(1);
    assert_null(rdl__key("rdl", "lock", "n", NULL));
    rdl__alloc_fail_at(0);
}

static void test_keys_name_check(void **state)
{
    char *name = malloc(2049);
    (void)state;
    assert_non_null(name);
    assert_int_equal(rdl__name_check(NULL), RDL_EINVAL);
    assert_int_equal(rdl__name_check(""), RDL_EINVAL);
    assert_int_equal(rdl__name_check("a"), 0);
    assert_int_equal(rdl__name_check("{}"), 0);
    assert_int_equal(rdl__name_check(" spaces and \x01 bytes\xff "), 0);
    memset(name, 'n', 2048);
    name[2048] = '\0';
    assert_int_equal(rdl__name_check(name), RDL_EINVAL);
    name[1025] = '\0';
    assert_int_equal(rdl__name_check(name), RDL_EINVAL);
    name[1024] = '\0';
    assert_int_equal(rdl__name_check(name), 0);
    free(name);
}

static void test_keys_prefix_check(void **state)
{
    char prefix[80];
    (void)state;
    assert_int_equal(rdl__prefix_check("rdl"), 0);
    assert_int_equal(rdl__prefix_check("my-app:locks"), 0);
    assert_int_equal(rdl__prefix_check(NULL), RDL_EINVAL);
    assert_int_equal(rdl__prefix_check(""), RDL_EINVAL);
    assert_int_equal(rdl__prefix_check("a{b"), RDL_EINVAL);
    assert_int_equal(rdl__prefix_check("a}b"), RDL_EINVAL);
    assert_int_equal(rdl__prefix_check("a b"), RDL_EINVAL);
    assert_int_equal(rdl__prefix_check("a\tb"), RDL_EINVAL);
    assert_int_equal(rdl__prefix_check("a\nb"), RDL_EINVAL);
    memset(prefix, 'p', sizeof(prefix));
    prefix[RDL__PREFIX_MAX] = '\0';
    assert_int_equal(rdl__prefix_check(prefix), 0);
    prefix[RDL__PREFIX_MAX] = 'p';
    prefix[RDL__PREFIX_MAX + 1] = '\0';
    assert_int_equal(rdl__prefix_check(prefix), RDL_EINVAL);
}

/* The public constructors apply the same limits without a server. */
static void test_keys_public_limits(void **state)
{
    rdl_client_t *c = rdlt_client_new(NULL);
    rdl_lock_t *l = (rdl_lock_t *)&l;
    char *name = malloc(RDL__NAME_MAX + 2);
    (void)state;
    assert_non_null(name);
    rdlt_assert_rc(rdl_lock_new(c, "", &l), RDL_EINVAL);
    assert_null(l);
    memset(name, 'n', RDL__NAME_MAX + 1);
    name[RDL__NAME_MAX + 1] = '\0';
    rdlt_assert_rc(rdl_lock_new(c, name, &l), RDL_EINVAL);
    assert_null(l);
    name[RDL__NAME_MAX] = '\0';
    rdlt_assert_ok(rdl_lock_new(c, name, &l));
    assert_string_equal(rdl_lock_name(l), name);
    rdl_lock_free(l);
    free(name);
    rdlt_assert_rc(rdl_client_set_prefix(c, "a{b"), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_prefix(c, ""), RDL_EINVAL);
    rdlt_assert_rc(rdl_client_set_prefix(c, NULL), RDL_EINVAL);
    rdlt_assert_ok(rdl_client_set_prefix(c, "myapp"));
}

/* rdl__key_parse() gives back what rdl__key() was given: for every name of
 * up to 5 bytes of '{', '}', 'a' and ':' (every one the name rules allow),
 * each kind and suffix, the key parses, its kind and suffix come back, and
 * the name is the one given, or X for a name "{X}" whose X holds no tag
 * (the same key: "a" and "{a}" are one lock). Either way rdl__key() of
 * the parsed name is the key again. */
static int parse_bad;

static void check_parse(const char *name, size_t len)
{
    static const char *const kinds[] = {RDL__KIND_LOCK, RDL__KIND_RWLOCK,
                                        RDL__KIND_SEMAPHORE};
    static const char *const suffixes[] = {NULL, RDL__SUFFIX_FENCE, "x"};
    size_t k, i, off, n;
    /* A name without a tag comes back as it is (it was wrapped); one with
     * a tag also, unless it is "{X}" with no tag in X: that gives X. */
    int untag = ref_tag(name, len, &off, &n) && len >= 3 && name[0] == '{' &&
                name[len - 1] == '}' && !ref_tag(name + 1, len - 2, &off, &n);
    const char *want = untag ? name + 1 : name;
    size_t want_len = untag ? len - 2 : len;

    if (rdl__name_check(name) != 0)
        return;
    for (k = 0; k < 3; k++)
        for (i = 0; i < 3; i++) {
            char *key = rdl__key("rdl", kinds[k], name, suffixes[i]);
            char *back, *again;
            rdl__key_parts p;
            assert_non_null(key);
            if (!rdl__key_parse("rdl", key, strlen(key), &p)) {
                if (parse_bad++ < 4)
                    print_error("\"%s\" does not parse\n", key);
                rdl__free(key);
                continue;
            }
            if (p.kind_len != strlen(kinds[k]) ||
                memcmp(p.kind, kinds[k], p.kind_len) != 0 ||
                (suffixes[i] == NULL) != (p.suffix == NULL) ||
                (suffixes[i] != NULL &&
                 (p.suffix_len != strlen(suffixes[i]) ||
                  memcmp(p.suffix, suffixes[i], p.suffix_len) != 0)) ||
                p.name_len != want_len || memcmp(p.name, want, want_len) != 0) {
                if (parse_bad++ < 4)
                    print_error("\"%s\" of name \"%s\" parsed as kind "
                                "\"%.*s\", name \"%.*s\"\n",
                                key, name, (int)p.kind_len, p.kind,
                                (int)p.name_len, p.name);
            }
            back = rdl__strndup(p.name, p.name_len);
            assert_non_null(back);
            again = rdl__key("rdl", kinds[k], back, suffixes[i]);
            assert_non_null(again);
            if (strcmp(again, key) != 0 && parse_bad++ < 4)
                print_error("\"%s\" -> \"%s\" -> \"%s\"\n", key, back, again);
            rdl__free(again);
            rdl__free(back);
            rdl__free(key);
        }
}

static void test_keys_parse_round_trip(void **state)
{
    (void)state;
    parse_bad = 0;
    each_string4(5, check_parse);
    if (parse_bad > 0)
        fail_msg("%d keys do not parse back (first ones above)", parse_bad);
}

/* Parses key with prefix; checks the parts (kind NULL: not ours). */
static void expect_parse(const char *prefix, const char *key, size_t len,
                         const char *kind, const char *suffix, const char *name)
{
    rdl__key_parts p;
    int got = rdl__key_parse(prefix, key, len, &p);
    if (kind == NULL) {
        if (got)
            fail_msg("\"%s\" (prefix \"%s\") parsed, as name \"%.*s\"", key,
                     prefix, (int)p.name_len, p.name);
        return;
    }
    if (!got)
        fail_msg("\"%s\" (prefix \"%s\") did not parse", key, prefix);
    assert_int_equal(p.kind_len, strlen(kind));
    assert_memory_equal(p.kind, kind, p.kind_len);
    if (suffix == NULL) {
        assert_null(p.suffix);
        assert_int_equal(p.suffix_len, 0);
    } else {
        assert_non_null(p.suffix);
        assert_int_equal(p.suffix_len, strlen(suffix));
        assert_memory_equal(p.suffix, suffix, p.suffix_len);
    }
    assert_int_equal(p.name_len, strlen(name));
    assert_memory_equal(p.name, name, p.name_len);
}

#define PARSE(prefix, key, kind, suffix, name)                                 \
    expect_parse(prefix, key, strlen(key), kind, suffix, name)

static void test_keys_parse_examples(void **state)
{
    char *longest = malloc(RDL__NAME_MAX + 32);
    rdl__key_parts p;
    (void)state;
    assert_non_null(longest);
    PARSE("rdl", "rdl:lock:{orders}", "lock", NULL, "orders");
    PARSE("rdl", "rdl:rw.fence:{orders}", "rw", "fence", "orders");
    PARSE("rdl", "rdl:sem.x:{a:b}", "sem", "x", "a:b");
    /* A name with a tag of its own is kept; so is one starting with '{'
     * that has none (it was wrapped). */
    PARSE("rdl", "rdl:lock:{order:42}:stock", "lock", NULL, "{order:42}:stock");
    PARSE("rdl", "rdl:fair:{{abc}", "fair", NULL, "{abc");
    PARSE("rdl", "rdl:lock:{a}b}", "lock", NULL, "a}b");
    PARSE("rdl", "rdl:lock:{x{}{y}}", "lock", NULL, "x{}{y}");
    PARSE("rdl", "rdl:lock:}x{y}", "lock", NULL, "}x{y}");
    PARSE("rdl", "rdl:lock:{a}", "lock", NULL, "a");
    PARSE("rdl", "rdl:latch:{l}", "latch", NULL, "l");
    /* Prefixes: whole, with the ':' after them; a prefix may hold ':'. */
    PARSE("my-app:locks", "my-app:locks:lock:{x}", "lock", NULL, "x");
    PARSE("my-app", "my-app:locks:lock:{x}", "locks", NULL, "lock:{x}");
    PARSE("rdl", "rdlx:lock:{x}", NULL, NULL, NULL);
    PARSE("rdlx", "rdlx:lock:{x}", "lock", NULL, "x");
    PARSE("rdlx", "rdl:lock:{x}", NULL, NULL, NULL);
    PARSE("rdl", "other:lock:{x}", NULL, NULL, NULL);
    PARSE("a*b", "a*b:lock:{x}", "lock", NULL, "x");
    PARSE("a*b", "aXb:lock:{x}", NULL, NULL, NULL);
    /* Not made by rdl__key(). */
    PARSE("rdl", "rdl:lock:orders", NULL, NULL, NULL); /* no tag */
    PARSE("rdl", "rdl:lock:{}", NULL, NULL, NULL);
    PARSE("rdl", "rdl:lock:", NULL, NULL, NULL);
    PARSE("rdl", "rdl:lock", NULL, NULL, NULL);
    PARSE("rdl", "rdl:", NULL, NULL, NULL);
    PARSE("rdl", "rdl", NULL, NULL, NULL);
    PARSE("rdl", "", NULL, NULL, NULL);
    PARSE("rdl", "rdl:{x}", NULL, NULL, NULL);       /* no kind */
    PARSE("rdl", "rdl::{x}", NULL, NULL, NULL);      /* empty kind */
    PARSE("rdl", "rdl:.x:{x}", NULL, NULL, NULL);    /* empty kind */
    PARSE("rdl", "rdl:lock.:{x}", NULL, NULL, NULL); /* empty suffix */
    PARSE("rdl", "rdl:lo{ck:{x}", NULL, NULL, NULL); /* brace in the kind */
    PARSE("rdl", "rdl:lo}ck:{x}", NULL, NULL, NULL);
    PARSE("rdl", "rdl:lock:}{}x", NULL, NULL, NULL); /* no tag */
    expect_parse("rdl", "rdl:lock:{a\0b}", 14, NULL, NULL, NULL);
    /* Only len bytes count. */
    expect_parse("rdl", "rdl:lock:{x}yz", 12, "lock", NULL, "x");
    /* The longest name parses; one byte more is not a name. */
    strcpy(longest, "rdl:lock:{");
    memset(longest + 10, 'n', RDL__NAME_MAX + 1);
    strcpy(longest + 10 + RDL__NAME_MAX, "}");
    assert_true(rdl__key_parse("rdl", longest, strlen(longest), &p));
    assert_int_equal(p.name_len, RDL__NAME_MAX);
    strcpy(longest + 10 + RDL__NAME_MAX, "n}");
    assert_false(rdl__key_parse("rdl", longest, strlen(longest), &p));
    free(longest);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_keys_crc16_reference),
    RDLT_TEST(test_keys_hash_tag_examples),
    RDLT_TEST(test_keys_hash_tag_matches_specification),
    RDLT_TEST(test_keys_layout_and_slots),
    RDLT_TEST(test_keys_close_brace_first_one_slot),
    RDLT_TEST(test_keys_suffix_never_forged_by_a_name),
    RDLT_TEST(test_keys_examples),
    RDLT_TEST(test_keys_client_channel),
    RDLT_TEST(test_keys_longest_name),
    RDLT_TEST(test_keys_alloc_failure),
    RDLT_TEST(test_keys_name_check),
    RDLT_TEST(test_keys_prefix_check),
    RDLT_TEST(test_keys_public_limits),
    RDLT_TEST(test_keys_parse_round_trip),
    RDLT_TEST(test_keys_parse_examples),
};

RDLT_MAIN(tests)
