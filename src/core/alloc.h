/* Every allocation of the library goes through these (docs/design.md#memory),
 * so tests can make the n-th one fail. Any thread. */
#ifndef RDL_CORE_ALLOC_H
#define RDL_CORE_ALLOC_H

#include <stddef.h>

void *rdl__malloc(size_t n);
void *rdl__calloc(size_t n, size_t size);
void *rdl__realloc(void *p, size_t n);
void rdl__free(void *p);
char *rdl__strdup(const char *s);
char *rdl__strndup(const char *s, size_t n);
/* Test hook: the n-th allocation from now fails (n >= 1); 0 turns it off. */
void rdl__alloc_fail_at(long n);

#endif
