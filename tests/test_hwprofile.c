/*
 * hwprofile: every shipped profile loads; the seed's six devices carry the
 * seed's bandwidths (SEED C8); each kind of bad INI input is an error that
 * names the file and line (and the key where there is one).
 */
#include "testutil.h"

#include "catalog.h"
#include "hwprofile.h"

static void load(struct hw_profile *hw, const char *name)
{
	struct err e = { { 0 } };
	if (hw_load_named(hw, name, &e)) {
		print_error("%s: %s\n", name, e.msg);
		fail();
	}
}

static void every_profile_loads(void **state)
{
	(void)state;
	char **ids;
	size_t n = catalog_list(CATALOG_HARDWARE, &ids);
	/* The issue lists at least 20 devices. */
	assert_true(n >= 20);
	int failed = 0;
	for (size_t i = 0; i < n; i++) {
		struct hw_profile hw;
		struct err e = { { 0 } };
		if (hw_load_named(&hw, ids[i], &e)) {
			print_error("%s: %s\n", ids[i], e.msg);
			failed++;
		} else {
			assert_string_equal(hw.id, ids[i]);
			assert_true(hw.capacity_gb > 0 && hw.bandwidth_gb_s > 0 && hw.bf16_tflops > 0);
			assert_true(hw_memory_bytes(&hw) > 0);
			assert_true(hw.source_memory[0] && hw.source_compute[0]);
			/* Issue 11: every shipped profile carries its device facts,
			 * with a source, consistent with its peaks: the clock under
			 * load at most the quoted one, the stream at most the
			 * datasheet bandwidth. */
			assert_true(hw.arch.present);
			assert_true(hw.source_arch[0]);
			assert_true(hw.arch.sustained_clock_mhz <= hw.arch.boost_clock_mhz);
			assert_true(hw.arch.memory_type != HW_MEM_UNKNOWN);
			assert_true(hw_stream_bandwidth(&hw) <= hw.bandwidth_gb_s * 1e9);
			assert_true(hw_clock_ratio(&hw) > 0.5 && hw_clock_ratio(&hw) <= 1);
		}
		free(ids[i]);
	}
	free(ids);
	assert_int_equal(failed, 0);
}

/* SEED C8's table: the bandwidths exactly as the seed prints them (whole
 * numbers, exact in a double, so tolerance 0). */
static void seed_bandwidths(void **state)
{
	(void)state;
	static const struct {
		const char *id;
		double gb_s;
	} seed[] = {
		{ "cpu-ddr5-5600", 90 }, { "a10g", 600 },	   { "l40s", 864 },
		{ "rtx-4090", 1008 },	 { "a100-80gb-sxm", 2039 }, { "h100-sxm", 3350 },
	};
	for (size_t i = 0; i < sizeof seed / sizeof *seed; i++) {
		struct hw_profile hw;
		load(&hw, seed[i].id);
		assert_double_near(hw.bandwidth_gb_s, seed[i].gb_s, 0.0);
	}
}

/* Ampere has no fp8 or fp4 tensor cores: their matmuls run at the bf16
 * rate. Hopper has fp8. Exact: the same figure read from the file. */
static void peak_flops_fallback(void **state)
{
	(void)state;
	struct hw_profile a100, h100;
	load(&a100, "a100-80gb-sxm");
	assert_double_near(a100.fp8_tflops, 0.0, 0.0);
	double bf16 = hw_peak_flops(&a100, MATMUL_BF16);
	assert_double_near(bf16, a100.bf16_tflops * 1e12, 0.0);
	assert_double_near(hw_peak_flops(&a100, MATMUL_FP8), bf16, 0.0);
	assert_double_near(hw_peak_flops(&a100, MATMUL_FP4), bf16, 0.0);
	/* A100 has int8 tensor cores at twice the bf16 rate. */
	assert_double_near(hw_peak_flops(&a100, MATMUL_INT8), 2 * bf16, 0.0);

	load(&h100, "h100-sxm");
	assert_true(h100.fp8_tflops > h100.bf16_tflops);
	assert_double_near(hw_peak_flops(&h100, MATMUL_FP8), h100.fp8_tflops * 1e12, 0.0);
	/* No fp4 on Hopper: falls back to fp8, the nearest it has. */
	assert_double_near(hw_peak_flops(&h100, MATMUL_FP4), h100.fp8_tflops * 1e12, 0.0);
}

/* The fixture every bad one is derived from loads, so each bad fixture
 * fails for its one flaw only. */
static void valid_fixture_loads(void **state)
{
	(void)state;
	struct hw_profile hw;
	load(&hw, TEST_DATA_DIR "/hw_valid.ini");
	assert_string_equal(hw.id, "hw_valid");
	assert_double_near(hw.bandwidth_gb_s, 2000, 0.0);
	/* No fp16 key: it takes the bf16 rate. */
	assert_double_near(hw.fp16_tflops, 400, 0.0);
	/* No [efficiency]: the class defaults, uncalibrated. */
	assert_false(hw.calibrated);
	assert_false(hw.has_price);
}

/* Loads a bad fixture; returns its message in e (the test fails if it
 * loads). */
static void load_bad(const char *file, struct err *e)
{
	char path[512];
	struct hw_profile hw;
	snprintf(path, sizeof path, "%s/%s", TEST_DATA_DIR, file);
	memset(e, 0, sizeof *e);
	assert_int_equal(hw_load(&hw, path, e), -1);
	assert_true(e->msg[0] != '\0');
}

static void bad_unknown_key(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_unknown_key.ini", &e);
	assert_contains(e.msg, "hw_unknown_key.ini:10:");
	assert_contains(e.msg, "clock_mhz");
	assert_contains(e.msg, "unknown key");
	/* It lists what [memory] does accept. */
	assert_contains(e.msg, "bandwidth_gb_s");
}

static void bad_missing_key(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_missing_key.ini", &e);
	/* A missing key has no line; the file and the key name it. */
	assert_contains(e.msg, "hw_missing_key.ini");
	assert_contains(e.msg, "[memory] bandwidth_gb_s");
	assert_contains(e.msg, "missing");
}

static void bad_not_a_number(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_not_a_number.ini", &e);
	assert_contains(e.msg, "hw_not_a_number.ini:9:");
	assert_contains(e.msg, "bandwidth_gb_s: expected");
	assert_contains(e.msg, "got '2000 GB/s'");
}

static void bad_zero_bandwidth(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_zero_bandwidth.ini", &e);
	assert_contains(e.msg, "hw_zero_bandwidth.ini:9:");
	assert_contains(e.msg, "bandwidth_gb_s: expected");
	assert_contains(e.msg, "> 0");
	assert_contains(e.msg, "got '0'");
}

static void bad_negative_bandwidth(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_negative_bandwidth.ini", &e);
	assert_contains(e.msg, "hw_negative_bandwidth.ini:9:");
	assert_contains(e.msg, "bandwidth_gb_s: expected");
	assert_contains(e.msg, "got '-2000'");
}

/* The scale-out NIC rate: absent, the generation's default (an estimate:
 * the fixture has no [arch], so 100 Gb/s; an H100 400); given as 0, a
 * one-line error naming file, line and key. */
static void network_rate_default_and_bad(void **state)
{
	(void)state;
	struct hw_profile hw;
	load(&hw, TEST_DATA_DIR "/hw_valid.ini");
	assert_double_near(hw.network_gbit_s, 100, 0.0);
	load(&hw, "h100-sxm");
	assert_double_near(hw.network_gbit_s, 400, 0.0);
	struct err e;
	load_bad("hw_zero_network.ini", &e);
	assert_contains(e.msg, "hw_zero_network.ini:22:");
	assert_contains(e.msg, "network_gbit_s: expected");
	assert_contains(e.msg, "got '0'");
}

/* The link domain defaults to the node (H100: 8) and may span more (a
 * GB200 NVL72 rack: 72 GPUs on one NVLink Switch, 4 a tray); one smaller
 * than the node is an error naming the file and the key. */
static void link_domain_default_and_bad(void **state)
{
	(void)state;
	struct hw_profile hw;
	load(&hw, "h100-sxm");
	assert_int_equal(hw.link_domain_gpus, 8);
	load(&hw, "gb200");
	assert_int_equal(hw.link_domain_gpus, 72);
	assert_int_equal(hw.gpus_per_node, 4);
	struct err e;
	load_bad("hw_link_domain.ini", &e);
	assert_contains(e.msg, "hw_link_domain.ini");
	assert_contains(e.msg, "link_domain_gpus: expected at least");
	assert_contains(e.msg, "got '2'");
}

static void bad_long_line(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_long_line.ini", &e);
	/* inih 55 reads 200 characters a line; a longer one would be split
	 * silently, so the adapter refuses it. No key: the line is the fault. */
	assert_contains(e.msg, "hw_long_line.ini:10:");
	assert_contains(e.msg, "characters");
}

static void bad_syntax(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_syntax_error.ini", &e);
	assert_contains(e.msg, "hw_syntax_error.ini:9:");
	assert_contains(e.msg, "key = value");
}

/* [arch]: the clock under load cannot exceed the quoted one, and the
 * measured stream cannot exceed the datasheet peak. */
static void bad_arch_sustained_above_boost(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_arch_sustained.ini", &e);
	assert_contains(e.msg, "hw_arch_sustained.ini");
	assert_contains(e.msg, "sustained_clock_mhz");
	assert_contains(e.msg, "1900");
}

/* [arch] gemv_*: the mat-vec curve's slope cannot exceed the datasheet
 * bandwidth, and a floor needs its slope (the curve is both). */
static void bad_arch_gemv_curve(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_arch_gemv_fast.ini", &e);
	assert_contains(e.msg, "hw_arch_gemv_fast.ini");
	assert_contains(e.msg, "gemv_bandwidth_gb_s");
	assert_contains(e.msg, "2100");
	load_bad("hw_arch_gemv_floor.ini", &e);
	assert_contains(e.msg, "hw_arch_gemv_floor.ini");
	assert_contains(e.msg, "gemv_floor_us");
}

static void bad_arch_unknown_key(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_arch_unknown_key.ini", &e);
	assert_contains(e.msg, "hw_arch_unknown_key.ini:18:");
	assert_contains(e.msg, "warp_size");
}

static void bad_arch_tensor_cores(void **state)
{
	(void)state;
	struct err e;
	load_bad("hw_arch_bad_enum.ini", &e);
	assert_contains(e.msg, "hw_arch_bad_enum.ini:16:");
	assert_contains(e.msg, "hopper");
}

/* The GeForce parts' FP16-accumulate rate is twice the FP32-accumulate one
 * PyTorch gets (Ada whitepaper: 330.3 vs 165.2 on the RTX 4090); the
 * datacenter parts have one rate. */
static void accumulate_peaks(void **state)
{
	(void)state;
	struct hw_profile g, h;
	load(&g, "rtx-4090");
	load(&h, "h100-sxm");
	assert_double_near(hw_peak_flops_acc16(&g), 330.3e12, 1);
	assert_double_near(hw_peak_flops(&g, MATMUL_BF16), 165.2e12, 1);
	assert_double_near(hw_peak_flops_acc16(&h), hw_peak_flops(&h, MATMUL_BF16), 1);
	/* The H100 SXM profile sets a measured streaming figure: 3100 of 3350 GB/s. */
	assert_double_near(hw_stream_bandwidth(&h), 3100e9, 1);
	/* A profile without one takes its memory type's fraction (GDDR6X 0.95). */
	assert_double_near(hw_stream_bandwidth(&g), 0.95 * 1008e9, 1);
}

static void unknown_id_lists_known(void **state)
{
	(void)state;
	struct hw_profile hw;
	struct err e = { { 0 } };
	assert_int_equal(hw_load_named(&hw, "nonexistent", &e), -1);
	assert_contains(e.msg, "nonexistent");
	assert_contains(e.msg, "h100-sxm");
	assert_contains(e.msg, "a100-80gb-sxm");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_profile_loads),
		cmocka_unit_test(seed_bandwidths),
		cmocka_unit_test(peak_flops_fallback),
		cmocka_unit_test(valid_fixture_loads),
		cmocka_unit_test(bad_unknown_key),
		cmocka_unit_test(bad_missing_key),
		cmocka_unit_test(bad_not_a_number),
		cmocka_unit_test(bad_zero_bandwidth),
		cmocka_unit_test(bad_negative_bandwidth),
		cmocka_unit_test(network_rate_default_and_bad),
		cmocka_unit_test(link_domain_default_and_bad),
		cmocka_unit_test(bad_long_line),
		cmocka_unit_test(bad_syntax),
		cmocka_unit_test(bad_arch_sustained_above_boost),
		cmocka_unit_test(bad_arch_gemv_curve),
		cmocka_unit_test(bad_arch_unknown_key),
		cmocka_unit_test(bad_arch_tensor_cores),
		cmocka_unit_test(accumulate_peaks),
		cmocka_unit_test(unknown_id_lists_known),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
