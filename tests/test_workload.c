/*
 * workload: requests as `vllm bench serve` sends them. Send times are
 * nondecreasing and rescaled so the last lands at num_prompts / rate (as
 * serve.py's get_request); constant arrivals are evenly spaced; rate inf
 * sends everything at t=0; vLLM's random lengths are uniform integers in
 * [floor(L(1-r)), ceil(L(1+r))]; shared prefixes and prefix groups set the
 * prefix-cache keys; a seed fixes everything and each named RNG stream is
 * independent of the others (DESIGN "Time and determinism"); closed-loop
 * users and multi-turn conversations make the next request on completion.
 */
#include "testutil.h"

#include "workload.h"

/* The default scenario made into an open-loop run of n prompts at rate. */
static void base(struct scenario *sc, int64_t n, double rate)
{
	scenario_default(sc);
	sc->num_prompts = n;
	sc->request_rate = rate;
}

static struct workload *make(const struct scenario *sc, struct reqtab *reqs)
{
	struct err e = { { 0 } };
	*reqs = (struct reqtab){ 0 };
	struct workload *w = workload_create(sc, reqs, &e);
	if (!w) {
		print_error("workload_create: %s\n", e.msg);
		fail();
	}
	return w;
}

/* Makes the open-loop requests of sc into *reqs (the workload is done). */
static void requests(const struct scenario *sc, struct reqtab *reqs)
{
	workload_destroy(make(sc, reqs));
}

static void poisson_rescaled_to_n_over_rate(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 1000, 10);
	requests(&sc, &r);
	assert_int_equal(r.len, 1000);
	assert_true(r.v[0].want_send_ns > 0);   /* the first gap is drawn too */
	for (size_t i = 1; i < r.len; i++)
		assert_true(r.v[i].want_send_ns >= r.v[i - 1].want_send_ns);
	/* vLLM rescales the cumulated gaps so the last is exactly n/rate =
	 * 100 s; 1e-6 s allows the ns rounding and a few ulps of the scale. */
	assert_double_near((double)r.v[999].want_send_ns / 1e9, 100.0, 1e-6);
	/* Open loop, one turn: no conversation. */
	assert_int_equal(r.v[0].conversation, -1);
	reqtab_free(&r);
}

static void constant_equal_gaps(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 100, 10);
	sc.arrival = ARRIVAL_CONSTANT;
	requests(&sc, &r);
	assert_int_equal(r.len, 100);
	/* Gaps of 1/rate = 100 ms; each time is rounded to the ns, so a gap
	 * can be off by 2 ns (plus the rescale's ulps, far below that). */
	assert_double_near((double)r.v[0].want_send_ns, 1e8, 2);
	for (size_t i = 1; i < r.len; i++)
		assert_double_near((double)(r.v[i].want_send_ns - r.v[i - 1].want_send_ns), 1e8, 2);
	reqtab_free(&r);
}

/* vLLM's --ramp-up-strategy: request i goes out at the rate of i/(n-1)
 * along the ramp, and the times are not rescaled. Constant gaps make it
 * exact: send_i = Σ_{j<=i} 1/rate_j (2 ns per step for the rounding). */
static void ramp_up_linear_and_exponential(void **state)
{
	(void)state;
	for (int kind = RAMP_LINEAR; kind <= RAMP_EXPONENTIAL; kind++) {
		struct scenario sc;
		struct reqtab r;
		base(&sc, 50, 99);                 /* the rate is ignored with a ramp */
		sc.arrival = ARRIVAL_CONSTANT;
		sc.ramp_up_strategy = kind;
		sc.ramp_up_start_rps = 1;
		sc.ramp_up_end_rps = 16;
		requests(&sc, &r);
		double t = 0;
		for (size_t i = 0; i < r.len; i++) {
			double p = (double)i / 49;
			t += 1 / (kind == RAMP_LINEAR ? 1 + 15 * p : pow(16, p));
			assert_double_near((double)r.v[i].want_send_ns / 1e9, t, 2e-9 * (double)(i + 1));
		}
		reqtab_free(&r);
	}
}

static void rate_inf_all_at_zero(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 300, INFINITY);
	requests(&sc, &r);
	assert_int_equal(r.len, 300);
	for (size_t i = 0; i < r.len; i++)
		assert_int_equal(r.v[i].want_send_ns, 0);
	reqtab_free(&r);
}

static void staged_rates(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 210, 1);
	sc.n_stages = 2;
	sc.stages[0] = (struct stage){ 2, 30 };
	sc.stages[1] = (struct stage){ 5, 30 };
	struct workload *w = make(&sc, &r);
	assert_int_equal(r.len, 210);
	int n;
	const int64_t *starts = workload_stage_starts(w, &n);
	assert_int_equal(n, 2);
	assert_int_equal(starts[0], 0);
	assert_int_equal(starts[1], 30000000000LL);
	assert_int_equal(starts[2], 60000000000LL);
	for (size_t i = 0; i < r.len; i++) {
		int s = i < 60 ? 0 : 1;
		assert_int_equal(r.v[i].stage, s);
		assert_true(r.v[i].want_send_ns > starts[s] && r.v[i].want_send_ns <= starts[s + 1]);
	}
	/* Each stage is rescaled to end at its own end: 1 µs for rounding. */
	assert_double_near((double)r.v[59].want_send_ns, 30e9, 1e3);
	assert_double_near((double)r.v[209].want_send_ns, 60e9, 1e3);
	workload_destroy(w);
	reqtab_free(&r);
}

static void random_lengths_cover_range(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 2000, INFINITY);
	sc.input.mean = 100;
	sc.output.mean = 40;
	sc.random_range_ratio = 0.5;
	requests(&sc, &r);
	int32_t in_min = INT32_MAX, in_max = 0, out_min = INT32_MAX, out_max = 0;
	for (size_t i = 0; i < r.len; i++) {
		in_min = r.v[i].prompt_len < in_min ? r.v[i].prompt_len : in_min;
		in_max = r.v[i].prompt_len > in_max ? r.v[i].prompt_len : in_max;
		out_min = r.v[i].output_len < out_min ? r.v[i].output_len : out_min;
		out_max = r.v[i].output_len > out_max ? r.v[i].output_len : out_max;
	}
	/* [floor(100·0.5), ceil(100·1.5)], both ends reached: 2000 draws of 101
	 * values miss an end with probability 2·(100/101)^2000 ≈ 5e-9. */
	assert_int_equal(in_min, 50);
	assert_int_equal(in_max, 150);
	assert_int_equal(out_min, 20);
	assert_int_equal(out_max, 60);
	reqtab_free(&r);
}

/* An output must be at least one token, whatever the law. */
static void output_at_least_one(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 1000, INFINITY);
	sc.output.mean = 1;
	sc.random_range_ratio = 0.9;   /* floor(0.1) = 0 would be allowed */
	requests(&sc, &r);
	for (size_t i = 0; i < r.len; i++)
		assert_true(r.v[i].output_len >= 1 && r.v[i].output_len <= 2);
	reqtab_free(&r);

	sc.output.dist = LEN_NORMAL;   /* mean 5, σ 50: most draws are < 1 */
	sc.output.mean = 5;
	sc.output.stddev = 50;
	requests(&sc, &r);
	int ones = 0;
	for (size_t i = 0; i < r.len; i++) {
		assert_true(r.v[i].output_len >= 1);
		ones += r.v[i].output_len == 1;
	}
	assert_true(ones > 100);   /* the clamp was exercised (P(draw <= 1) ≈ 0.47) */
	reqtab_free(&r);
}

static void random_prefix_len_shared(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 200, 4);
	sc.input.mean = 100;
	sc.random_range_ratio = 0;   /* input exactly 100 */
	sc.random_prefix_len = 50;
	requests(&sc, &r);
	for (size_t i = 0; i < r.len; i++) {
		assert_int_equal(r.v[i].prompt_len, 150);
		assert_int_equal(r.v[i].shared_len, 50);
		assert_true(r.v[i].shared_key == r.v[0].shared_key);   /* one group */
	}
	reqtab_free(&r);
}

static size_t distinct_shared_keys(const struct reqtab *r)
{
	uint64_t seen[64];
	size_t n = 0;
	for (size_t i = 0; i < r->len; i++) {
		size_t j = 0;
		while (j < n && seen[j] != r->v[i].shared_key)
			j++;
		if (j == n) {
			assert_true(n < 64);
			seen[n++] = r->v[i].shared_key;
		}
	}
	return n;
}

static void prefix_groups_three(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 1000, 4);
	sc.random_prefix_len = 200;
	sc.prefix_groups = 3;
	requests(&sc, &r);
	assert_int_equal(distinct_shared_keys(&r), 3);
	reqtab_free(&r);
}

static bool same_requests(const struct reqtab *a, const struct reqtab *b)
{
	if (a->len != b->len)
		return false;
	for (size_t i = 0; i < a->len; i++) {
		const struct request *x = &a->v[i], *y = &b->v[i];
		if (x->want_send_ns != y->want_send_ns || x->prompt_len != y->prompt_len ||
		    x->output_len != y->output_len || x->shared_key != y->shared_key ||
		    x->own_key != y->own_key || x->shared_len != y->shared_len)
			return false;
	}
	return true;
}

static void seed_determines_everything(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab a, b, c;
	base(&sc, 500, 8);
	sc.random_range_ratio = 0.5;
	sc.random_prefix_len = 10;
	sc.prefix_groups = 5;
	sc.seed = 7;
	requests(&sc, &a);
	requests(&sc, &b);
	assert_true(same_requests(&a, &b));
	sc.seed = 8;
	requests(&sc, &c);
	assert_false(same_requests(&a, &c));
	/* Every stream moved, not just one. */
	bool t = false, in = false, out = false, grp = false;
	for (size_t i = 0; i < a.len; i++) {
		t |= a.v[i].want_send_ns != c.v[i].want_send_ns;
		in |= a.v[i].prompt_len != c.v[i].prompt_len;
		out |= a.v[i].output_len != c.v[i].output_len;
		grp |= a.v[i].shared_key != c.v[i].shared_key;
	}
	assert_true(t && in && out && grp);
	reqtab_free(&a);
	reqtab_free(&b);
	reqtab_free(&c);
}

/* DESIGN: each draw has its own named stream, so changing one
 * distribution does not move the others. */
static void streams_are_independent(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab a, b;
	base(&sc, 500, 8);
	sc.random_range_ratio = 0.5;
	sc.prefix_groups = 4;
	requests(&sc, &a);

	/* Another output law: arrivals, inputs and groups stay. */
	sc.output.dist = LEN_NORMAL;
	sc.output.stddev = 30;
	requests(&sc, &b);
	bool out_changed = false;
	for (size_t i = 0; i < a.len; i++) {
		assert_int_equal(a.v[i].want_send_ns, b.v[i].want_send_ns);
		assert_int_equal(a.v[i].prompt_len, b.v[i].prompt_len);
		assert_true(a.v[i].shared_key == b.v[i].shared_key);
		out_changed |= a.v[i].output_len != b.v[i].output_len;
	}
	assert_true(out_changed);
	reqtab_free(&b);

	/* Another output mean alone: the same. */
	sc.output.dist = LEN_UNIFORM;
	sc.output.mean = 700;
	requests(&sc, &b);
	for (size_t i = 0; i < a.len; i++) {
		assert_int_equal(a.v[i].want_send_ns, b.v[i].want_send_ns);
		assert_int_equal(a.v[i].prompt_len, b.v[i].prompt_len);
	}
	reqtab_free(&b);

	/* Another input law: arrivals and outputs stay. */
	sc.output.mean = 128;
	sc.input.dist = LEN_LOGNORMAL;
	sc.input.stddev = 300;
	requests(&sc, &b);
	for (size_t i = 0; i < a.len; i++) {
		assert_int_equal(a.v[i].want_send_ns, b.v[i].want_send_ns);
		assert_int_equal(a.v[i].output_len, b.v[i].output_len);
		assert_true(a.v[i].shared_key == b.v[i].shared_key);
	}
	reqtab_free(&b);
	reqtab_free(&a);
}

/* users = 4: four requests at t=0; each completion sends the user's next
 * request at once (no think time) until num_prompts requests exist. */
static void closed_loop_users(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 10, 4);
	sc.users = 4;
	struct workload *w = make(&sc, &r);
	assert_int_equal(r.len, 4);
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(r.v[i].want_send_ns, 0);
	size_t done = 0;
	int64_t now = 0;
	while (done < r.len) {
		now += 1000000000;
		size_t before = r.len;
		int64_t next = workload_on_done(w, &r, done, now);
		if (before < 10) {
			assert_int_equal(next, (int64_t)before);
			assert_int_equal(r.len, before + 1);
			assert_int_equal(r.v[next].want_send_ns, now);
			assert_true(r.v[next].output_len >= 1 && r.v[next].prompt_len >= 1);
		} else {
			assert_int_equal(next, -1);
			assert_int_equal(r.len, 10);
		}
		done++;
	}
	assert_int_equal(r.len, 10);
	workload_destroy(w);
	reqtab_free(&r);

	/* With think time the next send is at now + an exponential draw. */
	sc.think_time_s = 2;
	w = make(&sc, &r);
	int64_t next = workload_on_done(w, &r, 0, 5000000000LL);
	assert_true(next >= 0);
	assert_true(r.v[next].want_send_ns >= 5000000000LL);
	workload_destroy(w);
	reqtab_free(&r);
}

/* turns = 3: the second turn's prompt is the first prompt, its output and
 * a new input; the conversation and its content key carry over. */
static void multi_turn_conversation(void **state)
{
	(void)state;
	struct scenario sc;
	struct reqtab r;
	base(&sc, 9, INFINITY);
	sc.turns = 3;
	sc.input.mean = 100;
	sc.output.mean = 20;
	sc.random_range_ratio = 0;
	sc.random_prefix_len = 50;
	struct workload *w = make(&sc, &r);
	assert_int_equal(r.len, 3);   /* 9 prompts / 3 turns: 3 conversations */
	assert_int_equal(r.v[0].prompt_len, 150);
	assert_int_equal(r.v[0].turn, 0);
	assert_true(r.v[0].conversation >= 0);
	assert_true(r.v[0].own_key != r.v[1].own_key);

	int64_t t1 = workload_on_done(w, &r, 0, 2000000000LL);
	assert_true(t1 >= 0);
	const struct request *a = &r.v[0], *b = &r.v[t1];
	assert_int_equal(b->prompt_len, 150 + 20 + 100);
	assert_int_equal(b->turn, 1);
	assert_int_equal(b->conversation, a->conversation);
	assert_true(b->own_key == a->own_key);
	assert_true(b->shared_key == a->shared_key);
	assert_int_equal(b->shared_len, 50);
	assert_int_equal(b->want_send_ns, 2000000000LL);

	int64_t t2 = workload_on_done(w, &r, (size_t)t1, 3000000000LL);
	assert_true(t2 >= 0);
	assert_int_equal(r.v[t2].prompt_len, 270 + 20 + 100);
	assert_int_equal(r.v[t2].turn, 2);
	assert_true(r.v[t2].own_key == r.v[0].own_key);
	/* Three turns done: the conversation ends. */
	assert_int_equal(workload_on_done(w, &r, (size_t)t2, 4000000000LL), -1);
	workload_destroy(w);
	reqtab_free(&r);

	/* With random lengths the new part is a fresh draw in its range. */
	sc.random_range_ratio = 0.5;
	sc.random_prefix_len = 0;
	w = make(&sc, &r);
	for (size_t c = 0; c < 3; c++) {
		int64_t n = workload_on_done(w, &r, c, 1);
		assert_true(n >= 0);
		int32_t fresh = r.v[n].prompt_len - r.v[c].prompt_len - r.v[c].output_len;
		assert_true(fresh >= 50 && fresh <= 150);
		assert_true(r.v[n].own_key == r.v[c].own_key);
	}
	workload_destroy(w);
	reqtab_free(&r);
}

/* workload_open's lazy open loop makes the requests workload_create
 * makes, field for field and bit for bit (the same draws of the same
 * streams in the same order), for each arrival process and a ramp-up;
 * workloads it cannot make lazily it makes up front. */
static void lazy_open_loop_equals_eager(void **state)
{
	(void)state;
	for (int v = 0; v < 5; v++) {
		struct scenario sc;
		base(&sc, 500, 7);
		sc.input.dist = LEN_LOGNORMAL;
		sc.input.stddev = 100;
		sc.random_prefix_len = 20;
		sc.prefix_groups = 3;
		if (v == 1) {
			sc.arrival = ARRIVAL_GAMMA;
			sc.burstiness = 0.5;
		} else if (v == 2) {
			sc.arrival = ARRIVAL_CONSTANT;
		} else if (v == 3) {
			sc.ramp_up_strategy = RAMP_LINEAR;
			sc.ramp_up_start_rps = 1;
			sc.ramp_up_end_rps = 20;
		} else if (v == 4) {
			sc.turns = 2;   /* not lazy: all first turns up front */
		}
		struct reqtab eager, lazy = { 0 };
		requests(&sc, &eager);
		struct err e = { { 0 } };
		struct workload *w = workload_open(&sc, &lazy, &e);
		assert_non_null(w);
		assert_int_equal(workload_lazy_left(w), v == 4 ? 0 : 500);
		assert_int_equal(lazy.len, v == 4 ? eager.len : 0);
		for (int64_t i; (i = workload_next(w, &lazy)) >= 0;)
			assert_int_equal(i, (int64_t)lazy.len - 1);
		assert_int_equal(workload_lazy_left(w), 0);
		assert_int_equal(lazy.len, eager.len);
		for (size_t i = 0; i < eager.len; i++)
			assert_memory_equal(&lazy.v[i], &eager.v[i], sizeof eager.v[i]);
		int n;
		const int64_t *starts = workload_stage_starts(w, &n);
		assert_int_equal(n, 1);
		assert_int_equal(starts[0], 0);
		workload_destroy(w);
		reqtab_free(&eager);
		reqtab_free(&lazy);
	}
}

/* A lazy open loop whose last send is past the horizon is refused up
 * front with the eager path's message. */
static void lazy_open_loop_horizon_error(void **state)
{
	(void)state;
	struct scenario sc;
	base(&sc, 10, 1e-8);
	struct reqtab r = { 0 };
	struct err e = { { 0 } };
	assert_null(workload_open(&sc, &r, &e));
	assert_non_null(strstr(e.msg, "past the simulator's horizon"));
	reqtab_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(poisson_rescaled_to_n_over_rate),
		cmocka_unit_test(constant_equal_gaps),
		cmocka_unit_test(ramp_up_linear_and_exponential),
		cmocka_unit_test(rate_inf_all_at_zero),
		cmocka_unit_test(staged_rates),
		cmocka_unit_test(random_lengths_cover_range),
		cmocka_unit_test(output_at_least_one),
		cmocka_unit_test(random_prefix_len_shared),
		cmocka_unit_test(prefix_groups_three),
		cmocka_unit_test(seed_determines_everything),
		cmocka_unit_test(streams_are_independent),
		cmocka_unit_test(closed_loop_users),
		cmocka_unit_test(multi_turn_conversation),
		cmocka_unit_test(lazy_open_loop_equals_eager),
		cmocka_unit_test(lazy_open_loop_horizon_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
