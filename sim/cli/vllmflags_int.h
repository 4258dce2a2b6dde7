/*
 * vllmflags_int: what vllmflags.c (the rewrite), vllmtable.c (the table of
 * flags and their handlers) and vllmconfig.c (--config YAML) share. Not for
 * other modules: they use vllmflags.h.
 */
#ifndef SERVESIM_VLLMFLAGS_INT_H
#define SERVESIM_VLLMFLAGS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vllmflags.h"

enum vf_kind {
	VF_KEY,      /* value → SECTION.KEY=VALUE */
	VF_BOOL,     /* --X / --no-X → SECTION.KEY=true|false */
	VF_NOOP,     /* accepted; no meaning in a simulation */
	VF_REFUSE,   /* a feature servesim does not model */
	VF_OUT,      /* a vllm bench serve output setting (struct vllm_out) */
	VF_SPECIAL,  /* its own handler */
};

enum vf_arity { ARG_NONE, ARG_ONE, ARG_MANY };

struct rewrite;
struct vllm_flag;
typedef int (*vf_handler)(struct rewrite *rw, const struct vllm_flag *f, const char *val, struct err *e);

struct vllm_flag {
	const char *name;       /* without the dashes, vLLM's spelling */
	const char *alias;      /* a short spelling (-tp), or NULL */
	int kind, arity;
	const char *key;        /* VF_KEY, VF_BOOL: the scenario key; VF_SPECIAL: the key its handler sets (shown), or NULL */
	char type;              /* VF_KEY: 'i' integer, 'd' number (inf allowed), 's' string */
	vf_handler fn;          /* VF_SPECIAL, VF_OUT */
	bool bench;             /* a vllm bench serve flag (not vllm serve's) */
	const char *help;
};

/* The state of one rewrite: the new argv, and what is resolved at the end. */
struct rewrite {
	struct vllm_args *va;
	const char *verb;
	const char *origin;     /* "FILE:LINE" while reading --config, else NULL */
	char **front;           /* --set assignments from --config: they go first */
	size_t n_front, cap_front;
	bool bench_seen, in_config;
	int positionals;
	const char *dataset_name, *dataset_path, *sharegpt_output_len;
	const char *dtype;
	bool quantization_seen;
	const char *label;      /* the flag vf_emit_set's assignments come from, or NULL */
};

extern const struct vllm_flag vllm_flags[];   /* sorted by name */
extern const size_t vllm_n_flags;

/* The row for a name or its short alias; NULL when none. */
const struct vllm_flag *vf_find_flag(const char *name);

/* Keeps s (malloc'd) until vllmflags_free; returns it. */
char *vf_own(struct rewrite *rw, char *s);

/* Emits `--set key=value` (from --config: kept aside, to go first). */
void vf_emit_set(struct rewrite *rw, const char *key, const char *value);

/* "--flag" or "FILE:LINE: flag", for messages, in buf. */
const char *vf_where(const struct rewrite *rw, const struct vllm_flag *f, char *buf, size_t cap);

/* err_set of "WHERE: expected EXPECTED, got 'VAL'"; returns -1. */
int vf_bad_value(const struct rewrite *rw, const struct vllm_flag *f, const char *expected, const char *val,
		 struct err *e);

/* Applies flag f (negated: its --no- form) with its n_vals values.
 * Returns 0 or -1 with e. */
int vf_apply(struct rewrite *rw, const struct vllm_flag *f, bool negated, const char *const *vals, int n_vals,
	     struct err *e);

/* Resolves what needs every flag: --dataset-name with --dataset-path, --dtype. */
int vf_finish(struct rewrite *rw, struct err *e);

/* max_num_seqs → max-num-seqs, in place. */
void vf_normalize(char *name);

/* Reads vllm serve's YAML config and applies each key. Returns 0 or -1
 * with e naming the file, line and key. */
int vf_read_config(struct rewrite *rw, const char *path, struct err *e);

/* vLLM's human-readable integers (32k, 1M). Returns 0 or -1. */
int vf_human_int(const char *s, int64_t *out);

#endif
