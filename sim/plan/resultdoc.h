/*
 * resultdoc: the JSON document that `sweep`, `plan` and `compare` print,
 * split into shards and joined again by `merge`.
 *
 * A document is an object: "kind", the kind's header (scenario, overrides,
 * what was varied, replications …), the item count under the kind's total
 * key, "shard": "K/N" when it holds a slice, the items (points, candidates,
 * rows) under the kind's items key, each carrying its index, and, for a
 * whole document only, the kind's derived fields (plan's ranking).
 *
 * The text and CSV forms are rendered from the document alone, never from
 * the simulation's own numbers, and every number is rounded to a fixed
 * number of decimals (resultdoc_real) before it enters the document. So
 * printing a document, printing it after a JSON round trip and printing the
 * merge of its shards give the same bytes, in every format.
 *
 * Shards: item i belongs to shard K of N when i mod N = K - 1 (round robin,
 * so the slices of a sweep over increasing rates cost about the same).
 */
#ifndef SERVESIM_RESULTDOC_H
#define SERVESIM_RESULTDOC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "docschema.h"
#include "err.h"
#include "inidoc.h"

struct shard {
	int k, n;                    /* this is slice k of n, 1 <= k <= n; 1/1 = whole */
};

struct plot_opts;

/* One kind of document: the keys its items live under and how it is
 * finished, printed and plotted (a table of functions, one per kind). */
struct resultdoc_kind {
	const char *name;            /* "sweep", "plan", "compare" */
	const char *items;           /* key of the item array */
	const char *index;           /* key of an item's index */
	const char *total;           /* key of the number of items in the whole */
	void (*finish)(json_t *doc); /* adds derived fields to a whole document; may be NULL */
	void (*text)(FILE *f, json_t *doc);
	void (*csv)(FILE *f, json_t *doc);
	/* Writes data files and plots into dir. Returns 0 or -1 with e. */
	int (*plot)(json_t *doc, const char *dir, struct plot_opts *o, struct err *e);
	/* What a document read back must hold (docschema.h), items included:
	 * resultdoc_load checks it before text, csv, plot or merge read it. */
	const struct docschema_field *schema;
};

/* Parses "K/N" (--shard). Returns 0 or -1 with e naming the flag. */
int resultdoc_shard_parse(struct shard *sh, const char *s, struct err *e);

/* Whether item i belongs to the shard. */
bool resultdoc_in_shard(const struct shard *sh, size_t i);

/* A new document {"kind": name}; the caller adds the header. Cannot fail. */
json_t *resultdoc_new(const struct resultdoc_kind *k);

/* Ends a document: adds the total, the shard (when not 1/1), the items
 * (stolen) and, when whole, the kind's derived fields. Cannot fail. */
void resultdoc_close(json_t *doc, const struct resultdoc_kind *k, size_t total,
		     const struct shard *sh, json_t *items);

/* The kind of a document, or NULL with e when it is not one of ours. */
const struct resultdoc_kind *resultdoc_kind_of(json_t *doc, struct err *e);

/* Prints doc as text, CSV or JSON (fmt: enum out_format of outfmt.h). Returns
 * 0, or -1 when stdout cannot be written. */
int resultdoc_print(FILE *f, json_t *doc, int fmt);

/* Reads any JSON file (a result of any kind, servesim run's JSON).
 * Returns it (the caller's reference) or NULL with e naming the file and
 * the JSON position. */
json_t *resultdoc_read_json(const char *path, struct err *e);

/* Reads a document from path and checks it against its kind's schema.
 * Returns it (the caller's reference) or NULL with e naming the file and
 * the JSON position, or the key that is missing or of the wrong type. */
json_t *resultdoc_load(const char *path, struct err *e);

/* Joins the shards docs[0..n) (each a slice of the same run, every slice
 * present once) into the whole document one run would have printed.
 * Returns the new document or NULL with e saying which file disagrees. */
json_t *resultdoc_merge(json_t *const *docs, const char *const *names, size_t n, struct err *e);

/* A JSON number for v rounded to `decimals` (an integer when it is one),
 * null when v is not finite. */
json_t *resultdoc_real(double v, int decimals);

/* Sets o[key] to resultdoc_real(v, decimals). */
void resultdoc_put(json_t *o, const char *key, double v, int decimals);

/* Sets the header every kind opens with: "scenario" (the path, or
 * "built-in default" for NULL) and "set" (the --set overrides as
 * SECTION.KEY=VALUE, in order). */
void resultdoc_header(json_t *doc, const char *scenario, const struct inidoc *overrides);

/* Reading back: the number at key (NaN when null or absent), the string
 * (NULL when absent). */
double resultdoc_num(const json_t *o, const char *key);
const char *resultdoc_str(const json_t *o, const char *key);

/* The item at position pos of a ranked document: the one whose index key
 * equals ranking[pos] (a ranking that names no item, or none: items[pos]).
 * Cannot fail; NULL past the end. */
json_t *resultdoc_ranked(json_t *items, json_t *ranking, const char *index, size_t pos);

/* Prints v with `decimals` decimals in a field of width w, or "-" when NaN. */
void resultdoc_cell(FILE *f, double v, int decimals, int w);

/* Prints s as a CSV field (quoted when it holds a comma or a quote). */
void resultdoc_csv_str(FILE *f, const char *s);

/* Prints v as a CSV field: %.*f, empty when NaN. */
void resultdoc_csv_num(FILE *f, double v, int decimals);

#endif
