/*
 * vllmconfig: `vllm serve --config FILE`, a YAML mapping of flag names
 * (dashes or underscores) to values; booleans as true/false, lists for the
 * flags that take several values. Read with libyaml's event parser; a
 * nested mapping, an alias or an unknown key is an error naming the line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "num.h"
#include "vllmflags_int.h"
#include "xalloc.h"

/* ---- --config FILE (vllm serve's YAML) ----------------------------------- */

void vf_normalize(char *name)
{
	for (char *p = name; *p; p++)
		if (*p == '_')
			*p = '-';
}

static int yaml_fail(const char *path, const yaml_parser_t *p, struct err *e)
{
	return err_set(e, "%s:%zu: invalid YAML: %s", path, p->problem_mark.line + 1,
		       p->problem ? p->problem : "syntax error");
}

/* One key with its scalar or list values, from the config file. */
static int config_entry(struct rewrite *rw, const char *path, size_t line, char *key, char **vals, int n,
			bool was_list, struct err *e)
{
	char origin[1100];
	snprintf(origin, sizeof origin, "%s:%zu", path, line);
	vf_normalize(key);
	bool negated = false;
	const struct vllm_flag *f = vf_find_flag(key);
	if (!f && !strncmp(key, "no-", 3) && (f = vf_find_flag(key + 3)) && f->kind == VF_BOOL)
		negated = true;
	if (!f || (negated && f->kind != VF_BOOL))
		return err_set(e, "%s: %s: not a vllm serve option servesim knows (servesim vllm-flags lists them)", origin,
			       key);
	rw->origin = origin;
	int rc;
	if (f->arity == ARG_NONE || f->kind == VF_BOOL) {
		bool on;
		if (was_list || n != 1 || num_parse_bool(vals[0], &on))
			rc = err_set(e, "%s: %s: expected true or false, got '%s'", origin, key, n ? vals[0] : "");
		else if (f->kind == VF_BOOL)
			rc = vf_apply(rw, f, negated ? on : !on, NULL, 0, e);
		else
			rc = on ? vf_apply(rw, f, false, NULL, 0, e) : 0;
	} else if (was_list && f->arity != ARG_MANY) {
		rc = err_set(e, "%s: %s: expected one value, got a list", origin, key);
	} else {
		rc = vf_apply(rw, f, false, (const char *const *)vals, n, e);
	}
	rw->origin = NULL;
	return rc;
}

/* Reads a mapping of scalars (or lists of scalars) and applies each. */
int vf_read_config(struct rewrite *rw, const char *path, struct err *e)
{
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return err_set(e, "--config %s: cannot open", path);
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, fp);
	int rc = 0, depth = 0;
	char *key = NULL;
	size_t key_line = 0;
	char *vals[64];
	int n = 0;
	bool in_list = false, done = false;
	rw->in_config = true;
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = yaml_fail(path, &p, e);
			break;
		}
		size_t line = ev.start_mark.line + 1;
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_MAPPING_START_EVENT:
			if (key)
				vf_normalize(key);
			if (key && !strcmp(key, "speculative-config"))
				rc = err_set(e, "%s:%zu: speculative-config: a nested mapping servesim does not read from a file; "
						"pass it as --speculative-config '{\"method\": …, \"num_speculative_tokens\": …}'",
					     path, key_line);
			else if (depth++ > 0 || key)
				rc = err_set(e, "%s:%zu: %s: nested settings are not vllm serve options servesim knows",
					     path, line, key ? key : "(a mapping)");
			break;
		case YAML_MAPPING_END_EVENT:
			depth--;
			break;
		case YAML_SEQUENCE_START_EVENT:
			if (!key || in_list)
				rc = err_set(e, "%s:%zu: expected KEY: VALUE pairs (vllm serve's --config), got a list",
					     path, line);
			in_list = true;
			n = 0;
			break;
		case YAML_SEQUENCE_END_EVENT:
			in_list = false;
			rc = config_entry(rw, path, key_line, key, vals, n, true, e);
			free(key);
			key = NULL;
			break;
		case YAML_SCALAR_EVENT: {
			const char *s = (const char *)ev.data.scalar.value;
			if (depth != 1) {
				rc = err_set(e, "%s:%zu: expected KEY: VALUE pairs (vllm serve's --config)", path, line);
			} else if (!key) {
				key = xstrdup(s);
				key_line = line;
			} else if (in_list) {
				if (n == 64)
					rc = err_set(e, "%s:%zu: %s: at most 64 values", path, line, key);
				else
					vals[n++] = vf_own(rw, xstrdup(s));
			} else {
				vals[0] = vf_own(rw, xstrdup(s));
				rc = config_entry(rw, path, key_line, key, vals, 1, false, e);
				free(key);
				key = NULL;
			}
			break;
		}
		case YAML_ALIAS_EVENT:
			rc = err_set(e, "%s:%zu: YAML aliases are not supported in a config", path, line);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	rw->in_config = false;
	free(key);
	yaml_parser_delete(&p);
	fclose(fp);
	return rc;
}
