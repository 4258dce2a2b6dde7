/*
 * list: the comma-separated lists of flags and INI values
 * (`--hardware h100-sxm,l40s`, `--metric-percentiles 50,90,99`,
 * `scorers = queue:1,kv:1`), read one way everywhere: items are separated
 * by commas, blanks around an item are dropped, and an empty item ("",
 * "a,,b", "a,") is an error, never skipped. What an item means (a name, a
 * number, KEY:VALUE) is the caller's.
 */
#ifndef SERVESIM_LIST_H
#define SERVESIM_LIST_H

#include <stddef.h>

/* The next item of the list at *cursor (start it at the list's text),
 * copied into item (cap bytes) without its blanks; *cursor moves past it
 * (NULL after the last). Returns 1 for an item, 0 once the list is done,
 * or -1 for an empty item or one of cap bytes or more (item then holds
 * what fits, for the message). Never prints. */
int list_next(const char **cursor, char *item, size_t cap);

/* The numbers of list s into out[0..max) (num_parse_double: strictly, no
 * NaN; "inf" is the caller's to refuse). Returns the count (>= 1), or -1
 * when an item is empty or not a number, or there are more than max; then
 * bad (cap_bad bytes, may be NULL) holds the item at fault. */
int list_doubles(const char *s, double *out, int max, char *bad, size_t cap_bad);

#endif
