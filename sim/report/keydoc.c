/*
 * keydoc: docs/keys.md from the key tables (see keydoc.h). A key's default
 * is read from a scenario loaded from an empty file (the state a scenario
 * file starts from) through the table's own offset and type, so the
 * default shown is the one the parser leaves; a value outside the key's
 * accepted range (-1, 0, an empty name) is the code's "not given" mark and
 * is shown as "unset": what the engine derives then is the meaning
 * scenarios.md gives.
 */
#include "keydoc.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "clustercfg.h"
#include "engine.h"
#include "hwprofile.h"
#include "kvlink.h"
#include "router.h"
#include "scenario.h"
#include "specdec.h"
#include "trace.h"
#include "vllmver.h"
#include "xalloc.h"

/* Where each section's keys are explained, relative to docs/. */
static const struct {
	const char *section;
	const char *see;
} section_docs[] = {
	{ "run", "[scenarios.md](scenarios.md)" },
	{ "workload", "[scenarios.md](scenarios.md)" },
	{ "engine",
	  "[scenarios.md](scenarios.md), [engine-vllm.md](engine-vllm.md#keys-engine), "
	  "[engine-ollama.md](engine-ollama.md#keys-engine-unless-said), [cluster.md](cluster.md) "
	  "(speculative decoding)" },
	{ "slo", "[scenarios.md](scenarios.md), [planning.md](planning.md)" },
	{ "cluster", "[cluster.md](cluster.md)" },
};

/* Keys whose parsed default is not what a run uses: the run takes it from
 * the version table (sim/engine/vllmver.c). */
static void newest_version(char *buf, size_t cap)
{
	snprintf(buf, cap, "unset: the newest, %s", vllmver_newest()->name);
}

static void async_by_version(char *buf, size_t cap)
{
	const struct vllm_version *v = vllmver_newest();
	snprintf(buf, cap, "by `vllm_version` (%s at %s; false with pipeline parallelism)",
		 v->async_scheduling ? "true" : "false", v->name);
}

static void genconfig_by_version(char *buf, size_t cap)
{
	snprintf(buf, cap, "by `vllm_version` (auto from 0.8, vllm before)");
}

/* What the key tables alone cannot say: a key checked against a name
 * table after binding (its row's expect says only "a router name") accepts
 * that table's names; a key whose parsed default is not what a run uses
 * takes it from the version table. */
static const struct key_note {
	const char *section, *key;
	void (*names)(char *buf, size_t cap);	     /* NULL: the row's expect */
	void (*default_text)(char *buf, size_t cap); /* NULL: the parsed default */
} notes[] = {
	{ "engine", "kind", engine_class_list, NULL },
	{ "engine", "speculative_method", specdec_list, NULL },
	{ "workload", "trace_format", trace_format_list, NULL },
	{ "engine", "vllm_version", NULL, newest_version },
	{ "engine", "async_scheduling", NULL, async_by_version },
	{ "engine", "generation_config", NULL, genconfig_by_version },
	{ "cluster", "router", router_list, NULL },
	{ "cluster", "kv_transfer", kvlink_list, NULL },
};

static const struct key_note *note_of(const struct inidoc_key *k)
{
	for (size_t i = 0; i < sizeof notes / sizeof *notes; i++)
		if (!strcmp(notes[i].section, k->section) && !strcmp(notes[i].key, k->key))
			return &notes[i];
	return NULL;
}

/* What k accepts, into buf: its name table's names, else its expect. */
static void accepted_text(char *buf, size_t cap, const struct inidoc_key *k)
{
	const struct key_note *n = note_of(k);
	if (n && n->names) {
		char names[1024];
		n->names(names, sizeof names);
		snprintf(buf, cap, "one of %s", names);
	} else {
		snprintf(buf, cap, "%s", k->expect);
	}
}

/* Fills buf and returns true when k's default is derived. */
static bool derived_text(char *buf, size_t cap, const struct inidoc_key *k)
{
	const struct key_note *n = note_of(k);
	if (!n || !n->default_text)
		return false;
	n->default_text(buf, cap);
	return true;
}

static const char *type_name(enum ini_type t)
{
	switch (t) {
	case INI_DOUBLE:
		return "number";
	case INI_INT:
		return "integer";
	case INI_BOOL:
		return "true/false";
	case INI_STRING:
		return "text";
	case INI_ENUM:
		return "name";
	}
	return "?";
}

/* The value of key k in obj, as a scenario file would write it. */
static void value_text(char *buf, size_t cap, const struct inidoc_key *k, const void *obj)
{
	const char *p = (const char *)obj + k->offset;
	switch (k->type) {
	case INI_DOUBLE: {
		double v;
		memcpy(&v, p, sizeof v);
		if (!inidoc_key_in_range(k, v))
			snprintf(buf, cap, "unset");
		else if (isinf(v))
			snprintf(buf, cap, "inf");
		else
			snprintf(buf, cap, "%.10g", v);
		return;
	}
	case INI_INT: {
		int64_t v;
		memcpy(&v, p, sizeof v);
		if (!inidoc_key_in_range(k, (double)v))
			snprintf(buf, cap, "unset");
		else
			snprintf(buf, cap, "%lld", (long long)v);
		return;
	}
	case INI_BOOL: {
		bool v;
		memcpy(&v, p, sizeof v);
		snprintf(buf, cap, "%s", v ? "true" : "false");
		return;
	}
	case INI_STRING:
		snprintf(buf, cap, "%s", *p ? p : "unset");
		return;
	case INI_ENUM: {
		int v;
		memcpy(&v, p, sizeof v);
		snprintf(buf, cap, "%s", v >= 0 && k->choices ? k->choices[v] : "unset");
		return;
	}
	}
}

/* A table cell: '|' would end it. */
static void cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static void section_head(FILE *f, const char *section, bool scenario)
{
	fprintf(f, "\n### `[%s]`\n\n", section);
	for (size_t d = 0; scenario && d < sizeof section_docs / sizeof *section_docs; d++)
		if (!strcmp(section_docs[d].section, section))
			fprintf(f, "Explained in %s.\n\n", section_docs[d].see);
	fputs(scenario ? "| key | type | accepted | default |\n|---|---|---|---|\n"
		       : "| key | type | accepted | required |\n|---|---|---|---|\n",
	      f);
}

/* One row: the key, its type, what it accepts and its default (file_obj
 * and builtin_obj; NULL for a profile: whether it is required). */
static void write_row(FILE *f, const struct inidoc_key *k, const void *file_obj,
		      const void *builtin_obj)
{
	fprintf(f, "| `%s` | %s | ", k->key, type_name(k->type));
	char acc[1100];
	accepted_text(acc, sizeof acc, k);
	cell(f, acc);
	fputs(" | ", f);
	char a[INI_VALUE_MAX + 64], b[INI_VALUE_MAX + 64];
	if (file_obj && derived_text(a, sizeof a, k)) {
		cell(f, a);
	} else if (file_obj) {
		value_text(a, sizeof a, k, file_obj);
		value_text(b, sizeof b, k, builtin_obj);
		cell(f, a);
		if (strcmp(a, b)) {
			fputs(" (built-in: ", f);
			cell(f, b);
			fputs(")", f);
		}
	} else {
		fputs(k->flags & INI_REQUIRED ? "yes" : "no", f);
	}
	fputs(" |\n", f);
}

/* One Markdown table a section, sections in the order they first appear
 * (the engine classes' [engine] keys join the scenario's own), rows in
 * the table's order. */
static void write_sections(FILE *f, const struct inidoc_key *keys, size_t n, const void *file_obj,
			   const void *builtin_obj)
{
	for (size_t i = 0; i < n; i++) {
		bool first = true;
		for (size_t p = 0; p < i && first; p++)
			first = strcmp(keys[p].section, keys[i].section) != 0;
		if (!first)
			continue;
		section_head(f, keys[i].section, file_obj != NULL);
		for (size_t j = i; j < n; j++)
			if (!strcmp(keys[j].section, keys[i].section))
				write_row(f, &keys[j], file_obj, builtin_obj);
	}
}

int keydoc_write_md(FILE *f, struct err *e)
{
	struct scenario *file_sc = xcalloc(1, sizeof *file_sc);
	struct scenario *builtin_sc = xcalloc(1, sizeof *builtin_sc);
	int rc = scenario_load(file_sc, "/dev/null", NULL, e);
	if (rc == 0)
		rc = scenario_load(builtin_sc, NULL, NULL, e);
	if (rc == 0) {
		fputs("# Key reference\n\n"
		      "<!-- Generated by `servesim keys --format md` from the key tables the "
		      "parsers\n"
		      "bind; do not edit. The CTest test keys_doc fails when this file differs "
		      "from\n"
		      "that output; refresh it with\n"
		      "`build/sim/servesim keys --format md > docs/keys.md`. -->\n\n"
		      "Every key a scenario file or a hardware profile may hold, as the parser\n"
		      "reads it (any other key is an error naming the file and line). *accepted*\n"
		      "is what an error says when a value is refused. *default* is what a\n"
		      "scenario file starts from; `servesim run` without a file starts from the\n"
		      "built-in default, shown where it differs. *unset* means the key has no\n"
		      "value until given: what the engine does then (derive it from the device\n"
		      "or the model, no limit) is in the meanings of "
		      "[scenarios.md](scenarios.md).\n"
		      "Any key can also be given on the command line as `--set "
		      "SECTION.KEY=VALUE`.\n\n"
		      "## Scenario files (`scenarios/*.ini`)\n",
		      f);
		struct inidoc_key all[SCENARIO_MAX_KEYS];
		size_t n = scenario_keys(all);
		write_sections(f, all, n, file_sc, builtin_sc);
		const struct inidoc_key *keys = clustercfg_keys(&n);
		write_sections(f, keys, n, &file_sc->cluster, &builtin_sc->cluster);
		fputs("\n### `[prefill]`, `[decode]`\n\n"
		      "The pools of a disaggregated cluster: each takes the `[engine]` keys and\n"
		      "`hardware`, overriding them for its replicas ([cluster.md](cluster.md)).\n\n"
		      "## Hardware profiles (`hardware_profiles/*.ini`)\n\n"
		      "A profile's figures have no defaults: each device states its own, with a\n"
		      "`source` "
		      "([../hardware_profiles/README.md](../hardware_profiles/README.md),\n"
		      "[profiles.md](profiles.md)). An optional key left out is derived or\n"
		      "taken from the device class's defaults.\n",
		      f);
		keys = hw_profile_keys(&n);
		write_sections(f, keys, n, NULL, NULL);
	}
	free(file_sc);
	free(builtin_sc);
	return rc;
}
