/* What the fuzz targets of tests/fuzz share (docs/robustness.md#fuzzing):
 * a server reply decoded from the fuzz bytes by hiredis's own reader (the
 * RESP parser every reply of a real connection goes through), a check
 * that aborts with a message when a parser breaks one of its invariants
 * (assert() would vanish under NDEBUG), and a way to cut the input into
 * the pieces a target feeds. Header-only: each target is one file. */
#ifndef RDL_FUZZ_H
#define RDL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts (a crash libFuzzer saves) if cond is false. The message goes
 * to file descriptor 2 itself: a target may point `stderr` elsewhere to
 * keep the messages of the code it feeds out of the log (args.c). */
#define FUZZ_CHECK(cond)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            char fuzz_msg_[512];                                               \
            int fuzz_n_ = snprintf(fuzz_msg_, sizeof(fuzz_msg_),               \
                                   "%s:%d: invariant broken: %s\n", __FILE__,  \
                                   __LINE__, #cond);                           \
            if (fuzz_n_ > 0)                                                   \
                (void)!write(2, fuzz_msg_,                                     \
                             (size_t)fuzz_n_ < sizeof(fuzz_msg_)               \
                                 ? (size_t)fuzz_n_                             \
                                 : sizeof(fuzz_msg_) - 1);                     \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* hiredis's own reply builders, and the bound on an array's length for
 * the input at hand (fuzz_reply). */
static redisReplyObjectFunctions *fuzz_hiredis_fn;
static int fuzz_max_elements;

/* An array cannot have more elements than the input has bytes left (each
 * takes 3 at least), so one that claims more is never a whole reply;
 * hiredis 0.14 would still calloc() room for all of them (8 bytes each:
 * "*999999999" asks for 8 GB) before reading one. Such an array fails
 * here as an allocation failure, which is what a real connection's
 * reader reports when that calloc fails. */
static inline void *fuzz_create_array(const redisReadTask *task, int elements)
{
    if (elements > fuzz_max_elements)
        return NULL;
    return fuzz_hiredis_fn->createArray(task, elements);
}

/* The first reply that data[0..size) holds, decoded by hiredis's reader
 * as a connection decodes it; NULL if the bytes are not one whole RESP
 * reply. Bytes after the first reply are ignored. Free with
 * freeReplyObject(). */
static inline redisReply *fuzz_reply(const uint8_t *data, size_t size)
{
    static redisReplyObjectFunctions fn;
    redisReader *rd = redisReaderCreate();
    void *reply = NULL;
    if (rd == NULL)
        return NULL;
    if (fuzz_hiredis_fn == NULL) {
        fuzz_hiredis_fn = rd->fn;
        fn = *rd->fn;
        fn.createArray = fuzz_create_array;
    }
    rd->fn = &fn;
    fuzz_max_elements = (int)(size < 1 << 30 ? size : 1 << 30);
    if (redisReaderFeed(rd, (const char *)data, size) != REDIS_OK ||
        redisReaderGetReply(rd, &reply) != REDIS_OK) {
        if (reply != NULL)
            freeReplyObject(reply);
        reply = NULL;
    }
    redisReaderFree(rd);
    return reply;
}

/* Takes the next piece of the input: the bytes up to the next NUL (or
 * the end), as a new NUL-terminated string, and advances past the NUL.
 * NULL when the input is used up or out of memory. */
static inline char *fuzz_take(const uint8_t **data, size_t *size)
{
    const uint8_t *nul;
    size_t n;
    char *s;
    if (*size == 0)
        return NULL;
    nul = memchr(*data, '\0', *size);
    n = nul != NULL ? (size_t)(nul - *data) : *size;
    s = malloc(n + 1);
    if (s == NULL)
        return NULL;
    memcpy(s, *data, n);
    s[n] = '\0';
    *data += n + (nul != NULL);
    *size -= n + (nul != NULL);
    return s;
}

/* s[0..n) as a new NUL-terminated string; aborts when out of memory. */
static inline char *fuzz_dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    FUZZ_CHECK(d != NULL);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* The input as a NUL-terminated string (a NUL byte in it ends it, as it
 * would end a C string handed to the library). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s != NULL) {
        memcpy(s, data, size);
        s[size] = '\0';
    }
    return s;
}

#endif
