/*
 * report_csv: requests.csv, timeseries.csv and itl_histogram.csv of a run
 * (and, for run --out, openmetrics.txt), into a folder written whole or
 * not at all.
 */
#include "report_int.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#include "wholefile.h"

static void requests_csv(FILE *f, const struct run_result *res)
{
	fprintf(f, "id,stage,conversation,turn,send_s,input_tokens,output_tokens,cached_tokens,"
		   "ttft_s,tpot_s,e2el_s,queue_s,max_itl_s,preemptions,status,error,"
		   "total_duration,load_duration,prompt_eval_count,prompt_eval_duration,eval_count,"
		   "eval_duration,prompt_eval_rate_tok_s,eval_rate_tok_s\n");
	for (size_t i = 0; i < res->reqs.len; i++) {
		const struct request *r = &res->reqs.v[i];
		if (r->state == REQ_FAILED) {
			fprintf(f, "%zu,%d,%d,%d,%.9f,%d,%d,0,,,,,,0,failed,\"%s\",,,,,,,,\n", i, r->stage, r->conversation,
				r->turn, (double)r->send_ns / 1e9, r->prompt_len, r->output_len, r->fail_reason);
			continue;
		}
		double ttft = (double)(r->first_token_ns - r->send_ns) / 1e9;
		double e2el = (double)(r->finish_ns - r->send_ns) / 1e9;
		double tpot = r->output_len > 1 ? (e2el - ttft) / (r->output_len - 1) : 0;
		fprintf(f, "%zu,%d,%d,%d,%.9f,%d,%d,%d,%.9f,%.9f,%.9f,%.9f,%.9f,%d,ok,", i, r->stage,
			r->conversation, r->turn, (double)r->send_ns / 1e9, r->prompt_len, r->output_len,
			r->cached_tokens, ttft, tpot, e2el, (double)(r->first_scheduled_ns - r->enqueue_ns) / 1e9,
			(double)r->max_itl_ns / 1e9, r->preemptions);
		struct ollama_fields o;
		ollama_fields_of(r, &o);
		fprintf(f, ",%lld,%lld,%lld,%lld,%lld,%lld,%.3f,%.3f\n", (long long)o.total_ns,
			(long long)o.load_ns, (long long)o.prompt_eval_count, (long long)o.prompt_eval_ns,
			(long long)o.eval_count, (long long)o.eval_ns,
			ollama_c10_rate(o.prompt_eval_count, o.prompt_eval_ns), ollama_c10_rate(o.eval_count, o.eval_ns));
	}
}

static void timeseries_csv(FILE *f, const struct run_result *res)
{
	fprintf(f, "time_s,num_requests_running,num_requests_waiting,kv_cache_usage_perc,step_tokens,step_time_s\n");
	for (size_t i = 0; i < res->n_ts; i++) {
		const struct ts_row *t = &res->ts[i];
		fprintf(f, "%.6f,%lld,%lld,%.6f,%lld,%.9f\n", t->t_s, (long long)t->running,
			(long long)t->waiting, t->kv_usage, (long long)t->step_tokens, t->step_s);
	}
}

static void itl_row(void *ctx, double mid, int64_t count)
{
	fprintf(ctx, "%.9f,%lld\n", mid, (long long)count);
}

/* Every token gap of the run, as the ITL histogram holds it (values within
 * 1/4096 of the true ones, stats.h). */
static void itl_histogram_csv(FILE *f, const struct run_result *res)
{
	fprintf(f, "itl_s,tokens\n");
	loghist_each(&res->all.itl, itl_row, f);
}

/* The folder's files, and openmetrics.txt when om (epoch_s for it). */
static int write_dir(const char *dir, const struct run_result *res, bool om, double epoch_s,
		     struct err *e)
{
	static const struct {
		const char *name;
		void (*write)(FILE *f, const struct run_result *res);
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
		if (i < n)
			files[i].write(f, res);
		else
			report_openmetrics(f, res, epoch_s);
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
