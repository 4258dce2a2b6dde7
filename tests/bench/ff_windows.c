/*
 * ff_windows: how long fast-forward's lazy runs are on a workload and what
 * ends them (issue 14, engine/vllmff.c): runs a scenario file with the
 * given --set style overrides and prints engine_stats' counts of runs by
 * the limit that set their length, their planned passes, the runs by
 * length (powers of two), and the syncs (passes that visit every running
 * request again) with the runs they cut short. A figure, not a test:
 * tests/bench/ff_windows.sh runs it on the benchmark workload.
 *
 * Usage: bench_ff_windows SCENARIO.ini [KEY=VALUE ...]
 */
#include <stdio.h>

#include "inidoc.h"
#include "run.h"
#include "scenario.h"

static const char *const cut_name[FF_CUTS] = {
	[FF_CUT_RING] = "the ring's reach (FF_RING - 8 passes)",
	[FF_CUT_LAST] = "its last two tokens (finish, async skip)",
	[FF_CUT_HASH] = "a block to hash (a prefix others may hit)",
	[FF_CUT_WINDOW] = "a sliding window",
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SCENARIO.ini [KEY=VALUE ...]\n", argv[0]);
		return 2;
	}
	struct inidoc ov = { 0 };
	struct err e;
	for (int i = 2; i < argc; i++)
		if (inidoc_add_override(&ov, argv[i], &e)) {
			fprintf(stderr, "%s\n", e.msg);
			return 2;
		}
	struct scenario sc;
	struct run_result res;
	struct run_opts o = { 0 };
	if (scenario_load(&sc, argv[1], &ov, &e) || run_simulate_opts(&sc, &res, &o, &e)) {
		fprintf(stderr, "%s\n", e.msg);
		return 2;
	}
	const struct engine_stats *st = &res.engine;
	int64_t runs = 0, passes = 0;
	for (int k = 0; k < FF_CUTS; k++) {
		runs += st->ff_runs[k];
		passes += st->ff_run_passes[k];
	}
	printf("%lld lazy runs, %lld passes planned (%.2f a run), %lld decode tokens fast-forwarded, %lld steps\n",
	       (long long)runs, (long long)passes, runs ? (double)passes / (double)runs : 0.0,
	       (long long)st->ff_tokens, (long long)st->steps);
	printf("what set a run's length:\n");
	for (int k = 0; k < FF_CUTS; k++)
		printf("  %-44s %10lld runs (%5.1f%%), %6.2f passes a run\n", cut_name[k],
		       (long long)st->ff_runs[k], runs ? 100.0 * (double)st->ff_runs[k] / (double)runs : 0.0,
		       st->ff_runs[k] ? (double)st->ff_run_passes[k] / (double)st->ff_runs[k] : 0.0);
	printf("runs by planned passes:\n");
	for (int k = 0; k < FF_LEN_BUCKETS; k++)
		printf("  %3d-%-3d %10lld (%5.1f%%)\n", 1 << k, (2 << k) - 1, (long long)st->ff_len_hist[k],
		       runs ? 100.0 * (double)st->ff_len_hist[k] / (double)runs : 0.0);
	printf("syncs (every running request visited again): %lld, cutting %lld runs short (%.2f%% of runs), "
	       "%lld planned passes lost\n",
	       (long long)st->ff_syncs, (long long)st->ff_sync_cut,
	       runs ? 100.0 * (double)st->ff_sync_cut / (double)runs : 0.0, (long long)st->ff_sync_lost);
	run_result_free(&res);
	inidoc_free(&ov);
	return 0;
}
