/*
 * plandoc_int: what the plan document's files share (plandoc.c: building
 * the document, its ranking and its schema; plandoc_text.c: the text and
 * CSV forms and the text pieces compare shares; plandoc_plot.c: the
 * pictures). Not for other modules: they see plandoc.h.
 */
#ifndef SERVESIM_PLANDOC_INT_H
#define SERVESIM_PLANDOC_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "plandoc.h"

/* The metrics kept for a candidate at its limit (its "at_limit"), and
 * their count. */
extern const int plandoc_limit_metrics[];
extern const size_t plandoc_n_limit_metrics;

/* GPUs of one replica of a result item: gpus_per_replica, or the tensor
 * parallel size of documents written before pipelines (1 when neither). */
double plandoc_replica_gpus(json_t *it);

/* "ttft_p99_ms <= 2000, …" from a document's search object. */
void plandoc_slo_line(json_t *search, char *out, size_t cap);

/* plandoc_kind's forms: the ranked table, the CSV, the pictures. */
void plandoc_text(FILE *f, json_t *doc);
void plandoc_csv(FILE *f, json_t *doc);
int plandoc_plot(json_t *doc, const char *dir, struct plot_opts *o, struct err *e);

#endif
