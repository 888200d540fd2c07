/* The Lua scripts (generated from scripts/<kind>_<op>.lua at build time,
 * cmake/EmbedScripts.cmake) and script.c, which runs them: EVALSHA with
 * NOSCRIPT recovery. The table is constant (any thread); running a script
 * is a loop-thread call whose arguments are copied. */
#ifndef RDL_CORE_SCRIPT_H
#define RDL_CORE_SCRIPT_H

#include <stddef.h>

#include "conn.h"
#include "rdl.h"

typedef struct rdl__script {
    const char *name;  /* file name without .lua */
    const char *sha;   /* 40 hex chars */
    const char *fname; /* its function in the library: rdl_<hash>_<name>
                          (the library's own entry: its name) */
    const char *body;
    size_t len;
    int batch; /* index in the batch script's table, or -1 (not batched:
                  cmake/EmbedScripts.cmake, batch.c) */
} rdl__script;

#include "rdl_scripts.h" /* enum RDL__SCRIPT_*, rdl__scripts[] */

/* The most keys and args of one call: the watchdog renews up to 200
 * holds per call; a batch (batch.c) sends up to 1000 words. */
#define RDL__SCRIPT_MAX_ARGS 1024

/* Sends one call of script `id` now, with keys and args (NUL-terminated
 * strings), to the node that serves keys[0] on `line` (rdl__line,
 * router.h): EVALSHA; on NOSCRIPT, the same call once more as EVAL with
 * the script's body. fn as rdl__reply_fn (a second NOSCRIPT is
 * RDL_ESCRIPT). Callers run scripts with rdl__script_run() (batch.h),
 * which decides whether a call waits to leave with others. */
int rdl__script_send(rdl_client_t *c, int line, int id, int nkeys,
                     const char **keys, int nargs, const char **args,
                     rdl__reply_fn fn, void *data);

#endif
