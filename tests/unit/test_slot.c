/* Cluster key slots (src/core/slot.c, docs/design.md#redis-cluster): CRC16
 * against published check values and slots against what a Redis 7.0 cluster
 * answered to CLUSTER KEYSLOT, including names whose braces trip up
 * hand-written tag parsers, and binary keys with NUL bytes. */
#include <string.h>

#include "rdlt.h"
#include "internal.h"

static unsigned slot_of(const char *key)
{
    return rdl__slot(key, strlen(key));
}

static void test_slot_crc16_check_values(void **state)
{
    (void)state;
    /* The XMODEM check value, and the two the specification prints. */
    assert_int_equal(rdl__crc16("123456789", 9), 0x31c3);
    assert_int_equal(rdl__crc16("", 0), 0);
    assert_int_equal(rdl__crc16("A", 1), 0x58e5);
}

/* Values from CLUSTER KEYSLOT on redis-server 7.0. */
static void test_slot_known_keys(void **state)
{
    static const struct {
        const char *key;
        unsigned slot;
    } known[] = {
        {"foo", 12182},
        {"bar", 5061},
        {"hello", 866},
        {"user1000", 3443},
        {"{user1000}.following", 3443},
        {"{user1000}.followers", 3443},
        {"foo{}{bar}", 8363},
        {"foo{{bar}}zap", 4015},
        {"foo{bar}{zap}", 5061},
        {"rdl:lock:{orders}", 105},
        {"rdl:lock.fence:{orders}", 105},
        {"A", 6373},
    };
    size_t i;
    (void)state;
    for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (slot_of(known[i].key) != known[i].slot)
            fail_msg("slot of \"%s\" is %u, Redis says %u", known[i].key,
                     slot_of(known[i].key), known[i].slot);
}

/* Names whose braces are easy to get wrong: the tag is what lies between
 * the first '{' and the first '}' after it, and only if non-empty. */
static void test_slot_odd_names(void **state)
{
    (void)state;
    /* a}b{c}: the '}' before the first '{' does not count. */
    assert_int_equal(slot_of("a}b{c}"), slot_of("c"));
    /* {}: empty tag, the whole key is hashed. */
    assert_int_equal(slot_of("{}"), rdl__crc16("{}", 2) & 16383);
    /* {{x}}: the tag is "{x". */
    assert_int_equal(slot_of("{{x}}"), slot_of("{x"));
    assert_int_equal(slot_of("{{x}}"), rdl__crc16("{x", 2) & 16383);
    /* Only the first tag counts. */
    assert_int_equal(slot_of("{a}{b}"), slot_of("a"));
    /* An unterminated brace hashes everything. */
    assert_int_equal(slot_of("{abc"), rdl__crc16("{abc", 4) & 16383);
    /* Every key of one lock shares the slot of the name's tag. */
    assert_int_equal(slot_of("rdl:lock:{a}b"), slot_of("a"));
    assert_int_equal(slot_of("rdl:lock.ch:{a}b"), slot_of("rdl:x:{a}"));
}

static void test_slot_binary_keys(void **state)
{
    static const char bin[] = {'k', '\0', '\xff', '{', '\x01', '}', 'z'};
    static const char zero[] = {'\0', '\0'};
    (void)state;
    /* The length counts, not a NUL: "k\0..." differs from "k". */
    assert_int_equal(rdl__slot(bin, 3), rdl__crc16(bin, 3) & 16383);
    assert_int_not_equal(rdl__slot(bin, 3), rdl__slot("k", 1));
    /* A tag may hold any byte. */
    assert_int_equal(rdl__slot(bin, sizeof(bin)), rdl__slot("\x01", 1));
    assert_int_equal(rdl__slot(zero, 2), rdl__crc16(zero, 2) & 16383);
    /* Slots stay below 16384 for every two-byte key. */
    {
        unsigned a, b;
        char k[2];
        for (a = 0; a < 256; a++)
            for (b = 0; b < 256; b++) {
                k[0] = (char)a;
                k[1] = (char)b;
                if (rdl__slot(k, 2) >= RDL__SLOTS)
                    fail_msg("slot of %02x%02x out of range", a, b);
            }
    }
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_slot_crc16_check_values),
    RDLT_TEST(test_slot_known_keys),
    RDLT_TEST(test_slot_odd_names),
    RDLT_TEST(test_slot_binary_keys),
};

RDLT_MAIN(tests)
