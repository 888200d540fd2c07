/* The prelude of the documentation's code fragments (tools/check-docs.sh,
 * docs/contributing.md): included before every C or C++ fragment and every
 * `<!-- check: file -->` block, not before complete programs. It gives
 * the fragments rdl's headers, the C library's basics and three helpers
 * that examples call without defining them. Nothing else: a fragment that
 * needs a variable declares it. */
#ifndef RDL_DOC_PRELUDE_H
#define RDL_DOC_PRELUDE_H

#include <rdl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef __cplusplus
#include <rdl.hpp>

#include <string>

using namespace std::chrono_literals;
#endif

/* Stops the example: an error it does not handle. */
void fail(const char *msg);
#ifdef __cplusplus
void fail(const std::string &msg);
#endif
/* The work done while a lock is held. */
void do_work(void);
/* Writes to storage that rejects a fencing token below the largest seen. */
void write_to_storage_with_fence(uint64_t token);

#endif
