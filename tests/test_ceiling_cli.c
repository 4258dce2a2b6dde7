/*
 * The servesim command, run as a user runs it: `ceiling` reproduces the
 * seed's table (SEED C8) in the seed's JSON keys, 8-bit weights double the
 * 16-bit ceiling (C9), `model` gives SEED C16's KV bytes, and bad input
 * exits 2 with a message naming what was wrong.
 */
#include "testutil.h"

#include <jansson.h>
#include <stdbool.h>

/* Runs servesim ARGS (a shell fragment), expecting exit status want_rc;
 * returns the parsed stdout when want_json. */
static json_t *servesim(struct cmd_result *r, int want_rc, bool want_json, const char *args)
{
	run_cmd(r, "'%s' %s", SERVESIM_BIN, args);
	if (r->status != want_rc) {
		print_error("servesim %s: exit %d, expected %d\nstderr: %s\n", args, r->status,
			    want_rc, r->err);
		fail();
	}
	if (!want_json)
		return NULL;
	json_error_t je;
	json_t *j = json_loads(r->out, 0, &je);
	if (!j) {
		print_error("servesim %s: stdout is not JSON (%d:%d: %s):\n%s\n", args, je.line,
			    je.column, je.text, r->out);
		fail();
	}
	return j;
}

static double num_field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	if (!json_is_number(v)) {
		print_error("key '%s' missing or not a number\n", key);
		fail();
	}
	return json_number_value(v);
}

/* The JSON rounds ceilings to 3 decimals (cli_real): half a unit of the
 * third decimal, plus a hair for the binary representation of the printed
 * decimal. */
#define JSON_3DP (0.0005 + 1e-9)

/* SEED C8: the six devices, their bandwidths and the rounded ceilings. */
static const struct {
	double gb_s;
	double tok_s;
} seed_table[] = {
	{ 90, 6 }, { 600, 38 }, { 864, 54 }, { 1008, 63 }, { 2039, 127 }, { 3350, 209 },
};
enum { N_SEED = sizeof seed_table / sizeof *seed_table };

static void seed_table_json(void **state)
{
	(void)state;
	struct cmd_result r;
	json_t *rows = servesim(&r, 0, true, "ceiling --format json");
	assert_true(json_is_array(rows));
	assert_int_equal(json_array_size(rows), N_SEED);
	for (size_t i = 0; i < N_SEED; i++) {
		json_t *o = json_array_get(rows, i);
		assert_true(json_is_string(json_object_get(o, "device")));
		/* The seed's bandwidths are whole numbers: exact. */
		assert_double_near(num_field(o, "mem_bandwidth_gb_s"), seed_table[i].gb_s, 0.0);
		/* "bandwidth ÷ 16 GB, rounded": the rounded figure is exact. */
		assert_double_near(round(num_field(o, "decode_ceiling_tok_s")), seed_table[i].tok_s,
				   0.0);
		/* Unrounded: bandwidth / 16 GB, to the JSON's resolution. */
		assert_double_near(num_field(o, "decode_ceiling_tok_s"), seed_table[i].gb_s / 16,
				   JSON_3DP);
	}
	json_decref(rows);
	cmd_result_free(&r);
}

/* The text table shows the same rounded ceilings. */
static void seed_table_text(void **state)
{
	(void)state;
	struct cmd_result r;
	servesim(&r, 0, false, "ceiling");
	assert_contains(r.out, "NVIDIA H100");
	assert_contains(r.out, "decode tok/s");
	cmd_result_free(&r);
}

/* SEED C9: 8-bit weights halve the bytes read and double the ceiling. For
 * the notional model (8 B parameters, nothing kept at 16 bits) exactly 2×. */
static void fp8_doubles_ceiling(void **state)
{
	(void)state;
	struct cmd_result r16, r8;
	json_t *a = servesim(&r16, 0, true, "ceiling --format json --weights bf16");
	json_t *b = servesim(&r8, 0, true, "ceiling --format json --weights fp8");
	assert_int_equal(json_array_size(a), N_SEED);
	assert_int_equal(json_array_size(b), N_SEED);
	for (size_t i = 0; i < N_SEED; i++) {
		json_t *o16 = json_array_get(a, i), *o8 = json_array_get(b, i);
		double gb_s = num_field(o8, "mem_bandwidth_gb_s");
		assert_double_near(gb_s, num_field(o16, "mem_bandwidth_gb_s"), 0.0);
		/* fp8: bandwidth / 8 GB. A whole bandwidth over 8 is a multiple
		 * of 0.125, which the JSON's 3 decimals hold exactly: tolerance 0. */
		assert_double_near(num_field(o8, "decode_ceiling_tok_s"), gb_s / 8, 0.0);
		/* The printed bf16 figure (bandwidth / 16, a multiple of 0.0625)
		 * lost its fourth decimal: 2× it is within 2 × JSON_3DP. */
		assert_double_near(num_field(o8, "decode_ceiling_tok_s"),
				   2 * num_field(o16, "decode_ceiling_tok_s"), 2 * JSON_3DP);
		/* Half the weight bytes, exactly (integers). */
		assert_double_near(num_field(o8, "weight_bytes"), num_field(o16, "weight_bytes") / 2,
				   0.0);
	}
	json_decref(a);
	json_decref(b);
	cmd_result_free(&r16);
	cmd_result_free(&r8);
}

/* GGUF Q4_0 at 4.5 bits: 8e9 × 4.5 / 8 = 4.5 GB of weights. */
static void q4_0_weights(void **state)
{
	(void)state;
	struct cmd_result r;
	json_t *rows = servesim(&r, 0, true, "ceiling --format json --weights q4_0 --hardware h100-sxm");
	assert_int_equal(json_array_size(rows), 1);
	json_t *o = json_array_get(rows, 0);
	/* Exact: 4.5e9 is an integer. */
	assert_double_near(num_field(o, "weight_bytes"), 4.5e9, 0.0);
	/* 3350 / 4.5 = 744.44…, to the JSON's resolution. */
	assert_double_near(num_field(o, "decode_ceiling_tok_s"), 3350 / 4.5, JSON_3DP);
	assert_contains(json_string_value(json_object_get(o, "model")), "4.5 bits");
	json_decref(rows);
	cmd_result_free(&r);

	/* The text output states the bits per weight too. */
	servesim(&r, 0, false, "ceiling --weights q4_0");
	assert_contains(r.out, "q4_0 (4.5 bits/weight)");
	cmd_result_free(&r);
}

static void unknown_hardware(void **state)
{
	(void)state;
	struct cmd_result r;
	servesim(&r, 2, false, "ceiling --hardware nonexistent");
	assert_contains(r.err, "nonexistent");
	assert_contains(r.err, "h100-sxm");
	assert_contains(r.err, "a100-80gb-sxm");
	assert_string_equal(r.out, "");
	cmd_result_free(&r);
}

static void unknown_weights(void **state)
{
	(void)state;
	struct cmd_result r;
	servesim(&r, 2, false, "ceiling --weights fp7");
	assert_contains(r.err, "got 'fp7'");
	assert_contains(r.err, "q4_0");
	cmd_result_free(&r);
}

/* A bad profile given as a path: exit 2, file and line on stderr. */
static void bad_profile_path(void **state)
{
	(void)state;
	struct cmd_result r;
	servesim(&r, 2, false, "ceiling --hardware '" TEST_DATA_DIR "/hw_zero_bandwidth.ini'");
	assert_contains(r.err, "hw_zero_bandwidth.ini:9:");
	assert_contains(r.err, "got '0'");
	cmd_result_free(&r);
}

/* SEED C16 through the command: 131072 KV bytes per token, and 8000 tokens
 * (the default --context) ≈ 1.05 GB. */
static void model_kv_json(void **state)
{
	(void)state;
	struct cmd_result r;
	json_t *o = servesim(&r, 0, true, "model llama-3.1-8b --format json");
	assert_string_equal(json_string_value(json_object_get(o, "id")), "llama-3.1-8b");
	/* Exact: integer arithmetic, printed as an integer. */
	assert_double_near(num_field(o, "kv_bytes_per_token"), 131072, 0.0);
	assert_double_near(num_field(o, "kv_bytes_at_context"), 131072.0 * 8000, 0.0);
	json_decref(o);
	cmd_result_free(&r);

	/* --kv-cache-dtype fp8 halves it exactly. */
	o = servesim(&r, 0, true, "model llama-3.1-8b --format json --kv-cache-dtype fp8");
	assert_double_near(num_field(o, "kv_bytes_per_token"), 65536, 0.0);
	json_decref(o);
	cmd_result_free(&r);
}

static void model_bad_json_path(void **state)
{
	(void)state;
	struct cmd_result r;
	servesim(&r, 2, false, "model '" TEST_DATA_DIR "/bad_syntax.json'");
	assert_contains(r.err, "bad_syntax.json:3:");
	cmd_result_free(&r);
}

static void help_and_misuse(void **state)
{
	(void)state;
	struct cmd_result r;
	/* --help: stdout, exit 0 (jq's convention). */
	servesim(&r, 0, false, "ceiling --help");
	assert_contains(r.out, "usage: servesim ceiling");
	cmd_result_free(&r);
	/* Misuse: stderr, exit 2. */
	servesim(&r, 2, false, "ceiling --format yaml");
	assert_contains(r.err, "yaml");
	cmd_result_free(&r);
	servesim(&r, 2, false, "no-such-verb");
	assert_contains(r.err, "no-such-verb");
	cmd_result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(seed_table_json),
		cmocka_unit_test(seed_table_text),
		cmocka_unit_test(fp8_doubles_ceiling),
		cmocka_unit_test(q4_0_weights),
		cmocka_unit_test(unknown_hardware),
		cmocka_unit_test(unknown_weights),
		cmocka_unit_test(bad_profile_path),
		cmocka_unit_test(model_kv_json),
		cmocka_unit_test(model_bad_json_path),
		cmocka_unit_test(help_and_misuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
