/*
 * inidoc: the one adapter between inih and the rest of servesim.
 *
 * inidoc_load reads a file into a list of entries, each with its section, key,
 * value and line number (inih 55 does not give the line to its handler, so
 * the adapter counts lines in its own reader). inidoc_bind then fills a plain
 * struct from a table of keys: every key has a type, a range and a phrase
 * saying what is expected. Unknown sections and keys, duplicates, values
 * that do not parse, values out of range and missing required keys are all
 * errors of the form `path:line: [section] key: expected …, got '…'`.
 * Command-line overrides (`--set section.key=value`) become entries with
 * line 0 and the origin "--set", and go through the same binding.
 */
#ifndef SERVESIM_INIDOC_H
#define SERVESIM_INIDOC_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"

#define INI_NAME_MAX 64
#define INI_VALUE_MAX 256

struct inidoc_entry {
	char section[INI_NAME_MAX];
	char key[INI_NAME_MAX];
	char value[INI_VALUE_MAX];
	int line;            /* 1-based line in the file; 0 for --set */
	/* An override's origin when it was not typed as --set: the vLLM
	 * flag it came from ("--block-size"); "" names it "--set S.K". */
	char origin[INI_VALUE_MAX];
	bool used;           /* set by inidoc_bind when a table key claimed it */
};

struct inidoc {
	char *path;          /* owned; "--set" for overrides */
	struct inidoc_entry *entries;
	size_t len, cap;
};

/* Reads path into *doc (which the caller later passes to inidoc_free).
 * Returns 0, or -1 with e naming the file and line (a syntax error, a line
 * of 200 characters or more, or a file that cannot be opened). */
int inidoc_load(struct inidoc *doc, const char *path, struct err *e);

/* Appends `section.key=value` (from --set). Returns -1 if it is not of that
 * form. */
int inidoc_add_override(struct inidoc *doc, const char *assignment, struct err *e);

/* inidoc_add_override naming its origin in errors (a vLLM flag the
 * command line's rewrite turned into it); NULL or "" is --set. */
int inidoc_add_override_from(struct inidoc *doc, const char *assignment, const char *origin, struct err *e);

/* A verb's own option that sets a key (`--seed 7`: run.seed=7), named in
 * errors as the option typed. */
int inidoc_add_option(struct inidoc *doc, const char *option, const char *key, const char *value, struct err *e);

/* inidoc_add_override of a formatted assignment ("run.hardware=%s", …).
 * Returns -1 with e when it is malformed or longer than a key and value
 * can be. */
int inidoc_add_overridef(struct inidoc *doc, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends every entry of src to doc as an override (line 0), in order.
 * Cannot fail. */
void inidoc_add_overrides(struct inidoc *doc, const struct inidoc *src);

/* Frees what inidoc_load or inidoc_add_override allocated; the struct itself is
 * the caller's. Safe on a zeroed doc. */
void inidoc_free(struct inidoc *doc);

enum ini_type {
	INI_DOUBLE,          /* double */
	INI_INT,             /* int64_t */
	INI_BOOL,            /* bool */
	INI_STRING,          /* char[INI_VALUE_MAX] */
	INI_ENUM,            /* int: index into choices[] */
};

enum {
	INI_REQUIRED = 1 << 0,
	INI_MIN_EXCLUSIVE = 1 << 1,   /* value must be > min, not >= min */
	INI_ALLOW_INF = 1 << 2,       /* "inf" is accepted (above max) */
	INI_SET = 1 << 3,             /* bookkeeping: set by inidoc_bind */
};

struct inidoc_key {
	const char *section;
	const char *key;
	enum ini_type type;
	size_t offset;                /* offsetof the field in the bound struct */
	unsigned flags;
	double min, max;              /* numbers: accepted range */
	const char *expect;           /* e.g. "a bandwidth in GB/s, > 0" */
	const char *const *choices;   /* INI_ENUM: NULL-terminated names */
};

/* Whether v is within key k's range: from min (excluded with
 * INI_MIN_EXCLUSIVE) to max, or +inf where INI_ALLOW_INF; NaN never is.
 * What inidoc_bind accepts for a number, and what keydoc shows as a
 * default (a sentinel outside it is "unset"). Cannot fail. */
bool inidoc_key_in_range(const struct inidoc_key *k, double v);

/* Binds every entry of doc whose section is one of the table's sections
 * into obj. Entries in sections the table does not know are errors unless
 * allow_other_sections. Returns 0 or -1 with e set. seen, when not NULL,
 * gets one bool per table key telling whether the key was present. */
int inidoc_bind(struct inidoc *doc, const struct inidoc_key *keys, size_t nkeys,
	     void *obj, bool allow_other_sections, bool *seen, struct err *e);

/* Where en was set, into buf, as every error names it: "path:line" for a
 * file's entry, its origin or "--set section.key" for an override. */
void inidoc_entry_at(const struct inidoc *doc, const struct inidoc_entry *en, char *buf, size_t cap);

/* Returns the entry for section/key or NULL (the last one wins for
 * overrides appended after a file). */
const struct inidoc_entry *inidoc_find(const struct inidoc *doc, const char *section,
				 const char *key);

#endif
