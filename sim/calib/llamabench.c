#include "llamabench.h"

#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "num.h"
#include "textfile.h"
#include "xalloc.h"

#define MAX_FIELDS 96

bool llamabench_sniff_header(const char *line)
{
	return strstr(line, "n_prompt") && strstr(line, "n_gen") && strstr(line, "avg_ns");
}

bool llamabench_sniff_json(const json_t *o)
{
	return json_is_object(o) && json_object_get(o, "n_prompt") && json_object_get(o, "n_gen") &&
	       json_object_get(o, "avg_ns");
}

enum { C_PROMPT, C_GEN, C_DEPTH, C_UBATCH, C_AVG, C_TYPE, C_FILE, N_COLS };
static const char *const col_names[N_COLS] = { "n_prompt", "n_gen", "n_depth", "n_ubatch", "avg_ns",
					       "model_type", "model_filename" };
static const bool col_required[N_COLS] = { true, true, false, false, true, false, false };

static int check_test(struct llamabench_test *t, const char *path, struct err *e)
{
	if (t->n_prompt < 0 || t->n_gen < 0 || t->n_depth < 0 || t->n_prompt + t->n_gen == 0)
		return err_set(e, "%s:%d: n_prompt, n_gen: expected counts >= 0, not both 0", path, t->line);
	if (!(t->avg_ns > 0))
		return err_set(e, "%s:%d: avg_ns: expected a time in ns > 0, got %g", path, t->line, t->avg_ns);
	if (t->n_ubatch <= 0)
		t->n_ubatch = 512;
	return 0;
}

int llamabench_parse_csv(struct llamabench_list *out, const char *text, const char *path,
			 struct err *e)
{
	memset(out, 0, sizeof *out);
	struct csv_row row = { 0 };
	char **f = NULL;
	int col[N_COLS], line = 0, n_head = 0, rc = 0;
	for (int c = 0; c < N_COLS; c++)
		col[c] = -1;
	const char *cur = text, *p;
	size_t len;
	while (!rc && textfile_next_line(&cur, &p, &len)) {
		line++;
		if (len == 0 || (len == 1 && p[0] == '\r'))
			continue;
		int n = csv_split(p, len, &row);   /* RFC 4180 (csv.h) */
		f = row.f;
		if (n < 0 || n > MAX_FIELDS) {
			rc = err_set(e, "%s:%d: expected a CSV line of at most %d fields%s", path, line, MAX_FIELDS,
				     n < 0 ? " (a quote is not closed)" : "");
			break;
		}
		if (!n_head) {
			n_head = n;
			for (int i = 0; i < n; i++)
				for (int c = 0; c < N_COLS; c++)
					if (!strcmp(f[i], col_names[c]))
						col[c] = i;
			for (int c = 0; c < N_COLS; c++)
				if (col_required[c] && col[c] < 0)
					rc = err_set(e, "%s:1: %s: missing column (a llama-bench CSV has n_prompt, n_gen, avg_ns)",
						     path, col_names[c]);
			continue;
		}
		if (n != n_head) {
			rc = err_set(e, "%s:%d: expected %d fields as in the header, got %d", path, line, n_head, n);
			break;
		}
		struct llamabench_test t = { .line = line };
		int64_t *ints[] = { &t.n_prompt, &t.n_gen, &t.n_depth, &t.n_ubatch };
		for (int c = C_PROMPT; c <= C_UBATCH && !rc; c++)
			if (col[c] >= 0 && num_parse_int64(f[col[c]], ints[c]))
				rc = err_set(e, "%s:%d: %s: expected an integer, got '%s'", path, line, col_names[c],
					     f[col[c]]);
		if (!rc && num_parse_double(f[col[C_AVG]], &t.avg_ns))
			rc = err_set(e, "%s:%d: avg_ns: expected nanoseconds, got '%s'", path, line, f[col[C_AVG]]);
		if (rc)
			break;
		if (col[C_TYPE] >= 0)
			snprintf(t.model_type, sizeof t.model_type, "%s", f[col[C_TYPE]]);
		if (col[C_FILE] >= 0)
			snprintf(t.model_filename, sizeof t.model_filename, "%s", f[col[C_FILE]]);
		if ((rc = check_test(&t, path, e)))
			break;
		xgrow(&out->v, &out->cap, out->len + 1, sizeof *out->v);
		out->v[out->len++] = t;
	}
	csv_row_free(&row);
	if (!rc && out->len == 0)
		rc = err_set(e, "%s: no llama-bench tests (a header and no rows)", path);
	return rc;
}

static int json_int(const json_t *o, const char *key, bool required, int64_t *out, const char *path,
		    int line, struct err *e)
{
	const json_t *v = json_object_get(o, key);
	if (!v) {
		*out = 0;
		return required ? err_set(e, "%s:%d: %s: missing", path, line, key) : 0;
	}
	if (!json_is_integer(v))
		return err_set(e, "%s:%d: %s: expected an integer", path, line, key);
	*out = (int64_t)json_integer_value(v);
	return 0;
}

static int from_object(struct llamabench_list *out, const json_t *o, const char *path, int line,
		       struct err *e)
{
	if (!llamabench_sniff_json(o))
		return err_set(e, "%s:%d: expected a llama-bench test object (n_prompt, n_gen, avg_ns)", path, line);
	struct llamabench_test t = { .line = line };
	if (json_int(o, "n_prompt", true, &t.n_prompt, path, line, e) ||
	    json_int(o, "n_gen", true, &t.n_gen, path, line, e) ||
	    json_int(o, "n_depth", false, &t.n_depth, path, line, e) ||
	    json_int(o, "n_ubatch", false, &t.n_ubatch, path, line, e))
		return -1;
	const json_t *avg = json_object_get(o, "avg_ns");
	if (!json_is_number(avg))
		return err_set(e, "%s:%d: avg_ns: expected a number of nanoseconds", path, line);
	t.avg_ns = json_number_value(avg);
	const char *s = json_string_value(json_object_get(o, "model_type"));
	snprintf(t.model_type, sizeof t.model_type, "%s", s ? s : "");
	s = json_string_value(json_object_get(o, "model_filename"));
	snprintf(t.model_filename, sizeof t.model_filename, "%s", s ? s : "");
	if (check_test(&t, path, e))
		return -1;
	xgrow(&out->v, &out->cap, out->len + 1, sizeof *out->v);
	out->v[out->len++] = t;
	return 0;
}

int llamabench_parse_json(struct llamabench_list *out, const json_t *array, const char *path,
			  struct err *e)
{
	memset(out, 0, sizeof *out);
	if (!json_is_array(array) || json_array_size(array) == 0)
		return err_set(e, "%s: expected a non-empty JSON array of llama-bench tests", path);
	for (size_t i = 0; i < json_array_size(array); i++)
		if (from_object(out, json_array_get(array, i), path, (int)i + 1, e))
			return err_prefix(e, "(JSON array element %zu)", i);
	return 0;
}

int llamabench_parse_jsonl(struct llamabench_list *out, const char *text, const char *path,
			   struct err *e)
{
	memset(out, 0, sizeof *out);
	int line = 0;
	const char *cur = text, *p;
	size_t len;
	while (textfile_next_line(&cur, &p, &len)) {
		line++;
		if (strspn(p, " \t\r") < len) {
			json_error_t je;
			json_t *o = json_loadb(p, len, JSON_REJECT_DUPLICATES, &je);
			if (!o)
				return err_set(e, "%s:%d:%d: invalid JSON: %s", path, line, je.column, je.text);
			int rc = from_object(out, o, path, line, e);
			json_decref(o);
			if (rc)
				return -1;
		}
	}
	if (out->len == 0)
		return err_set(e, "%s: no llama-bench tests", path);
	return 0;
}

void llamabench_free(struct llamabench_list *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}

const char *llamabench_weights(const char *model_type)
{
	/* llama.cpp's ftype names (llama_model_ftype_name), most specific first. */
	static const struct {
		const char *ftype, *precision;
	} map[] = {
		{ "Q4_K - Medium", "q4_k_m" }, { "Q5_K - Medium", "q5_k_m" }, { "Q6_K", "q6_k" },
		{ "Q8_0", "q8_0" },            { "Q4_0", "q4_0" },            { "BF16", "bf16" },
		{ "F16", "f16" },
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (strstr(model_type, map[i].ftype))
			return map[i].precision;
	return NULL;
}
