/*
 * servesim validate: replay real `vllm bench serve` results through the
 * simulator and print measured against predicted, with the error of each
 * (validate.h). Exit 0 when every file was replayed; 2 for bad input.
 */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "validate.h"
#include "validateany.h"

static void help(void)
{
	printf("usage: servesim validate FILE… [--model M] [--hardware H] [--weights W]\n"
	       "                         [--set SECTION.KEY=VALUE]… [--format text|json]\n\n"
	       "Replays each vllm bench serve result (--save-result JSON, any version) through\n"
	       "the simulator: its input_lens, output_lens and start_times, or its request_rate\n"
	       "and max_concurrency when start_times are absent, or its mean lengths when the\n"
	       "per-request arrays are absent. Prints measured against predicted mean, median\n"
	       "and P99 of TTFT, TPOT, ITL and E2EL and the throughputs, with the error of each:\n"
	       "100 x (predicted - measured) / measured.\n\n"
	       "Every other result format calibrate runs reads is replayed too (SGLang\n"
	       "bench_serving lines, --append-result files, Ollama JSON or `ollama run --verbose`\n"
	       "text, llama-bench Markdown/CSV/JSON/SQL, vLLM or SGLang /metrics): mean TTFT,\n"
	       "ITL and E2E per observation; --model names the model those files do not. A\n"
	       "vllm serve start-up log is checked against the simulated KV pool (weights,\n"
	       "activation peak, KV cache GiB and tokens).\n\n"
	       "  --model M      default: the result's model_id (servesim list shows the known ones)\n"
	       "  --hardware H   default: %s (the result does not name its GPU)\n"
	       "  --set S.K=V    any scenario override, e.g. --set engine.max_num_batched_tokens=2048\n"
	       "  --format F     text (default) or json (an array, one object per file)\n",
	       VALIDATE_DEFAULT_HARDWARE);
}

static json_t *num_or_null(double v, int digits)
{
	return isfinite(v) ? outfmt_real(v, digits) : json_null();
}

static json_t *as_json(const char *path, const struct validate_result *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "file", json_string(path));
	json_object_set_new(o, "format", json_string(r->meas.version));
	json_object_set_new(o, "model", json_string(r->model));
	json_object_set_new(o, "hardware", json_string(r->hardware));
	json_object_set_new(o, "replay", json_string(r->replay));
	json_object_set_new(o, "simulated_requests", json_integer(r->n_requests));
	json_t *rows = json_array();
	for (int i = 0; i < VALIDATE_N_ROWS; i++) {
		const struct validate_row *row = &r->rows[i];
		json_t *x = json_object();
		json_object_set_new(x, "metric", json_string(row->key));
		json_object_set_new(x, "measured", num_or_null(row->measured, 4));
		json_object_set_new(x, "predicted", num_or_null(row->predicted, 4));
		json_object_set_new(x, "error_pct", num_or_null(row->error_pct, 2));
		json_array_append_new(rows, x);
	}
	json_object_set_new(o, "metrics", rows);
	json_t *notes = json_array();
	for (int i = 0; i < r->n_notes; i++)
		json_array_append_new(notes, json_string(r->notes[i]));
	json_object_set_new(o, "notes", notes);
	return o;
}

static void as_text(FILE *f, const char *path, const struct validate_result *r)
{
	fprintf(f, "%s\n", "================= servesim validate =================");
	fprintf(f, "%-12s %s (%s)\n", "File:", path, r->meas.version);
	fprintf(f, "%-12s %s\n", "Model:", r->model);
	fprintf(f, "%-12s %s\n", "Hardware:", r->hardware);
	fprintf(f, "%-12s %s; %lld requests simulated\n", "Replay:", r->replay, r->n_requests);
	fprintf(f, "%-34s %12s %12s %9s\n", "", "measured", "predicted", "error");
	for (int i = 0; i < VALIDATE_N_ROWS; i++) {
		const struct validate_row *row = &r->rows[i];
		if (i == 3 || i == 6 || i == 9 || i == 12)
			fprintf(f, "\n");
		fprintf(f, "%-34s", row->label);
		if (isfinite(row->measured))
			fprintf(f, " %12.2f", row->measured);
		else
			fprintf(f, " %12s", "-");
		if (isfinite(row->predicted))
			fprintf(f, " %12.2f", row->predicted);
		else
			fprintf(f, " %12s", "-");
		if (isfinite(row->error_pct))
			fprintf(f, " %+8.1f%%\n", row->error_pct);
		else
			fprintf(f, " %9s\n", "-");
	}
	for (int i = 0; i < r->n_notes; i++)
		fprintf(f, "note: %s\n", r->notes[i]);
	fprintf(f, "%s\n", "=====================================================");
}

int cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "model", required_argument, NULL, 'm' },
		{ "set", required_argument, NULL, 'S' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	struct validate_opts vo = { 0 };
	struct inidoc ov = { 0 };
	enum out_format fmt = FMT_TEXT;
	struct err e;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int bad = 0;
		switch (c) {
		case 'f': bad = cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_JSON, &fmt, &e); break;
		case 'H': vo.hardware = optarg; break;
		case 'h': help(); inidoc_free(&ov); return EXIT_OK;
		case 'm': vo.model = optarg; break;
		case 'S': bad = inidoc_add_override(&ov, optarg, &e); break;
		case 'w': vo.weights = optarg; break;
		default: inidoc_free(&ov); return cli_bad_option("validate", argv);
		}
		if (bad) {
			inidoc_free(&ov);
			return cli_fail("validate", &e);
		}
	}
	if (optind >= argc) {
		inidoc_free(&ov);
		return cli_misuse("validate", "expected at least one result file (vllm bench serve JSON, SGLang, Ollama, llama-bench, /metrics, a vllm serve log)");
	}
	vo.overrides = &ov;
	json_t *all = fmt == FMT_JSON ? json_array() : NULL;
	int rc = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		if (!validateany_is_vllm_result(argv[i])) {
			/* SGLang, Ollama, llama-bench, /metrics, --append-result, a
			 * start-up log: validateany.h. */
			json_t *r = validateany_run(argv[i], &vo, &e);
			if (!r) {
				rc = cli_fail("validate", &e);
				break;
			}
			if (all)
				json_array_append_new(all, r);
			else
				validateany_print(stdout, r), json_decref(r);
			continue;
		}
		struct validate_result r;
		if (validate_run(&r, argv[i], &vo, &e)) {
			rc = cli_fail("validate", &e);
			break;
		}
		if (all)
			json_array_append_new(all, as_json(argv[i], &r));
		else
			as_text(stdout, argv[i], &r);
	}
	inidoc_free(&ov);
	if (all) {
		if (rc == EXIT_OK)
			return cli_print_json(all);
		json_decref(all);
	}
	if (fflush(stdout))
		rc = EXIT_FAIL;
	return rc;
}
