/*
 * genconfig: a model's generation_config.json, the sampling defaults its
 * publisher ships beside config.json, as vLLM reads them.
 *
 * vLLM (ModelConfig.get_diff_sampling_param, under --generation-config
 * auto, its default) takes temperature, top_p, top_k, min_p,
 * repetition_penalty and max_new_tokens from the file; do_sample and the
 * token ids are ignored, a null field is absent. max_new_tokens is not
 * read here: it is the default of a request that sets no max_tokens, and
 * a benchmark's requests each set theirs. Where the file lives:
 * beside a Hugging Face snapshot's config.json, `generation_config.json`
 * (as transformers' GenerationConfig.from_pretrained finds it); beside a
 * models/<id>.json, `generation_config/<id>.json` (so every .json file
 * in models/ stays a config). genconfig_path says which.
 *
 * Invariant: a field the file does not set is GENCONFIG_UNSET; a set one
 * was checked against vLLM's SamplingParams ranges.
 */
#ifndef SERVESIM_GENCONFIG_H
#define SERVESIM_GENCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define GENCONFIG_UNSET (-2)

struct genconfig {
	bool present;              /* a file was found and read */
	double temperature;        /* >= 0; GENCONFIG_UNSET when absent */
	double top_p;              /* (0, 1] */
	int64_t top_k;             /* -1 or 0: off, else >= 1 */
	double min_p;              /* [0, 1] */
	double repetition_penalty; /* > 0; 1 is none */
};

/* The generation_config file that goes with the config at config_path
 * (see above), into out (cap bytes). Returns 0, or -1 when it does not
 * fit. Cannot fail otherwise; the file need not exist. */
int genconfig_path(const char *config_path, char *out, size_t cap);

/* Sets *g to no file: present false, every field unset. Cannot fail. */
void genconfig_none(struct genconfig *g);

/* Reads the generation_config file at path into *g. A file that does not
 * exist leaves g->present false and every field unset, and returns 0.
 * Returns -1 with e ("path:line:column: ..." for a syntax error, "path:
 * key: expected ..., got ..." for a bad value) otherwise. */
int genconfig_load(struct genconfig *g, const char *path, struct err *e);

/* Whether g sets a repetition penalty other than 1 (vLLM then runs its
 * penalties kernel). Cannot fail. */
bool genconfig_penalty(const struct genconfig *g);

#endif
