/*
 * reqdetail: vllm bench serve's --save-detailed arrays (input_lens,
 * output_lens, ttfts, latencies, start_times, errors, ollama_metrics)
 * streamed while a lean run's requests are done, and spliced into the
 * result JSON as it is written (report.h).
 *
 * Each request's elements are rendered when it is done (in id order,
 * reqorder.h holding those done early), one line per element, to one
 * unlinked temporary file per array. report_json puts a marker string
 * where each array goes (reqdetail_marks); report_json_dumpf writes the
 * JSON text around the markers and each array from its file, with the
 * separators and indentation jansson's dump gives an array that is a
 * value of the top-level object, so the bytes equal json_dumpf's of the
 * full run's object (test_reqcsv detailed_streamed_equals_full). Memory:
 * the reorder window and the JSON without its arrays.
 *
 * Invariants: every file holds one line per request put, in id order;
 * reals are rendered as jansson does at REQDETAIL_PRECISION digits.
 */
#include "report_int.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "reqorder.h"
#include "xalloc.h"

#define REQDETAIL_PRECISION 12 /* JSON_REAL_PRECISION of every JSON writer (cli.c, vllmsave.c) */

enum { D_IN, D_OUT, D_TTFT, D_LAT, D_START, D_ERR, D_OLLAMA, N_ARRAYS };

/* The arrays in the order vllm bench serve saves them. */
static const char *const array_names[N_ARRAYS] = { "input_lens", "output_lens", "ttfts", "latencies",
						   "start_times", "errors", "ollama_metrics" };
static const char *const ollama_keys[] = { "total_duration", "load_duration", "prompt_eval_count",
					   "prompt_eval_duration", "eval_count", "eval_duration" };

/* What a marker is in JSON text: "\u0001servesim-detail:" then the name. */
#define MARK_RAW "\001servesim-detail:"
#define MARK_DUMPED "\"\\u0001servesim-detail:"

struct reqdetail {
	FILE *f[N_ARRAYS];      /* each array's elements, a line each */
	struct reqorder order;
	int64_t n;              /* requests put */
};

struct reqdetail *reqdetail_create(struct err *e)
{
	struct reqdetail *d = xcalloc(1, sizeof *d);
	for (int k = 0; k < N_ARRAYS; k++) {
		if (!(d->f[k] = tmpfile())) {
			err_set(e, "--save-detailed: cannot make a temporary file: %s", strerror(errno));
			reqdetail_destroy(d);
			return NULL;
		}
	}
	return d;
}

void reqdetail_destroy(struct reqdetail *d)
{
	if (!d)
		return;
	for (int k = 0; k < N_ARRAYS; k++)
		if (d->f[k])
			fclose(d->f[k]);
	reqorder_free(&d->order);
	free(d);
}

/* r's elements, one line each in array order (caller frees): as
 * report_json's put_detailed renders them for a full run (reals as
 * jansson writes them at REQDETAIL_PRECISION digits: numfmt). */
static char *render(const struct request *r)
{
	_Static_assert(REQDETAIL_PRECISION == 12, "numfmt_json_real12 writes 12 digits");
	bool ok = r->state == REQ_FINISHED;
	char *err = NULL;
	if (!ok && r->fail_reason) {
		json_t *s = json_string(r->fail_reason);
		err = json_dumps(s, JSON_ENCODE_ANY);
		json_decref(s);
	}
	/* Built on the stack, then held at its own length (rows done early
	 * wait in the reorder window: memory). */
	char stack[16 * NUMFMT_CAP];
	size_t cap = sizeof stack + (err ? strlen(err) : 0);
	char *buf = err ? xmalloc(cap) : stack, *p = buf;
	p += numfmt_int(p, r->prompt_len);
	*p++ = '\n';
	p += numfmt_int(p, ok ? r->output_len : 0);
	*p++ = '\n';
	p += numfmt_json_real12(p, ok ? (double)(r->first_token_ns - r->send_ns) / 1e9 : 0);
	*p++ = '\n';
	p += numfmt_json_real12(p, ok ? (double)(r->finish_ns - r->send_ns) / 1e9 : 0);
	*p++ = '\n';
	p += numfmt_json_real12(p, (double)r->send_ns / 1e9);
	*p++ = '\n';
	const char *e = err ? err : "\"\"";
	size_t n = strlen(e);
	memcpy(p, e, n);
	p += n;
	*p++ = '\n';
	if (ok) {   /* ollama_metrics: six numbers, or an empty line for {} */
		struct ollama_fields of;
		ollama_fields_of(r, &of);
		const int64_t v[] = { of.total_ns, of.load_ns, of.prompt_eval_count, of.prompt_eval_ns,
				      of.eval_count, of.eval_ns };
		for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
			if (i)
				*p++ = ' ';
			p += numfmt_int(p, v[i]);
		}
	}
	*p++ = '\n';
	*p = '\0';
	size_t len = (size_t)(p - buf);
	char *row = xmalloc(len + 1);
	memcpy(row, buf, len + 1);
	if (buf != stack)
		free(buf);
	free(err);
	return row;
}

/* A rendered row's lines to the arrays' files. */
static void put_lines(void *ctx, const char *row)
{
	struct reqdetail *d = ctx;
	for (int k = 0; k < N_ARRAYS; k++) {
		const char *nl = strchr(row, '\n');
		fwrite(row, 1, (size_t)(nl - row) + 1, d->f[k]);
		row = nl + 1;
	}
	d->n++;
}

void reqdetail_row(void *ctx, const struct request *r, int64_t settled_ns)
{
	(void)settled_ns;
	struct reqdetail *d = ctx;
	char *row = render(r);
	if (!reqorder_due(&d->order, r->id)) {   /* done before an earlier request: held */
		reqorder_hold(&d->order, r->id, row);
		return;
	}
	put_lines(d, row);
	free(row);
	reqorder_done(&d->order, put_lines, d);
}

void reqdetail_marks(json_t *o)
{
	for (int k = 0; k < N_ARRAYS; k++) {
		char mark[64];
		snprintf(mark, sizeof mark, MARK_RAW "%s", array_names[k]);
		json_object_set_new(o, array_names[k], json_string(mark));
	}
}

/* jansson's dump_indent: a newline and depth levels of indentation, or
 * (space) one space unless compact. */
static void indent(FILE *f, size_t flags, int depth, bool space)
{
	static const char spaces[] = "\n                                ";
	int n = (int)(flags & JSON_MAX_INDENT);
	if (n > 0) {
		size_t w = (size_t)(n * depth);
		if (w < sizeof spaces - 1) {
			fwrite(spaces, 1, w + 1, f);
		} else {
			fputc('\n', f);
			for (size_t i = 0; i < w; i++)
				fputc(' ', f);
		}
	} else if (space && !(flags & JSON_COMPACT)) {
		fputc(' ', f);
	}
}

/* One ollama_metrics element (its line: six numbers, or empty for {}) as
 * jansson writes an object at depth 2. */
static void put_ollama(FILE *f, size_t flags, char *line)
{
	if (!*line) {
		fputs("{}", f);
		return;
	}
	fputc('{', f);
	indent(f, flags, 3, false);
	char *p = line;
	for (size_t i = 0; i < sizeof ollama_keys / sizeof *ollama_keys; i++) {
		/* The line's numbers are %lld's text already (render). */
		char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		fputc('"', f);
		fputs(ollama_keys[i], f);
		fputs(flags & JSON_COMPACT ? "\":" : "\": ", f);
		fwrite(p, 1, len, f);
		p += len + (end != NULL);
		if (i + 1 < sizeof ollama_keys / sizeof *ollama_keys) {
			fputc(',', f);
			indent(f, flags, 3, true);
		}
	}
	indent(f, flags, 2, false);
	fputc('}', f);
}

/* Array k from its file, as jansson writes an array at depth 1. */
static int put_array(FILE *f, size_t flags, struct reqdetail *d, int k, struct err *e)
{
	if (!d->n) {
		fputs("[]", f);
		return 0;
	}
	FILE *in = d->f[k];
	if (d->order.failed)
		return err_set(e, "--save-detailed: cannot spill its held rows to a temporary file or read them back");
	assert(reqorder_missing(&d->order) < 0);   /* every request is done: none held */
	if (fflush(in) || fseek(in, 0, SEEK_SET))
		return err_set(e, "--save-detailed: cannot read %s back: %s", array_names[k], strerror(errno));
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	fputc('[', f);
	indent(f, flags, 2, false);
	for (int64_t i = 0; i < d->n; i++) {
		if ((len = getline(&line, &cap, in)) <= 0) {
			free(line);
			return err_set(e, "--save-detailed: cannot read %s back: %s", array_names[k],
				       ferror(in) ? strerror(errno) : "short file");
		}
		line[len - 1] = '\0';
		if (k == D_OLLAMA)
			put_ollama(f, flags, line);
		else
			fputs(line, f);
		if (i + 1 < d->n) {
			fputc(',', f);
			indent(f, flags, 2, true);
		}
	}
	indent(f, flags, 1, false);
	fputc(']', f);
	free(line);
	if (fseek(in, 0, SEEK_END))
		return err_set(e, "--save-detailed: cannot seek %s's temporary file: %s", array_names[k], strerror(errno));
	return 0;
}

/* The array whose marker is at m (name: its n-byte name), or -1 when the
 * string there is not a marker reqdetail_marks made: one is the value of
 * the top-level key of its own name (`"ttfts": "\u0001servesim-detail:
 * ttfts"`), so a string elsewhere that reads the same (a model folder's
 * name in model_id) stays text. Not told apart: such a string as the
 * value of a nested key of an array's name, which servesim does not
 * write. */
static int own_marker(const char *text, const char *m, const char *name, size_t n)
{
	for (int k = 0; k < N_ARRAYS; k++) {
		if (strlen(array_names[k]) != n || strncmp(name, array_names[k], n))
			continue;
		char key[64];
		int len = snprintf(key, sizeof key, "\"%s\":", array_names[k]);
		const char *at = m > text && m[-1] == ' ' ? m - 1 : m;
		if ((size_t)(at - text) >= (size_t)len && !strncmp(at - len, key, (size_t)len))
			return k;
	}
	return -1;
}

int report_json_dumpf(json_t *j, FILE *f, size_t flags, const struct run_result *res, struct err *e)
{
	if (!res || !res->detail) {
		if (json_dumpf(j, f, flags))
			return err_set(e, "cannot write the JSON: %s", strerror(errno));
		return 0;
	}
	assert((flags & JSON_REAL_PRECISION(31)) == JSON_REAL_PRECISION(REQDETAIL_PRECISION));
	char *text = json_dumps(j, flags);
	if (!text)
		return err_set(e, "cannot write the JSON: jansson could not render it");
	const char *p = text, *m;
	int rc = 0;
	while (!rc && (m = strstr(p, MARK_DUMPED))) {
		const char *name = m + strlen(MARK_DUMPED), *q = strchr(name, '"');
		int k = own_marker(text, m, name, (size_t)(q - name));
		if (k < 0) {   /* a string that only looks like a marker: text */
			fwrite(p, 1, (size_t)(q + 1 - p), f);
			p = q + 1;
			continue;
		}
		fwrite(p, 1, (size_t)(m - p), f);
		rc = put_array(f, flags, res->detail, k, e);
		p = q + 1;
	}
	if (!rc)
		fputs(p, f);
	free(text);
	if (!rc && ferror(f))
		rc = err_set(e, "cannot write the JSON: %s", strerror(errno));
	return rc;
}
