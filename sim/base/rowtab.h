/*
 * rowtab: lookups in the const policy tables whose rows start with their
 * name (`const char *name` as the first member) and end with a row whose
 * name is NULL: routers, KV links, speculative methods. One place finds a
 * row by name and lists the names for the error that names the choices.
 */
#ifndef SERVESIM_ROWTAB_H
#define SERVESIM_ROWTAB_H

#include <stddef.h>

/* The row called name in rows (each stride bytes), or NULL. */
const void *rowtab_find(const void *rows, size_t stride, const char *name);

/* Its index, or -1. */
int rowtab_index(const void *rows, size_t stride, const char *name);

/* "a, b, c" into buf (truncated to cap). */
void rowtab_list(const void *rows, size_t stride, char *buf, size_t cap);

#endif
