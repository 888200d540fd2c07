/* Error names and messages, generated from the one list in rdl/error.h, and
 * the version calls. */
#include "reply.h"

const char *rdl_strerror(int err)
{
    switch (err) {
    case 0:
        return "success";
#define RDL_STRERROR_(name, value, msg)                                        \
    case RDL_##name:                                                           \
        return msg;
        RDL_ERRNO_MAP(RDL_STRERROR_)
#undef RDL_STRERROR_
#define RDL__STRERROR_(name, value, msg)                                       \
    case RDL__##name:                                                          \
        return msg;
        RDL__ERRNO_INTERNAL_MAP(RDL__STRERROR_)
#undef RDL__STRERROR_
    default:
        return "unknown error";
    }
}

const char *rdl_err_name(int err)
{
    switch (err) {
    case 0:
        return "OK";
#define RDL_ERR_NAME_(name, value, msg)                                        \
    case RDL_##name:                                                           \
        return "RDL_" #name;
        RDL_ERRNO_MAP(RDL_ERR_NAME_)
#undef RDL_ERR_NAME_
#define RDL__ERR_NAME_(name, value, msg)                                       \
    case RDL__##name:                                                          \
        return "RDL__" #name;
        RDL__ERRNO_INTERNAL_MAP(RDL__ERR_NAME_)
#undef RDL__ERR_NAME_
    default:
        return "RDL_EUNKNOWN";
    }
}

unsigned rdl_version(void)
{
    return RDL_VERSION_HEX;
}

const char *rdl_version_string(void)
{
    return RDL_VERSION_STRING;
}
