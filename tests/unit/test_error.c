/* Error codes: every code of the one list has its name and message, and
 * values outside the list are handled (include/rdl/error.h). */
#include <limits.h>
#include <string.h>

#include "rdlt.h"

static const struct {
    int code;
    const char *name;
    const char *msg;
} codes[] = {
#define ENTRY(name, value, msg) {RDL_##name, "RDL_" #name, msg},
    RDL_ERRNO_MAP(ENTRY)
#undef ENTRY
};
#define NCODES (sizeof(codes) / sizeof(codes[0]))

static void test_error_every_code_has_name_and_message(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < NCODES; i++) {
        const char *name = rdl_err_name(codes[i].code);
        const char *msg = rdl_strerror(codes[i].code);
        assert_non_null(name);
        assert_non_null(msg);
        assert_string_equal(name, codes[i].name);
        assert_string_equal(msg, codes[i].msg);
        assert_true(strlen(msg) > 0);
        assert_string_not_equal(msg, "unknown error");
    }
}

static void test_error_codes_negative_and_distinct(void **state)
{
    size_t i, j;
    (void)state;
    for (i = 0; i < NCODES; i++) {
        assert_true(codes[i].code < 0);
        for (j = i + 1; j < NCODES; j++)
            if (codes[i].code == codes[j].code)
                fail_msg("%s and %s share %d", codes[i].name, codes[j].name,
                         codes[i].code);
    }
}

/* The codes include/rdl/error.h promises, with values fixed by the ABI. */
static void test_error_contract_codes_exist(void **state)
{
    (void)state;
    assert_int_equal(RDL_EINVAL, -1);
    assert_int_equal(RDL_ENOMEM, -2);
    assert_int_equal(RDL_EBUSY, -3);
    assert_int_equal(RDL_ETIMEDOUT, -4);
    assert_int_equal(RDL_ECANCELED, -5);
    assert_int_equal(RDL_ENOTHELD, -6);
    assert_int_equal(RDL_EDEADLK, -7);
    assert_int_equal(RDL_ECLOSED, -8);
    assert_int_equal(RDL_ELOST, -9);
    assert_int_equal(RDL_ECONNREFUSED, -10);
    assert_int_equal(RDL_ECONNLOST, -11);
    assert_int_equal(RDL_ECMDTIMEOUT, -12);
    assert_int_equal(RDL_EAUTH, -13);
    assert_int_equal(RDL_EPROTO, -14);
    assert_int_equal(RDL_ESCRIPT, -15);
    assert_int_equal(RDL_EREADONLY, -16);
    assert_int_equal(RDL_ECLUSTERDOWN, -17);
    assert_int_equal(RDL_EREDIRECT, -18);
    assert_int_equal(RDL_ENOQUORUM, -19);
    assert_int_equal(RDL_ENOTSUP, -20);
    assert_int_equal(RDL_EOOM, -21);
    assert_int_equal(RDL_ESERVER, -22);
    assert_int_equal(RDL_ECROSSSLOT, -23);
    assert_int_equal(RDL_ETLS, -24);
    assert_int_equal(RDL_ENOMASTER, -25);
    assert_int_equal(RDL_ENOREPLICAS, -26);
    assert_int_equal(RDL_ENOTCONN, -27);
}

static void test_error_success(void **state)
{
    (void)state;
    assert_string_equal(rdl_err_name(0), "OK");
    assert_string_equal(rdl_strerror(0), "success");
}

static void test_error_unknown_codes(void **state)
{
    static const int unknown[] = {1,   2,    INT_MAX, INT_MIN,
                                  -99, -999, 100,     -1 - (int)NCODES};
    size_t i;
    (void)state;
    for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        assert_string_equal(rdl_err_name(unknown[i]), "RDL_EUNKNOWN");
        assert_string_equal(rdl_strerror(unknown[i]), "unknown error");
    }
}

static void test_error_version(void **state)
{
    (void)state;
    assert_int_equal(rdl_version(), RDL_VERSION_HEX);
    assert_string_equal(rdl_version_string(), RDL_VERSION_STRING);
}

static const struct CMUnitTest tests[] = {
    RDLT_TEST(test_error_every_code_has_name_and_message),
    RDLT_TEST(test_error_codes_negative_and_distinct),
    RDLT_TEST(test_error_contract_codes_exist),
    RDLT_TEST(test_error_success),
    RDLT_TEST(test_error_unknown_codes),
    RDLT_TEST(test_error_version),
};

RDLT_MAIN(tests)
