#include "cliplan.h"

#include <math.h>
#include <string.h>

#include "catalog.h"
#include "num.h"
#include "par.h"
#include "plot.h"
#include "progress.h"

void cliplan_init(struct cliplan *c, const char *verb, int replications)
{
	memset(c, 0, sizeof *c);
	c->verb = verb;
	c->fmt = FMT_TEXT;
	c->jobs = par_default_jobs();
	c->replications = replications;
	c->shard = (struct shard){ 1, 1 };
	plan_opts_default(&c->search);
	c->max_gmu = 0.9;
	plan_cost_default(&c->cost);
	c->progress = progress_create(verb, PROGRESS_AUTO);
}

void cliplan_free(struct cliplan *c)
{
	progress_destroy(c->progress);
	c->progress = NULL;
	inidoc_free(&c->ov);
	vllmflags_free(&c->vllm);
}

int cliplan_args(struct cliplan *c, const struct option *opts, int *argc, char ***argv, struct err *e)
{
	if (vllmflags_rewrite(c->verb, opts, *argc, *argv, &c->vllm, e))
		return -1;
	if (c->vllm.out.any)
		return err_set(e, "vllm bench serve's output flags (--save-result, --percentile-metrics, --result-dir, …) "
				  "belong to servesim run; %s writes its own --format",
			       c->verb);
	*argc = c->vllm.argc;
	*argv = c->vllm.argv;
	optind = 1;
	return 0;
}

int cliplan_next(struct cliplan *c, int argc, char **argv, const struct option *opts, struct err *e)
{
	for (;;) {
		int opt = getopt_long(argc, argv, "", opts, NULL);
		if (opt == -1)
			return -1;
		int r = cliplan_option(c, opt, optarg, e);
		if (r < 0)
			return CLIPLAN_BAD;
		if (r == 0)
			return opt;
	}
}

int cliplan_int(const char *flag, const char *s, int64_t min, int64_t max, const char *what,
		int64_t *out, struct err *e)
{
	if (num_parse_int64(s, out) || *out < min || *out > max)
		return err_set(e, "%s: expected %s, got '%s'", flag, what, s);
	return 0;
}

int cliplan_double(const char *flag, const char *s, double min, double max, const char *what,
		   double *out, struct err *e)
{
	if (num_parse_double(s, out) || !(*out >= min && *out <= max))
		return err_set(e, "%s: expected %s, got '%s'", flag, what, s);
	return 0;
}

int cliplan_option(struct cliplan *c, int opt, const char *arg, struct err *e)
{
	int64_t v;
	switch (opt) {
	case 1000:
		return cli_parse_format(arg, 1u << FMT_TEXT | 1u << FMT_CSV | 1u << FMT_JSON, &c->fmt, e) ? -1 : 1;
	case 1001:
		if (cliplan_int("--jobs", arg, 1, 4096, "a thread count >= 1", &v, e))
			return -1;
		c->jobs = (int)v;
		return 1;
	case 1002:
		c->plot_dir = arg;
		return 1;
	case 1003:
		if (cliplan_int("--replications", arg, 1, 10000, "a count of seeds >= 1", &v, e))
			return -1;
		c->replications = (int)v;
		return 1;
	case 1004:
		return inidoc_add_override_from(&c->ov, arg, vllmflags_origin(&c->vllm, arg), e) ? -1 : 1;
	case 1005:
		return resultdoc_shard_parse(&c->shard, arg, e) ? -1 : 1;
	case 1006:
		c->svg = true;
		return 1;
	case 1007:
		if (!c->progress)
			c->progress = progress_create(c->verb, PROGRESS_ON);
		return 1;
	case 1008:
		progress_destroy(c->progress);
		c->progress = NULL;
		return 1;
	case 1010:
		if (strcmp(arg, "rate") && strcmp(arg, "concurrency"))
			return err_set(e, "--by: expected rate or concurrency, got '%s'", arg);
		c->search.by = arg[0] == 'r' ? PLAN_BY_RATE : PLAN_BY_CONCURRENCY;
		return 1;
	case 1011:
		return cliplan_double("--confidence", arg, 0.5, 0.9999, "a probability in [0.5, 0.9999]",
				      &c->search.confidence, e) ? -1 : 1;
	case 1012:
		return cliplan_double("--duration", arg, 0, 1e7, "seconds >= 0", &c->search.duration_s, e) ?
			       -1 : 1;
	case 1013:
		c->max_load_given = true;
		return cliplan_double("--max-load", arg, 1e-3, 1e7, "a load > 0 (req/s, or requests)",
				      &c->search.max_rate, e) ? -1 : 1;
	case 1014:
		return cliplan_double("--tolerance", arg, 1e-4, 0.5, "a fraction in [0.0001, 0.5]",
				      &c->search.tolerance, e) ? -1 : 1;
	case 1015:
		c->fixed = true;
		return 1;
	case 1016:
		if (c->n_search == TUNE_MAX_AXES)
			return err_set(e, "--search: expected at most %d, got '%s' too", TUNE_MAX_AXES, arg);
		c->search_specs[c->n_search++] = arg;
		return 1;
	case 1017:
		return cliplan_double("--max-gpu-memory-utilization", arg, 0.01, 1, "a fraction in (0, 1]",
				      &c->max_gmu, e) ? -1 : 1;
	case 1018:
		if (strcmp(arg, "cloud") && strcmp(arg, "own"))
			return err_set(e, "--cost: expected cloud or own, got '%s'", arg);
		c->cost.own = arg[0] == 'o';
		return 1;
	case 1019:
		c->cost_own_flags = true;
		return cliplan_double("--years", arg, 0.01, 100, "years in (0, 100]", &c->cost.years, e) ? -1 : 1;
	case 1020:
		c->cost_own_flags = true;
		return cliplan_double("--power-usd-kwh", arg, 0, 100, "USD per kWh >= 0", &c->cost.usd_per_kwh, e) ?
			       -1 : 1;
	case 1021:
		c->cost_own_flags = true;
		return cliplan_double("--utilization", arg, 0.001, 1, "a fraction in (0, 1]", &c->cost.utilization,
				      e) ? -1 : 1;
	case 1022: {
		int64_t blocks;
		if (cliplan_int("--confirm", arg, 0, TUNE_MAX_CONFIRM, "a count of seed blocks in [0, 16]", &blocks, e))
			return -1;
		c->search.confirm_blocks = (int)blocks;
		c->confirm_given = true;
		return 1;
	}
	}
	return 0;
}

void cliplan_search(const struct cliplan *c, struct plan_opts *out)
{
	*out = c->search;
	out->replications = c->replications;
	out->jobs = c->jobs;
	out->progress = c->progress;
	if (out->by == PLAN_BY_CONCURRENCY) {
		if (!c->max_load_given)
			out->max_rate = 1024;
		out->max_rate = floor(out->max_rate) >= 1 ? floor(out->max_rate) : 1;
	}
}

int cliplan_cost_check(const struct cliplan *c, struct err *e)
{
	if (c->cost_own_flags && !c->cost.own)
		return err_set(e, "--years, --power-usd-kwh, --utilization: expected --cost own with them (cloud prices are per hour already)");
	return 0;
}

json_t *cliplan_cost_json(const struct plan_cost *pc)
{
	if (!pc->own)
		return json_pack("{ss}", "kind", "cloud");
	return json_pack("{ss sf sf sf}", "kind", "own", "years", pc->years, "power_usd_per_kwh", pc->usd_per_kwh,
			 "utilization", pc->utilization);
}

int cliplan_tune_space(const struct cliplan *c, const struct scenario *sc, const struct inidoc *ov,
		       struct tune_space *out, struct err *e)
{
	tune_space_default(out, sc, c->max_gmu);
	if (c->fixed) {
		if (c->n_search)
			return err_set(e, "--search: expected no --search with --fixed (which keeps the scenario's settings)");
		if (c->confirm_given)
			return err_set(e, "--confirm: expected no --confirm with --fixed (it re-searches the setting tuning chose)");
		out->n = 0;
		return 0;
	}
	for (int i = 0; i < c->n_search; i++)
		if (tune_space_add(out, c->search_specs[i], e))
			return -1;
	return tune_space_check(out, c->scenario, ov, e);
}

int cliplan_scenario(struct cliplan *c, int argc, char **argv, int optind_, struct scenario *sc,
		     struct err *e)
{
	if (optind_ < argc - 1)
		return err_set(e, "expected at most one scenario, got '%s' too", argv[optind_ + 1]);
	c->scenario = NULL;
	if (optind_ == argc - 1) {
		/* A scenario, or a model as `vllm serve MODEL` names it. */
		int r = vllmflags_scenario_or_model(argv[optind_], c->path, sizeof c->path, &c->ov, e);
		if (r < 0)
			return -1;
		c->scenario = r ? c->path : NULL;
	}
	return scenario_load(sc, c->scenario, &c->ov, e);
}

int cliplan_emit(struct cliplan *c, json_t *doc)
{
	progress_destroy(c->progress);   /* its line off the terminal first */
	c->progress = NULL;
	/* The plots first: a folder that cannot be written fails the verb
	 * before its table reaches stdout (outputs whole or absent). */
	struct plot_opts po = { .svg = c->svg };
	if (c->plot_dir) {
		struct err e;
		if (plot_doc(doc, c->plot_dir, &po, &e)) {
			fprintf(stderr, "servesim %s: %s\n", c->verb, e.msg);
			json_decref(doc);
			return EXIT_FAIL;
		}
	}
	int rc = resultdoc_print(stdout, doc, c->fmt) ? EXIT_FAIL : EXIT_OK;
	if (c->plot_dir)
		plot_note(c->verb, c->plot_dir, &po);
	json_decref(doc);
	return rc;
}
