/*
 * report_csv: requests.csv, timeseries.csv and itl_histogram.csv of a run,
 * into a folder, each written whole or not at all.
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
		report_ollama_fields(r, &o);
		fprintf(f, ",%lld,%lld,%lld,%lld,%lld,%lld,%.3f,%.3f\n", (long long)o.total_ns,
			(long long)o.load_ns, (long long)o.prompt_eval_count, (long long)o.prompt_eval_ns,
			(long long)o.eval_count, (long long)o.eval_ns,
			report_c10_rate(o.prompt_eval_count, o.prompt_eval_ns), report_c10_rate(o.eval_count, o.eval_ns));
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

int report_csv(const char *dir, const struct run_result *res, struct err *e)
{
	static const struct {
		const char *name;
		void (*write)(FILE *f, const struct run_result *res);
	} files[] = {
		{ "requests.csv", requests_csv },
		{ "timeseries.csv", timeseries_csv },
		{ "itl_histogram.csv", itl_histogram_csv },
	};
	struct stat st;
	if (stat(dir, &st) != 0 && mkdir(dir, 0777) != 0)
		return err_set(e, "--out %s: cannot create the folder: %s", dir, strerror(errno));
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", dir, files[i].name) >= (int)sizeof path)
			return err_set(e, "--out %s: the path is too long", dir);
		FILE *f = wholefile_open(path, e);
		if (!f)
			return -1;
		files[i].write(f, res);
		if (wholefile_commit(f, path, e))
			return -1;
	}
	return 0;
}
