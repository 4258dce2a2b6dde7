/*
 * explain's kernel rows (sim/cli/cmd_explain.c): each operator row names
 * the source of the efficiency it applied. Where the profile's measured
 * best-shape GEMM ([arch] matmul_bf16_tflops, steptime.c) set the dense
 * GEMM's number, that measurement is the source, not the kernel row's
 * fraction of the datasheet.
 */
#include "testutil.h"

#include <jansson.h>
#include <math.h>

#include "testjson.h"

/* The operator row named op of an explain document. */
static json_t *row(json_t *doc, const char *op)
{
	return item_with(json_object_get(doc, "operators"), "operator", op);
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void measured_gemm_is_the_source(void **state)
{
	(void)state;
	/* B200: matmul_bf16_tflops = 1745 against a 2250 TFLOP/s datasheet
	 * (hardware_profiles/b200.ini); a 16k-token prefill is compute-bound. */
	json_t *doc = servesim_json("explain --batch prefill:16384 --model llama-3.1-8b --hardware b200 --format json");
	json_t *d = row(doc, "dense matmuls");
	assert_string_equal(str(d, "bound"), "compute");
	assert_contains(str(d, "source"), "measured best-shape BF16 GEMM ([arch] matmul_bf16_tflops)");
	assert_contains(str(d, "measured"), "matmul_bf16_tflops = 1745");
	assert_contains(str(d, "measured"), "b200 [arch] source: ");
	assert_null(strstr(str(d, "measured"), "fp8"));   /* bf16 weights: only the BF16 figure */
	/* The number it set: 0.95 of the measured rate at most (tile
	 * padding and waves take a little more at this shape). */
	double eff = num(d, "efficiency");
	assert_true(eff <= 0.95 * 1745 / 2250 * (1 + 1e-9));
	assert_true(eff >= 0.9 * 0.95 * 1745 / 2250);
	json_decref(doc);
	/* FP8 weights: the FP8 figure too. */
	doc = servesim_json("explain --batch prefill:16384 --model llama-3.1-8b --hardware b200 --weights fp8 --format json");
	assert_contains(str(row(doc, "dense matmuls"), "measured"), "matmul_fp8_tflops = 3432.5");
	json_decref(doc);
	/* A batch-1 decode is bound by the weight reads: the GEMV's source,
	 * no measurement. */
	doc = servesim_json("explain --batch decode:1x1000 --model llama-3.1-8b --hardware b200 --format json");
	d = row(doc, "dense matmuls");
	assert_string_equal(str(d, "bound"), "memory");
	assert_null(json_object_get(d, "measured"));
	assert_null(strstr(str(d, "source"), "measured best-shape"));
	json_decref(doc);
	/* H100 SXM's profile has no measured GEMM: the kernel row's source. */
	doc = servesim_json("explain --batch prefill:16384 --model llama-3.1-8b --hardware h100-sxm --format json");
	d = row(doc, "dense matmuls");
	assert_null(json_object_get(d, "measured"));
	assert_contains(str(d, "source"), "cuBLAS BF16");
	json_decref(doc);
	/* The text prints the same lines. */
	struct cmd_result r;
	run_cmd(&r, "'%s' explain --batch prefill:16384 --model llama-3.1-8b --hardware b200", SERVESIM_BIN);
	assert_int_equal(r.status, 0);
	assert_contains(r.out, "0.95 x the profile's measured best-shape BF16 GEMM");
	assert_contains(r.out, "measured: matmul_bf16_tflops = 1745 (b200 [arch] source: ");
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(measured_gemm_is_the_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
