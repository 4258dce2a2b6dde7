/*
 * trace_vllm: a `vllm bench serve --save-result --save-detailed` result
 * (or SGLang bench_serving's JSON lines) as a trace for trace.h: the
 * per-request input_lens, output_lens and start_times of one result.
 */
#include "trace_int.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonvals.h"   /* JSON values as benchmark tools write them */
#include "xalloc.h"

/* An array key of a vLLM result, NULL when absent or null. */
static const json_t *vllm_array(const json_t *top, const char *key)
{
	const json_t *v = json_object_get(top, key);
	return json_is_null(v) ? NULL : v;
}

static int vllm_rows(struct reader *rd, const json_t *top)
{
	/* One result of several: messages name the line it starts on. */
	long at = rd->result > 0 ? rd->lineno : 0;
	const json_t *in = vllm_array(top, "input_lens");
	const json_t *out = vllm_array(top, "output_lens");
	const json_t *st = vllm_array(top, "start_times");
	const json_t *errs = vllm_array(top, "errors");
	if (!in || !out)
		return trace_fail_at(rd, at,
			       "%s%s%s: missing; expected the per-request arrays that results saved with --save-detailed carry",
			       in ? "" : "input_lens", !in && !out ? ", " : "",
			       out ? "" : "output_lens");
	if (!json_is_array(in))
		return trace_json_bad(rd, at, "input_lens", "an array of token counts", in);
	if (!json_is_array(out))
		return trace_json_bad(rd, at, "output_lens", "an array of token counts", out);
	size_t n = json_array_size(in);
	if (json_array_size(out) != n)
		return trace_fail_at(rd, at, "output_lens: %zu entries, but input_lens has %zu",
			       json_array_size(out), n);
	if (st && !json_is_array(st))
		return trace_json_bad(rd, at, "start_times", "an array of seconds", st);
	if (st && json_array_size(st) != n)
		return trace_fail_at(rd, at, "start_times: %zu entries, but input_lens has %zu",
			       json_array_size(st), n);
	rd->timed = st != NULL;
	rd->time_divisor = 1.0;
	for (size_t i = 0; i < n; i++) {
		struct trace_row *r = trace_add_row(rd);
		const json_t *a = json_array_get(in, i), *b = json_array_get(out, i);
		char key[48];
		json_int_t v;
		if (!trace_json_int_in(a, 1, INT32_MAX, &v)) {
			snprintf(key, sizeof key, "input_lens[%zu]", i);
			return trace_json_bad(rd, at, key, "a positive integer", a);
		}
		r->input_len = (int32_t)v;
		if (!trace_json_int_in(b, 1, INT32_MAX, &v)) {
			/* vLLM writes 0 for a request that failed (its error in
			 * errors[i]): the measured statistics leave it out, so
			 * the replay does too. */
			const char *why = json_string_value(json_array_get(errs, i));
			if (json_is_integer(b) && json_integer_value(b) == 0 && why && *why) {
				rd->t->len--;
				rd->t->skipped_failed++;
				continue;
			}
			snprintf(key, sizeof key, "output_lens[%zu]", i);
			return trace_json_bad(rd, at, key, "a positive integer", b);
		}
		r->output_len = (int32_t)v;
		r->time_s = NAN;
		if (st) {
			const json_t *s = json_array_get(st, i);
			if (!json_is_number(s)) {
				snprintf(key, sizeof key, "start_times[%zu]", i);
				return trace_json_bad(rd, at, key, "seconds", s);
			}
			r->time_s = json_number_value(s);
		}
	}
	return 0;
}

/* The file's bytes, NUL-terminated; NULL with e for a NUL byte inside or a
 * read error. */
static char *read_all(struct reader *rd)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = xmalloc(cap);
	for (;;) {
		if (len + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		size_t n = fread(buf + len, 1, cap - len - 1, rd->f);
		len += n;
		if (n == 0)
			break;
	}
	buf[len] = '\0';
	if (ferror(rd->f)) {
		free(buf);
		trace_read_error(rd);
		return NULL;
	}
	const char *nul = memchr(buf, '\0', len);
	if (nul) {
		long line = 1;
		for (const char *q = buf; q < nul; q++)
			line += *q == '\n';
		free(buf);
		trace_fail_at(rd, line, "a NUL byte; expected JSON text");
		return NULL;
	}
	return buf;
}

/* One result object (`vllm bench serve --save-result`), or several one
 * after another (--append-result; SGLang's bench_serving appends a JSON
 * line per run, with Python's bare Infinity for an infinite rate): the
 * one rd->result names. Keys other than the per-request arrays are
 * ignored, so every version reads. */
int trace_load_vllm(struct reader *rd)
{
	char *text = read_all(rd);
	if (!text)
		return -1;
	struct jsonvals vals;
	int rc = jsonvals_parse(&vals, text, rd->path, rd->e);
	free(text);
	if (!rc && vals.len == 0)
		rc = trace_no_requests(rd);
	if (!rc && rd->result == 0 && vals.len > 1)
		rc = err_set(rd->e, "%s: %zu results one after another (--append-result, or SGLang's JSON lines); expected one, or [workload] trace_result naming the one to replay (1 to %zu)",
			     rd->path, vals.len, vals.len);
	if (!rc && rd->result > 0 && (size_t)rd->result > vals.len)
		rc = err_set(rd->e, "%s: [workload] trace_result = %d, but the file holds %zu result%s",
			     rd->path, rd->result, vals.len, vals.len == 1 ? "" : "s");
	if (!rc) {
		size_t k = rd->result > 0 ? (size_t)rd->result - 1 : 0;
		const json_t *top = vals.v[k];
		rd->lineno = vals.line[k];
		rc = json_is_object(top) ? vllm_rows(rd, top)
					 : trace_fail_at(rd, vals.line[k], "expected a JSON object (a vllm bench serve result)");
	}
	jsonvals_free(&vals);
	return rc;
}
