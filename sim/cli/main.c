/*
 * servesim: a discrete-event simulator of LLM serving. This file is the
 * verb table; each verb lives in its own cmd_<verb>.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct verb {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} verbs[] = {
	{ "calibrate", cmd_calibrate, "fit a hardware profile to GPU measurements (CUDA probe) or real runs" },
	{ "ceiling", cmd_ceiling, "single-stream decode and prefill ceilings per device (SEED C8)" },
	{ "explain", cmd_explain, "why a step takes what it takes; where a run's TTFT and ITL went" },
	{ "list", cmd_list, "the models, hardware profiles and scenarios servesim knows" },
	{ "model", cmd_model, "what a model config implies: parameters, weight bytes, FLOPs, KV bytes" },
	{ "run", cmd_run, "simulate serving a workload and report as vllm bench serve does" },
	{ "sweep", cmd_sweep, "run a scenario over a grid of keys, with replications and 95% CIs" },
	{ "plan", cmd_plan, "highest rate within an SLO per configuration; replicas, GPUs and cost" },
	{ "compare", cmd_compare, "one workload on several GPUs side by side, with cost" },
	{ "advise", cmd_advise, "what limits a run and which remedies help, each simulated" },
	{ "plot", cmd_plot, "gnuplot pictures of a sweep/plan/compare result or a run's --out folder" },
	{ "merge", cmd_merge, "join the --shard K/N outputs of sweep, plan or compare" },
	{ "report", cmd_report, "one self-contained HTML page of a run, sweep, plan or compare, to share" },
	{ "keys", cmd_keys, "every scenario and hardware-profile key: type, accepted values, default" },
	{ "validate", cmd_validate, "replay a real run's result (vLLM, SGLang, Ollama, llama-bench, …); measured vs predicted" },
	{ "vllm-flags", cmd_vllm_flags, "the vllm serve / vllm bench serve flags servesim takes, and what each becomes" },
};

static void usage(FILE *f)   /* --help: on stdout, exit 0 */
{
	fprintf(f, "usage: servesim VERB [options]   (servesim VERB --help for each)\n\nverbs:\n");
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
		fprintf(f, "  %-9s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "\nservesim --version prints the version.\n");
	fprintf(f, "Data folders: $SERVESIM_DATA_DIR, else the installed share/servesim, else the source tree.\n");
}

/* Every verb's output reaches stdout whole or the command says it did not:
 * a write error (a full disk, a closed pipe) is one line on stderr and exit
 * status 1, whatever the verb returned (bad input, 2, stays 2). */
static int stdout_checked(const char *verb, int rc)
{
	errno = 0;
	bool failed = fflush(stdout) != 0;
	int saved = errno;
	failed |= ferror(stdout) != 0;
	if (!failed)
		return rc;
	fprintf(stderr, "servesim %s: cannot write the output to stdout: %s\n", verb,
		saved ? strerror(saved) : "a write failed");
	return rc == EXIT_BAD_INPUT ? rc : EXIT_FAIL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		/* One line, as argparse's vllm and every misuse here: the usage
		 * and where the rest is, the verbs named (the list is --help's). */
		fprintf(stderr, "usage: servesim VERB [options]; expected a VERB: ");
		for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", verbs[i].name);
		fprintf(stderr, " (servesim --help)\n");
		return EXIT_BAD_INPUT;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("servesim %s\n", SERVESIM_VERSION);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return stdout_checked("help", EXIT_OK);
	}
	opterr = 0;   /* a refused option is one line of the verb's (cli_bad_option) */
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return stdout_checked(verbs[i].name, verbs[i].run(argc - 1, argv + 1));
	char verb[256];
	err_escape(verb, sizeof verb, argv[1]);
	/* One line, as every bad input: the verbs named, not the usage. */
	fprintf(stderr, "servesim: unknown verb '%s'; expected ", verb);
	for (size_t i = 0; i < sizeof verbs / sizeof *verbs; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", verbs[i].name);
	fprintf(stderr, " (servesim --help)\n");
	return EXIT_BAD_INPUT;
}
