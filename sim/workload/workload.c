#include "workload.h"

#include <assert.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evq.h"
#include "iround.h"
#include "num.h"
#include "rngstream.h"
#include "trace.h"
#include "xalloc.h"

enum stream { S_ARRIVAL, S_INPUT, S_OUTPUT, S_GROUP, S_THINK, S_PRIORITY, N_STREAMS };
static const char *const stream_names[N_STREAMS] = {
	"arrival", "input_len", "output_len", "prefix_group", "think", "priority"
};

struct lengths {               /* an empirical distribution */
	int32_t *v;
	size_t n;
};

/* One side's length law, ready to draw: the spec, and what draw_len would
 * otherwise work out again at every request (a lognormal's parameters, two
 * logs and a square root: libm's share of the 1M benchmark went 9.9 ->
 * 7.4% under perf without them). */
struct len_law {
	const struct len_spec *spec;
	struct lengths emp;        /* LEN_EMPIRICAL */
	double mu, sigma;          /* LEN_LOGNORMAL: the underlying normal's */
};

struct conversation {
	int32_t group;
	int32_t turns_done;
	int32_t context;           /* tokens of history (prompt + output so far) */
	int64_t user;              /* closed-loop user, or -1 */
	int32_t priority;          /* its class of workload.priorities (0 without) */
};

struct workload {
	const struct scenario *sc;
	gsl_rng *rng[N_STREAMS];
	struct len_law in, out;
	struct trace trace;
	struct conversation *convs;
	size_t n_convs, cap_convs;
	int64_t made;              /* requests made so far */
	/* A single-stage open loop made lazily (workload_open): the sends
	 * left to make, and the state of stage_times between them. */
	int64_t lazy_left, lazy_n;
	double lazy_acc, lazy_scale;
	int64_t stage_starts[SCENARIO_MAX_STAGES + 1];
	int n_stages;
};

/* The own_key of conversation c's prompts is this plus c. */
#define OWN_KEY_CONVERSATION (0xc0 * 0x100000000000000ULL)

static int load_lengths(struct lengths *l, const char *path, const char *key, struct err *e)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return err_set(e, "%s: cannot open (from [workload] %s): %m", path, key);
	char *line = NULL;
	size_t cap = 0, vcap = 0;
	int lineno = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (memchr(line, '\0', (size_t)len)) {   /* the rest of the line would be lost */
			err_set(e, "%s:%d: %s: a NUL byte; expected text", path, lineno, key);
			free(line);
			fclose(f);
			return -1;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		int64_t v;
		if (num_parse_int64(line, &v) || v < 1 || v > INT32_MAX) {
			err_set(e, "%s:%d: %s: expected a token count >= 1, got '%s'", path, lineno, key, line);
			free(line);
			fclose(f);
			return -1;
		}
		xgrow(&l->v, &vcap, l->n + 1, sizeof *l->v);
		l->v[l->n++] = (int32_t)v;
	}
	free(line);
	fclose(f);
	if (l->n == 0)
		return err_set(e, "%s: %s: no lengths in the file", path, key);
	return 0;
}

/* law's parameters for draw_len. */
static void law_init(struct len_law *law, const struct len_spec *spec)
{
	law->spec = spec;
	if (spec->dist == LEN_LOGNORMAL) {
		double L = (double)spec->mean;
		double s2 = log(1 + spec->stddev * spec->stddev / (L * L));
		law->mu = log(L) - s2 / 2;
		law->sigma = sqrt(s2);
	}
}

/* A drawn real length to a whole one, as round() (iround, without the
 * libm call); capped first, far above draw_len's own cap, so that iround
 * is in range (and a NaN is capped too). */
static double round_len(double x)
{
	return (double)iround(fmin(x, 0x1p40));
}

/* One length from law, as vLLM's random dataset or the named law. */
static int32_t draw_len(struct workload *w, const struct len_law *law, gsl_rng *rng, bool output)
{
	const struct len_spec *spec = law->spec;
	double L = (double)spec->mean, r = w->sc->random_range_ratio;
	double v;
	switch (spec->dist) {
	case LEN_NORMAL:
		v = round_len(L + gsl_ran_gaussian(rng, spec->stddev));
		break;
	case LEN_LOGNORMAL:
		v = round_len(gsl_ran_lognormal(rng, law->mu, law->sigma));
		break;
	case LEN_EMPIRICAL:
		v = law->emp.v[gsl_rng_uniform_int(rng, law->emp.n)];
		break;
	default: {
		/* datasets/random.py: integers in [floor(L(1-r)), ceil(L(1+r))]. */
		double lo = floor(L * (1 - r)), hi = ceil(L * (1 + r));
		if (output && lo < 1)
			lo = 1;
		v = lo + (double)gsl_rng_uniform_int(rng, (unsigned long)(hi - lo + 1));
	}
	}
	return v < 1 ? 1 : v > INT32_MAX / 2 ? INT32_MAX / 2 : (int32_t)v;
}

/* The arrival processes: the gap before the next request at rate r, by
 * enum arrival_kind (vLLM: burstiness 1 is Poisson, inf is constant, any
 * other value gamma with shape burstiness and mean 1/r). */
static double gap_poisson(struct workload *w, double r)
{
	return gsl_ran_exponential(w->rng[S_ARRIVAL], 1 / r);
}

static double gap_gamma(struct workload *w, double r)
{
	double k = w->sc->burstiness;
	return gsl_ran_gamma(w->rng[S_ARRIVAL], k, 1 / (r * k));
}

static double gap_constant(struct workload *w, double r)
{
	(void)w;
	return 1 / r;
}

static double (*const arrival_gaps[])(struct workload *, double) = {
	[ARRIVAL_POISSON] = gap_poisson,
	[ARRIVAL_GAMMA] = gap_gamma,
	[ARRIVAL_CONSTANT] = gap_constant,
};

/* The rate for request i of n: the scenario's, or vLLM's ramp-up
 * (_get_current_request_rate: linear or exponential in i/(n-1)). */
static double rate_of(const struct scenario *sc, double rate, int64_t i, int64_t n)
{
	if (sc->ramp_up_strategy == RAMP_NONE)
		return rate;
	double progress = (double)i / (double)(n > 1 ? n - 1 : 1);
	double a = sc->ramp_up_start_rps, b = sc->ramp_up_end_rps;
	if (sc->ramp_up_strategy == RAMP_LINEAR)
		return a + (b - a) * progress;
	return a * pow(b / a, progress);
}

/* A send time t (seconds) in ns, or -1 with e naming what set it when it
 * is past the simulator's horizon (or not a time at all). */
static int send_ns(const struct workload *w, double t, const char *what, int64_t *ns,
		   struct err *e)
{
	if (evq_ns_of_s(t, ns) == 0)
		return 0;
	return err_set(e, "%s: %s: a request would be sent at %g s, past the simulator's horizon of %g s; expected a shorter run",
		       w->sc->path[0] ? w->sc->path : "built-in default", what, t, EVQ_HORIZON_S);
}

/* Send times of n requests in one stage starting at t0, as serve.py's
 * get_request: i.i.d. gaps at each request's rate, cumulated, then (without
 * ramp-up) rescaled so the last lands at t0 + n/rate. */
static void stage_times(struct workload *w, int64_t n, double rate, double t0, double *out)
{
	const struct scenario *sc = w->sc;
	double (*const gap)(struct workload *, double) = arrival_gaps[sc->arrival];
	double acc = 0;
	for (int64_t i = 0; i < n; i++) {
		double r = rate_of(sc, rate, i, n);
		acc += isinf(r) ? 0 : gap(w, r);
		out[i] = acc;
	}
	double scale = sc->ramp_up_strategy == RAMP_NONE && acc > 0 && !isinf(rate) ?
			       ((double)n / rate) / acc : 1;
	for (int64_t i = 0; i < n; i++)
		out[i] = t0 + out[i] * scale;
}

/* A conversation's priority: a class of workload.priorities by weight (its
 * own random stream, so the other draws do not move); 0 without. */
static int32_t draw_priority(struct workload *w)
{
	const struct scenario *sc = w->sc;
	if (sc->n_priorities == 0)
		return 0;
	double total = 0;
	for (int i = 0; i < sc->n_priorities; i++)
		total += sc->priorities[i].weight;
	double u = gsl_rng_uniform(w->rng[S_PRIORITY]) * total;
	for (int i = 0; i < sc->n_priorities - 1; i++) {
		if (u < sc->priorities[i].weight)
			return sc->priorities[i].priority;
		u -= sc->priorities[i].weight;
	}
	return sc->priorities[sc->n_priorities - 1].priority;
}

static size_t new_conversation(struct workload *w, int64_t user)
{
	xgrow(&w->convs, &w->cap_convs, w->n_convs + 1, sizeof *w->convs);
	struct conversation *c = &w->convs[w->n_convs];
	c->group = (int32_t)gsl_rng_uniform_int(w->rng[S_GROUP], (unsigned long)w->sc->prefix_groups);
	c->turns_done = 0;
	c->context = 0;
	c->user = user;
	c->priority = draw_priority(w);
	return w->n_convs++;
}

/* The next turn of conversation conv, to be sent at t_ns. */
static size_t make_turn(struct workload *w, struct reqtab *reqs, size_t conv, int64_t t_ns)
{
	const struct scenario *sc = w->sc;
	struct conversation *c = &w->convs[conv];
	size_t idx = reqtab_add(reqs);
	struct request *r = &reqs->v[idx];
	int32_t in = draw_len(w, &w->in, w->rng[S_INPUT], false);
	r->output_len = draw_len(w, &w->out, w->rng[S_OUTPUT], true);
	int32_t prefix = (int32_t)sc->random_prefix_len;
	r->prompt_len = (c->turns_done == 0 ? prefix : c->context) + in;
	r->shared_key = 0x5eed000000000000ULL + (uint64_t)c->group;
	r->shared_len = prefix;
	r->own_key = OWN_KEY_CONVERSATION + (uint64_t)conv;
	r->conversation = sc->turns > 1 || sc->users > 0 ? (int32_t)conv : -1;
	r->turn = c->turns_done;
	r->priority = c->priority;
	r->want_send_ns = t_ns;
	r->stage = 0;
	c->turns_done++;
	w->made++;
	return idx;
}

static int from_trace(struct workload *w, struct reqtab *reqs, struct err *e)
{
	const struct scenario *sc = w->sc;
	if (trace_load_result(&w->trace, sc->trace, sc->trace_format, (int)sc->trace_result, e))
		return -1;
	size_t n = w->trace.len;
	if (sc->num_prompts_given && (size_t)sc->num_prompts < n)
		n = (size_t)sc->num_prompts;
	double *times = NULL;
	if (isnan(w->trace.rows[0].time_s)) {
		/* A vLLM result without start_times: the scenario's rate. */
		times = xmalloc(n * sizeof *times);
		stage_times(w, (int64_t)n, sc->request_rate, 0, times);
	}
	for (size_t i = 0; i < n; i++) {
		const struct trace_row *row = &w->trace.rows[i];
		size_t idx = reqtab_add(reqs);
		struct request *r = &reqs->v[idx];
		r->prompt_len = row->input_len;
		r->output_len = row->output_len > 0 ? row->output_len : 1;
		r->own_key = 0xd0 * 0x100000000000000ULL + (uint64_t)i;
		r->n_block512 = row->n_hash_ids;
		r->block512 = row->hash_ids;
		r->priority = row->priority;
		double t = times ? times[i] : row->time_s * sc->trace_time_scale;
		int bad = times ? send_ns(w, t, "[workload] request_rate (for a trace without start_times)",
					  &r->want_send_ns, e) :
				  evq_ns_of_s(t, &r->want_send_ns);
		if (bad) {
			if (!times)
				err_set(e, "%s: a row %g s after the first, scaled by [workload] trace_time_scale = %g, would be sent at %g s, past the simulator's horizon of %g s; expected a shorter trace or a smaller scale",
					sc->trace, row->time_s, sc->trace_time_scale, t, EVQ_HORIZON_S);
			free(times);
			return -1;
		}
	}
	free(times);
	w->made = (int64_t)n;
	return 0;
}

/* Whether the open loop's sends can be made one at a time as the run
 * needs them with the same draws: one stage (send times never go back),
 * one turn each (no request is made when another finishes, so the
 * length streams are drawn in send order either way). */
static bool lazy_capable(const struct scenario *sc)
{
	return !sc->trace[0] && sc->users <= 0 && sc->turns == 1 && sc->n_stages == 0;
}

/* Prepares the lazy open loop: the arrival stream's gaps are drawn once
 * to learn their sum (stage_times' rescale), then the stream is rewound
 * so workload_next draws them again, one per send. Checks the last send
 * time (the latest) against the horizon; when it is past, falls back to
 * the eager path, which names the first bad one. Returns 1 for "use the
 * eager path", 0 for ready. */
static int lazy_prepare(struct workload *w)
{
	const struct scenario *sc = w->sc;
	double rate = sc->request_rate;
	double (*const gap)(struct workload *, double) = arrival_gaps[sc->arrival];
	gsl_rng *start = gsl_rng_clone(w->rng[S_ARRIVAL]);
	int64_t n = sc->num_prompts;
	double acc = 0;
	for (int64_t i = 0; i < n; i++) {
		double r = rate_of(sc, rate, i, n);
		acc += isinf(r) ? 0 : gap(w, r);
	}
	gsl_rng_memcpy(w->rng[S_ARRIVAL], start);
	gsl_rng_free(start);
	double scale = sc->ramp_up_strategy == RAMP_NONE && acc > 0 && !isinf(rate) ?
			       ((double)n / rate) / acc : 1;
	int64_t last_ns;
	if (n > 0 && evq_ns_of_s(0 + acc * scale, &last_ns))
		return 1;
	w->lazy_left = w->lazy_n = n;
	w->lazy_acc = 0;
	w->lazy_scale = scale;
	w->n_stages = 1;
	w->stage_starts[0] = 0;
	w->stage_starts[1] = 0;
	return 0;
}

static int open_loop(struct workload *w, struct reqtab *reqs, struct err *e)
{
	const struct scenario *sc = w->sc;
	struct stage one = { sc->request_rate, 0 };
	const struct stage *stages = sc->n_stages ? sc->stages : &one;
	int n_stages = sc->n_stages ? sc->n_stages : 1;
	int64_t turns = sc->turns;
	double t0 = 0;
	for (int s = 0; s < n_stages; s++) {
		int64_t n = sc->n_stages ? (int64_t)round(stages[s].rate * stages[s].duration_s) :
					   sc->num_prompts;
		int64_t convs = (n + turns - 1) / turns;
		double *times = xmalloc((size_t)(convs ? convs : 1) * sizeof *times);
		stage_times(w, convs, stages[s].rate, t0, times);
		const char *what = sc->n_stages ? "[workload] stages" : "[workload] request_rate, num_prompts";
		for (int64_t i = 0; i < convs; i++) {
			int64_t t_ns;
			if (send_ns(w, times[i], what, &t_ns, e)) {
				free(times);
				return -1;
			}
			size_t idx = make_turn(w, reqs, new_conversation(w, -1), t_ns);
			reqs->v[idx].stage = s;
		}
		free(times);
		if (send_ns(w, t0, "[workload] stages", &w->stage_starts[s], e))
			return -1;
		t0 += sc->n_stages ? stages[s].duration_s : 0;
	}
	w->n_stages = n_stages;
	return send_ns(w, t0, "[workload] stages", &w->stage_starts[n_stages], e);
}

static struct workload *create(const struct scenario *sc, struct reqtab *reqs, bool lazy,
			       struct err *e)
{
	if (sc->num_prompts > SCENARIO_MAX_PROMPTS) {
		err_set(e, "%s: [workload] num_prompts: %lld requests; expected at most %d (each costs memory for its record)",
			sc->path[0] ? sc->path : "built-in default", (long long)sc->num_prompts, SCENARIO_MAX_PROMPTS);
		return NULL;
	}
	struct workload *w = xcalloc(1, sizeof *w);
	w->sc = sc;
	for (int i = 0; i < N_STREAMS; i++)
		w->rng[i] = rng_stream(stream_names[i], sc->seed);
	law_init(&w->in, &sc->input);
	law_init(&w->out, &sc->output);
	if ((sc->input.dist == LEN_EMPIRICAL && load_lengths(&w->in.emp, sc->input.file, "input_file", e)) ||
	    (sc->output.dist == LEN_EMPIRICAL && load_lengths(&w->out.emp, sc->output.file, "output_file", e))) {
		workload_destroy(w);
		return NULL;
	}
	if (sc->trace[0]) {
		if (from_trace(w, reqs, e)) {
			workload_destroy(w);
			return NULL;
		}
		w->n_stages = 1;
	} else if (sc->users > 0) {
		for (int64_t u = 0; u < sc->users && w->made < sc->num_prompts; u++)
			make_turn(w, reqs, new_conversation(w, u), 0);
		w->n_stages = 1;
	} else if ((!lazy || !lazy_capable(sc) || lazy_prepare(w)) && open_loop(w, reqs, e)) {
		workload_destroy(w);
		return NULL;
	}
	return w;
}

struct workload *workload_create(const struct scenario *sc, struct reqtab *reqs, struct err *e)
{
	return create(sc, reqs, false, e);
}

struct workload *workload_open(const struct scenario *sc, struct reqtab *reqs, struct err *e)
{
	return create(sc, reqs, true, e);
}

int64_t workload_lazy_left(const struct workload *w)
{
	return w->lazy_left;
}

/* One step of stage_times and of open_loop's loop, for request i of the
 * lazy open loop: the same draws, in the same order, as the eager path.
 * Its conversation (the i-th, as the eager path numbers them) is dropped
 * once the request is made: a single-turn open-loop request needs none
 * after, so one slot serves them all. */
int64_t workload_next(struct workload *w, struct reqtab *reqs)
{
	if (w->lazy_left <= 0)
		return -1;
	const struct scenario *sc = w->sc;
	int64_t i = w->lazy_n - w->lazy_left--;
	double r = rate_of(sc, sc->request_rate, i, w->lazy_n);
	w->lazy_acc += isinf(r) ? 0 : arrival_gaps[sc->arrival](w, r);
	int64_t t_ns;
	int bad = evq_ns_of_s(0 + w->lazy_acc * w->lazy_scale, &t_ns);
	assert(!bad);   /* lazy_prepare checked the latest */
	(void)bad;
	size_t idx = make_turn(w, reqs, new_conversation(w, -1), t_ns);
	w->n_convs--;
	reqs->v[idx].own_key = OWN_KEY_CONVERSATION + (uint64_t)i;
	reqs->v[idx].stage = 0;
	return (int64_t)idx;
}

int64_t workload_on_done(struct workload *w, struct reqtab *reqs, size_t idx, int64_t now)
{
	const struct scenario *sc = w->sc;
	const struct request *r = &reqs->v[idx];
	if (r->conversation < 0 || w->made >= sc->num_prompts)
		return -1;
	size_t conv = (size_t)r->conversation;
	struct conversation *c = &w->convs[conv];
	int32_t stage = r->stage;
	c->context = r->prompt_len + r->output_len;
	double think = sc->think_time_s > 0 ? gsl_ran_exponential(w->rng[S_THINK], sc->think_time_s) : 0;
	double t = (double)now / 1e9 + think;
	int64_t t_ns;
	if (evq_ns_of_s(t, &t_ns))
		return -1;   /* the next turn would come after the horizon: no more turns */
	if (c->turns_done >= sc->turns) {
		if (c->user < 0)
			return -1;                /* open loop: the conversation is over */
		conv = new_conversation(w, w->convs[conv].user);
	}
	size_t next = make_turn(w, reqs, conv, t_ns);
	reqs->v[next].stage = stage;
	return (int64_t)next;
}

const int64_t *workload_stage_starts(const struct workload *w, int *n_stages)
{
	*n_stages = w->n_stages;
	return w->stage_starts;
}

void workload_destroy(struct workload *w)
{
	if (!w)
		return;
	for (int i = 0; i < N_STREAMS; i++)
		gsl_rng_free(w->rng[i]);
	free(w->in.emp.v);
	free(w->out.emp.v);
	trace_free(&w->trace);
	free(w->convs);
	free(w);
}
