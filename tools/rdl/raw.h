/* Raw connections for rdl ls and rdl top: the commands the public API has
 * no call for (SCAN, CLUSTER SLOTS, SENTINEL get-master-addr-by-name,
 * TIME). hiredis formats the commands and parses the replies; raw.c moves
 * the bytes over a socket, or an OpenSSL session for rediss URLs (hiredis
 * 0.14 has no TLS of its own). */
#ifndef RDL_CLI_RAW_H
#define RDL_CLI_RAW_H

#include <stddef.h>

#include <hiredis/hiredis.h>

#include "cli.h"

typedef struct raw_conn raw_conn;

/* The servers that hold the lock keys, one connection each: the URL's
 * server, a sentinel URL's master, or every master of a cluster. */
typedef struct raw_nodes {
    raw_conn **conn;
    size_t n;
} raw_nodes;

/* Opens them for the global options (the URL was already accepted by
 * rdl_client_set_url(): cli_connect() ran first). Returns 0, or an exit
 * code after a message: EXIT_UNAVAILABLE when a node cannot be reached or
 * refuses the credentials, EXIT_SOFTWARE otherwise. */
int raw_nodes_open(const cli *g, raw_nodes *out);
void raw_nodes_close(raw_nodes *nodes);

/* Sends one command and reads its reply (an error reply included; free it
 * with freeReplyObject). Returns 0, EXIT_UNAVAILABLE (I/O error, timeout:
 * raw_errmsg() says which; the connection is then unusable) or
 * EXIT_SOFTWARE (a malformed reply). */
int raw_command(raw_conn *c, redisReply **out, int argc, const char **argv);

/* "host:port" of the connection, and what went wrong last. */
const char *raw_addr(const raw_conn *c);
const char *raw_errmsg(const raw_conn *c);

#endif
