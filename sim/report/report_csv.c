/*
 * report_csv: requests.csv, timeseries.csv and itl_histogram.csv of a run
 * (and, for run --out, openmetrics.txt), into a folder written whole or
 * not at all; and requests.csv's rows streamed while a lean run goes
 * (reqcsv), in the order of the requests' ids as a full run writes them
 * (reqorder.h holds a row done before an earlier id's).
 */
#include "report_int.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "numfmt.h"
#include "omsnap.h"
#include "reqorder.h"
#include "wholefile.h"
#include "xalloc.h"

static const char requests_header[] =
	"id,stage,conversation,turn,send_s,input_tokens,output_tokens,cached_tokens,"
	"ttft_s,tpot_s,e2el_s,queue_s,max_itl_s,preemptions,status,error,"
	"total_duration,load_duration,prompt_eval_count,prompt_eval_duration,eval_count,"
	"eval_duration,prompt_eval_rate_tok_s,eval_rate_tok_s\n";

/* Request id's row of requests.csv into buf (cap bytes, truncated);
 * returns its length, as snprintf does. */
static int request_row(char *buf, size_t cap, int64_t id, const struct request *r)
{
	if (r->state == REQ_FAILED)
		return snprintf(buf, cap, "%lld,%d,%d,%d,%.9f,%d,%d,0,,,,,,0,failed,\"%s\",,,,,,,,\n", (long long)id,
				r->stage, r->conversation, r->turn, (double)r->send_ns / 1e9, r->prompt_len,
				r->output_len, r->fail_reason);
	double ttft = (double)(r->first_token_ns - r->send_ns) / 1e9;
	double e2el = (double)(r->finish_ns - r->send_ns) / 1e9;
	double tpot = r->output_len > 1 ? (e2el - ttft) / (r->output_len - 1) : 0;
	struct ollama_fields o;
	ollama_fields_of(r, &o);
	/* "%lld,%d,%d,%d,%.9f,%d,%d,%d,%.9f,%.9f,%.9f,%.9f,%.9f,%d,ok,,%lld,%lld,
	 * %lld,%lld,%lld,%lld,%.3f,%.3f\n" by numfmt (printf's bytes; a
	 * third of snprintf's time). */
	const int64_t head[] = { id, r->stage, r->conversation, r->turn };
	const double secs[] = { ttft, tpot, e2el, (double)(r->first_scheduled_ns - r->enqueue_ns) / 1e9,
				(double)r->max_itl_ns / 1e9 };
	const int64_t ollama[] = { o.total_ns, o.load_ns, o.prompt_eval_count, o.prompt_eval_ns, o.eval_count,
				   o.eval_ns };
	char row[32 * NUMFMT_CAP], *p = row;
	for (size_t i = 0; i < sizeof head / sizeof *head; i++) {
		p += numfmt_int(p, head[i]);
		*p++ = ',';
	}
	p += numfmt_fixed(p, (double)r->send_ns / 1e9, 9);
	const int64_t lens[] = { r->prompt_len, r->output_len, r->cached_tokens };
	for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
		*p++ = ',';
		p += numfmt_int(p, lens[i]);
	}
	for (size_t i = 0; i < sizeof secs / sizeof *secs; i++) {
		*p++ = ',';
		p += numfmt_fixed(p, secs[i], 9);
	}
	*p++ = ',';
	p += numfmt_int(p, r->preemptions);
	memcpy(p, ",ok,", 4);
	p += 4;
	for (size_t i = 0; i < sizeof ollama / sizeof *ollama; i++) {
		*p++ = ',';
		p += numfmt_int(p, ollama[i]);
	}
	*p++ = ',';
	p += numfmt_fixed(p, ollama_c10_rate(o.prompt_eval_count, o.prompt_eval_ns), 3);
	*p++ = ',';
	p += numfmt_fixed(p, ollama_c10_rate(o.eval_count, o.eval_ns), 3);
	*p++ = '\n';
	*p = '\0';
	int n = (int)(p - row);
	if (cap > 0) {   /* as snprintf: truncated to cap - 1 bytes, the length of the whole */
		size_t k = (size_t)n < cap - 1 ? (size_t)n : cap - 1;
		memcpy(buf, row, k);
		buf[k] = '\0';
	}
	return n;
}

/* request_row in a string of its own (caller frees). */
static char *request_row_dup(int64_t id, const struct request *r)
{
	char buf[512];
	int n = request_row(buf, sizeof buf, id, r);
	char *row = xmalloc((size_t)n + 1);
	if ((size_t)n < sizeof buf)
		memcpy(row, buf, (size_t)n + 1);
	else
		request_row(row, (size_t)n + 1, id, r);
	return row;
}

static void put_row(FILE *f, int64_t id, const struct request *r)
{
	char buf[512];
	if ((size_t)request_row(buf, sizeof buf, id, r) < sizeof buf) {
		fputs(buf, f);
		return;
	}
	char *row = request_row_dup(id, r);
	fputs(row, f);
	free(row);
}

/* ---- requests.csv streamed as requests finish (report.h) ---- */

struct reqcsv {
	FILE *f;            /* the rows so far, in id order (an unlinked temporary file) */
	struct reqorder order;
};

/* An unlinked temporary file for file's rows, or NULL with e. */
static FILE *rows_file(const char *file, struct err *e)
{
	FILE *f = tmpfile();
	if (!f)
		err_set(e, "%s: cannot make a temporary file: %s", file, strerror(errno));
	return f;
}

struct reqcsv *reqcsv_create(struct err *e)
{
	FILE *f = rows_file("requests.csv", e);
	if (!f)
		return NULL;
	struct reqcsv *w = xcalloc(1, sizeof *w);
	w->f = f;
	return w;
}

static void put_held(void *ctx, const char *row)
{
	fputs(row, ctx);
}

void reqcsv_row(void *ctx, const struct request *r, int64_t settled_ns)
{
	(void)settled_ns;
	struct reqcsv *w = ctx;
	if (!reqorder_due(&w->order, r->id)) {   /* done before an earlier request: held */
		reqorder_hold(&w->order, r->id, request_row_dup(r->id, r));
		return;
	}
	put_row(w->f, r->id, r);
	reqorder_done(&w->order, put_held, w->f);
}

void reqcsv_destroy(struct reqcsv *w)
{
	if (!w)
		return;
	reqorder_free(&w->order);
	fclose(w->f);
	free(w);
}

/* The rows streamed into the temporary file from, into f; -1 with e
 * (naming file) when they cannot be read back. */
static int copy_rows(FILE *f, FILE *from, const char *file, struct err *e)
{
	char buf[65536];
	size_t n;
	if (fflush(from) || fseek(from, 0, SEEK_SET))
		return err_set(e, "%s: cannot read its rows back: %s", file, strerror(errno));
	while ((n = fread(buf, 1, sizeof buf, from)) > 0)
		fwrite(buf, 1, n, f);
	if (ferror(from))
		return err_set(e, "%s: cannot read its rows back: %s", file, strerror(errno));
	return fseek(from, 0, SEEK_END);
}

/* ---- timeseries.csv streamed as a lean run samples (report.h) ---- */

struct tsrows {
	FILE *f;   /* the rows so far (an unlinked temporary file) */
};

static void put_ts_row(FILE *f, const struct ts_row *t)
{
	/* "%.6f,%lld,%lld,%.6f,%lld,%.9f\n" by numfmt (printf's bytes). */
	char row[8 * NUMFMT_CAP], *p = row;
	p += numfmt_fixed(p, t->t_s, 6);
	*p++ = ',';
	p += numfmt_int(p, t->running);
	*p++ = ',';
	p += numfmt_int(p, t->waiting);
	*p++ = ',';
	p += numfmt_fixed(p, t->kv_usage, 6);
	*p++ = ',';
	p += numfmt_int(p, t->step_tokens);
	*p++ = ',';
	p += numfmt_fixed(p, t->step_s, 9);
	*p++ = '\n';
	fwrite(row, 1, (size_t)(p - row), f);
}

struct tsrows *tsrows_create(struct err *e)
{
	FILE *f = rows_file("timeseries.csv", e);
	if (!f)
		return NULL;
	struct tsrows *w = xcalloc(1, sizeof *w);
	w->f = f;
	return w;
}

void tsrows_row(void *ctx, const struct ts_row *t)
{
	struct tsrows *w = ctx;
	put_ts_row(w->f, t);
}

void tsrows_destroy(struct tsrows *w)
{
	if (!w)
		return;
	fclose(w->f);
	free(w);
}

static int requests_csv(FILE *f, const struct run_result *res, struct err *e)
{
	fputs(requests_header, f);
	if (res->rows) {
		if (res->rows->order.failed)
			return err_set(e, "requests.csv: cannot spill its held rows to a temporary file or read them back");
		assert(reqorder_missing(&res->rows->order) < 0);   /* every request is done: none held */
		return copy_rows(f, res->rows->f, "requests.csv", e);
	}
	for (size_t i = 0; i < res->reqs.len; i++)
		put_row(f, (int64_t)i, &res->reqs.v[i]);
	return 0;
}

static int timeseries_csv(FILE *f, const struct run_result *res, struct err *e)
{
	fprintf(f, "time_s,num_requests_running,num_requests_waiting,kv_cache_usage_perc,step_tokens,step_time_s\n");
	if (res->ts_rows)
		return copy_rows(f, res->ts_rows->f, "timeseries.csv", e);
	for (size_t i = 0; i < res->n_ts; i++)
		put_ts_row(f, &res->ts[i]);
	return 0;
}

static void itl_row(void *ctx, double mid, int64_t count)
{
	fprintf(ctx, "%.9f,%lld\n", mid, (long long)count);
}

/* Every token gap of the run, as the ITL histogram holds it (values within
 * 1/4096 of the true ones, stats.h). */
static int itl_histogram_csv(FILE *f, const struct run_result *res, struct err *e)
{
	(void)e;
	fprintf(f, "itl_s,tokens\n");
	loghist_each(&res->all.itl, itl_row, f);
	return 0;
}

/* The folder's files, and openmetrics.txt when om (epoch_s for it). */
static int write_dir(const char *dir, const struct run_result *res, bool om, double epoch_s,
		     struct err *e)
{
	static const struct {
		const char *name;
		int (*write)(FILE *f, const struct run_result *res, struct err *e);
	} files[] = {
		{ "requests.csv", requests_csv },
		{ "timeseries.csv", timeseries_csv },
		{ "itl_histogram.csv", itl_histogram_csv },
	};
	size_t n = sizeof files / sizeof *files;
	struct wholedir d;
	if (wholedir_open(&d, dir, e))
		return err_prefix(e, "--out");
	for (size_t i = 0; i < n + om; i++) {
		FILE *f = wholedir_file(&d, i < n ? files[i].name : "openmetrics.txt", e);
		if (!f) {
			wholedir_abort(&d);
			return -1;
		}
		int bad = 0;
		if (i < n) {
			bad = files[i].write(f, res, e);
		} else {
			report_openmetrics(f, res, epoch_s);
			if (res->om_snap)   /* a saved scrape not read back */
				bad = omsnap_failed(res->om_snap, e);
		}
		if (bad) {
			fclose(f);
			wholedir_abort(&d);
			return -1;
		}
		if (wholedir_close(&d, f, e)) {
			wholedir_abort(&d);
			return -1;
		}
	}
	return wholedir_commit(&d, e);
}

int report_csv(const char *dir, const struct run_result *res, struct err *e)
{
	return write_dir(dir, res, false, 0, e);
}

int report_out(const char *dir, const struct run_result *res, double epoch_s, struct err *e)
{
	return write_dir(dir, res, true, epoch_s, e);
}
