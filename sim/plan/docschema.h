/*
 * docschema: the shape a result document must have before anything reads
 * it (sweep, plan and compare documents read back by `merge` and `plot`).
 *
 * A schema is a table of fields, ended by a row with a NULL key: each row
 * names a key, the JSON type its value must have and, for an object or an
 * array of objects, the table its members follow. Keys a table does not name
 * are allowed (newer writers add keys; readers ignore what they do not know).
 * After docschema_check succeeds every required key is present with its type
 * and every integer is within its row's bounds, so the renderers may read
 * them without further checks (no strcmp(NULL), no NaN cast to an integer).
 */
#ifndef SERVESIM_DOCSCHEMA_H
#define SERVESIM_DOCSCHEMA_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

enum docschema_type {
	DS_STR,	    /* a string */
	DS_NUM,	    /* a number, or null (a value that was not finite) */
	DS_INT,	    /* an integer within [min, max] */
	DS_BOOL,    /* true or false */
	DS_OBJ,	    /* an object; members follow sub when sub is set */
	DS_ARR,	    /* an array; each element an object following sub when set */
	DS_INT_ARR, /* an array of integers within [min, max] */
};

struct docschema_field {
	const char *key;
	enum docschema_type type;
	bool optional;			   /* absent (or null) is allowed */
	long long min, max;		   /* DS_INT, DS_INT_ARR */
	const struct docschema_field *sub; /* DS_OBJ, DS_ARR */
};

/* Checks o (an object) against the table (NULL: only that o is an
 * object). Returns 0, or -1 with e saying
 * where (a path such as candidates[3].at_limit), the key and what was
 * expected; the caller adds the file name. Cannot fail otherwise. */
int docschema_check(const json_t *o, const struct docschema_field *schema, struct err *e);

#endif
