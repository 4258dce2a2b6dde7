/*
 * servesim ceiling: the arithmetic of SEED C8, C3/C7 and C16/C17 per device.
 *
 * Decode ceiling = bandwidth ÷ weight bytes (one full read of the weights
 * per token at batch 1). Prefill ceiling = peak FLOP/s ÷ FLOPs per token.
 * Both at datasheet peaks, efficiencies 1: "arithmetic, not a benchmark".
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cli.h"
#include "hwprofile.h"
#include "list.h"
#include "model.h"
#include "xalloc.h"

/* The seed's six devices, in the seed's order. */
static const char seed_devices[] =
	"cpu-ddr5-5600,a10g,l40s,rtx-4090,a100-80gb-sxm,h100-sxm";

/* What one model contributes to every row. */
struct workload_model {
	char label[128];
	double weight_bytes;          /* all weights */
	double read_bytes_per_token;  /* weights one batch-1 decode token reads */
	double flops_per_token;       /* linear FLOPs (no attention) */
	double kv_bytes_per_token;
	enum matmul_dtype matmul;
};

struct row {
	const struct hw_profile *hw;
	double decode_tok_s, prefill_tok_s, peak_flops, ridge, intensity;
	double kv_budget_bytes, context_fit_tokens;
};

static void help(void)
{
	printf("usage: servesim ceiling [--model M] [--hardware H[,H…]|all] [--weights P]\n"
	       "                        [--format text|json|csv]\n\n"
	       "Single-stream decode ceiling (bandwidth / weight bytes, SEED C8) and prefill\n"
	       "ceiling (peak FLOP/s / FLOPs per token) per device, at datasheet peaks.\n"
	       "Without --model: the seed's notional 8B model at 16 bits (16 GB of weights,\n"
	       "128 KiB of KV per token); without --hardware: the seed's six devices.\n\n"
	       "  --model M       a model id, Hugging Face id or config.json path\n"
	       "  --hardware H    device ids or INI paths, comma-separated, or 'all'\n"
	       "  --weights P     weight precision (bits per weight shown): bf16, fp16, fp8,\n"
	       "                  int8, int4, awq, gptq, mxfp4, nvfp4, f16, q8_0, q6_k,\n"
	       "                  q5_k_m, q4_k_m, q4_0 (default: the model's own, else bf16)\n"
	       "  --format F      text (default), json or csv\n");
}

static void notional_model(struct workload_model *wm, const struct precision *w)
{
	const double params = 8e9;  /* SEED C8: "an 8B model at 16 bits = 16 GB" */
	snprintf(wm->label, sizeof wm->label, "the seed's notional 8B model at %s (%.4g bits/weight)",
		 w->name, w->bits_per_weight);
	wm->weight_bytes = params * w->bits_per_weight / 8;
	wm->read_bytes_per_token = wm->weight_bytes;
	wm->flops_per_token = 2 * params;
	wm->kv_bytes_per_token = 131072; /* SEED C16: a common 8B model at 16 bits */
	wm->matmul = w->matmul;
}

static void real_model(struct workload_model *wm, const struct model *m, const struct precision *w)
{
	snprintf(wm->label, sizeof wm->label, "%s at %s (%.4g bits/weight)", m->id, w->name,
		 w->bits_per_weight);
	wm->weight_bytes = model_weight_bytes(m, w);
	wm->read_bytes_per_token = model_active_weight_bytes(m, w);
	wm->flops_per_token = model_linear_flops_per_token(m);
	wm->kv_bytes_per_token = model_kv_bytes_per_token(m, 2);
	wm->matmul = w->matmul;
}

static void compute_row(struct row *r, const struct hw_profile *hw, const struct workload_model *wm)
{
	double bw = hw->bandwidth_gb_s * 1e9;
	r->hw = hw;
	r->decode_tok_s = bw / wm->read_bytes_per_token;
	r->peak_flops = hw_peak_flops(hw, wm->matmul);
	r->prefill_tok_s = r->peak_flops / wm->flops_per_token;
	r->ridge = r->peak_flops / bw;
	r->intensity = wm->flops_per_token / wm->read_bytes_per_token;
	r->kv_budget_bytes = hw_memory_bytes(hw) - wm->weight_bytes;
	r->context_fit_tokens = r->kv_budget_bytes > 0 ? floor(r->kv_budget_bytes / wm->kv_bytes_per_token) : 0;
}

static void print_text(const struct workload_model *wm, const struct row *rows, size_t n)
{
	printf("Single-stream ceilings for %s\n", wm->label);
	printf("weights %.2f GB; KV cache %.0f bytes per token; datasheet peaks, efficiency 1\n\n",
	       wm->weight_bytes / 1e9, wm->kv_bytes_per_token);
	printf("%-32s %9s %12s %14s %13s %12s %12s\n", "device", "BW GB/s", "decode tok/s",
	       "prefill tok/s", "ridge FLOP/B", "decode FLOP/B", "KV tokens fit");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		printf("%-32.32s %9.0f %12.0f %14.0f %13.0f %12.2f %12.0f\n", r->hw->name,
		       r->hw->bandwidth_gb_s, r->decode_tok_s, r->prefill_tok_s, r->ridge,
		       r->intensity, r->context_fit_tokens);
	}
	printf("\nDecode at batch 1 does %.2f FLOP per byte of weights read, far below every\n"
	       "device's ridge point (peak FLOP/s / bandwidth): it is bandwidth-bound (C7).\n"
	       "A prompt of T tokens does T times that per weight byte and crosses the ridge\n"
	       "within a few hundred tokens: prefill is compute-bound (C3). A measured rate is\n"
	       "lower than these ceilings; the gap says whether to fix the stack or the hardware.\n",
	       n ? rows[0].intensity : 0.0);
}

static void print_csv(const struct row *rows, size_t n)
{
	printf("device,id,mem_bandwidth_gb_s,decode_ceiling_tok_s,peak_tflops,prefill_ceiling_tok_s,"
	       "ridge_flop_per_byte,decode_flop_per_byte,kv_budget_gb,context_tokens_fit\n");
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		printf("\"%s\",%s,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.0f\n", r->hw->name, r->hw->id,
		       r->hw->bandwidth_gb_s, r->decode_tok_s, r->peak_flops / 1e12, r->prefill_tok_s,
		       r->ridge, r->intensity, r->kv_budget_bytes / 1e9, r->context_fit_tokens);
	}
}

static int print_json(const struct workload_model *wm, const struct row *rows, size_t n)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		json_t *o = json_object();
		json_object_set_new(o, "device", json_string(r->hw->name));
		json_object_set_new(o, "id", json_string(r->hw->id));
		json_object_set_new(o, "mem_bandwidth_gb_s", outfmt_num(r->hw->bandwidth_gb_s));
		json_object_set_new(o, "decode_ceiling_tok_s", outfmt_real(r->decode_tok_s, 3));
		json_object_set_new(o, "model", json_string(wm->label));
		json_object_set_new(o, "weight_bytes", outfmt_real(wm->weight_bytes, 0));
		json_object_set_new(o, "peak_tflops", outfmt_real(r->peak_flops / 1e12, 3));
		json_object_set_new(o, "prefill_ceiling_tok_s", outfmt_real(r->prefill_tok_s, 1));
		json_object_set_new(o, "ridge_flop_per_byte", outfmt_real(r->ridge, 2));
		json_object_set_new(o, "decode_flop_per_byte", outfmt_real(r->intensity, 4));
		json_object_set_new(o, "kv_bytes_per_token", outfmt_real(wm->kv_bytes_per_token, 0));
		json_object_set_new(o, "kv_budget_gb", outfmt_real(r->kv_budget_bytes / 1e9, 3));
		json_object_set_new(o, "context_tokens_fit", outfmt_num(r->context_fit_tokens));
		json_array_append_new(arr, o);
	}
	return cli_print_json(arr);
}

int cmd_ceiling(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "hardware", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "model", required_argument, NULL, 'm' },
		{ "weights", required_argument, NULL, 'w' },
		{ 0 },
	};
	const char *model_name = NULL, *hw_list = seed_devices, *weights = NULL;
	enum out_format fmt = FMT_TEXT;
	struct err e;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (cli_parse_format(optarg, 1u << FMT_TEXT | 1u << FMT_JSON | 1u << FMT_CSV, &fmt, &e))
				return cli_fail("ceiling", &e);
			break;
		case 'H': hw_list = optarg; break;
		case 'h': help(); return EXIT_OK;
		case 'm': model_name = optarg; break;
		case 'w': weights = optarg; break;
		default: return cli_bad_option("ceiling", argv);
		}
	}
	if (optind < argc)
		return cli_misuse("ceiling", "unexpected argument '%s'", argv[optind]);

	struct model m;
	if (model_name && model_load_named(&m, model_name, &e))
		return cli_fail("ceiling", &e);
	const char *wname = weights ? weights : model_name ? m.weights : "bf16";
	const struct precision *w = precision_find(wname);
	if (!w) {
		char names[512];
		precision_names(names, sizeof names);
		err_set(&e, "--weights: expected one of %s, got '%s'", names, wname);
		return cli_fail("ceiling", &e);
	}
	struct workload_model wm;
	if (model_name)
		real_model(&wm, &m, w);
	else
		notional_model(&wm, w);

	char **ids = NULL;
	size_t n = 0;
	bool bad_list = false;
	if (!strcmp(hw_list, "all")) {
		n = catalog_list(CATALOG_HARDWARE, &ids);
	} else {
		char tok[INI_VALUE_MAX];
		size_t cap = 0;
		int got;
		for (const char *cur = hw_list; (got = list_next(&cur, tok, sizeof tok)) > 0;) {
			xgrow(&ids, &cap, n + 1, sizeof *ids);
			ids[n++] = xstrdup(tok);
		}
		if (got < 0) {
			err_set(&e, "--hardware: expected comma-separated device ids, got '%s'", hw_list);
			bad_list = true;
		}
	}
	struct hw_profile *hws = xcalloc(n ? n : 1, sizeof *hws);
	struct row *rows = xcalloc(n ? n : 1, sizeof *rows);
	int rc = bad_list ? cli_fail("ceiling", &e) : EXIT_OK;
	for (size_t i = 0; i < n && rc == EXIT_OK; i++) {
		if (hw_load_named(&hws[i], ids[i], &e))
			rc = cli_fail("ceiling", &e);
		else
			compute_row(&rows[i], &hws[i], &wm);
	}
	if (rc == EXIT_OK) {
		if (fmt == FMT_JSON)
			rc = print_json(&wm, rows, n);
		else if (fmt == FMT_CSV)
			print_csv(rows, n);
		else
			print_text(&wm, rows, n);
	}
	for (size_t i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	free(hws);
	free(rows);
	return rc;
}
