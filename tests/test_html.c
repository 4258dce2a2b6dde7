/*
 * html and svg: the report page and its plots.
 *
 * The page must stand alone (no script, no stylesheet, font or image from
 * anywhere), hold the plots it promises (one <svg class="plot"> each, each
 * with its series drawn), escape every text it shows, and be written whole
 * or not at all. The plots' log axes put ticks at decades (and 2, 5), skip
 * values they cannot show, and never print two tick labels on top of each
 * other. And a real browser draws it: headless Chromium renders the page to
 * PNG, which must not be blank and must show coloured plot lines down the
 * page (skipped, with a message, where /usr/bin/chromium is missing; the
 * pixel count needs zlib, else only the PNG itself is checked).
 */
#include "testutil.h"

#include "accdata.h"
#include "svg.h"

#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

__attribute__((noinline)) static char *plot_text(const struct svg_plot *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	svg_plot(f, p);
	fclose(f);
	return buf;
}

static void test_svg_escapes_text(void **state)
{
	(void)state;
	double x[] = { 1, 2 }, y[] = { 3, 4 };
	struct svg_series s = { "a <b>\"c\"", "#000", x, y, NULL, 2, SVG_LINE };
	struct svg_plot p = { .title = "<script>alert(1)</script> & co",
			      .xlabel = "x'",
			      .ylabel = "y",
			      .series = &s,
			      .n_series = 1 };
	char *out = plot_text(&p);
	assert_contains(out, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co");
	assert_contains(out, "a &lt;b&gt;&quot;c&quot;");
	assert_contains(out, "x&#39;");
	assert_null(strstr(out, "<script"));
	assert_null(strstr(out, "<b>"));
	free(out);
}

/* The x tick labels of a plot: their centres and texts. */
struct labels {
	double x[64];
	char text[64][32];
	size_t n;
};

static void x_labels(const char *svg, struct labels *l)
{
	l->n = 0;
	const char *g = strstr(svg, "<g class=\"grid\">");
	const char *end = g ? strstr(g, "</g>") : NULL;
	assert_non_null(end);
	for (const char *p = strstr(g, "text-anchor=\"middle\">"); p && p < end;
	     p = strstr(p + 1, "text-anchor=\"middle\">")) {
		const char *xs = p;
		while (xs > g && strncmp(xs, "<text x=\"", 9))
			xs--;
		assert_true(l->n < 64);
		l->x[l->n] = strtod(xs + 9, NULL);
		const char *t = p + strlen("text-anchor=\"middle\">");
		size_t len = (size_t)(strchr(t, '<') - t);
		snprintf(l->text[l->n], sizeof l->text[0], "%.*s", (int)len, t);
		l->n++;
	}
}

/* Two neighbouring labels are at least their half-widths apart (6.6 px a
 * character at 12 px) plus a gap: they cannot run together. */
static void assert_no_overlap(const struct labels *l)
{
	for (size_t i = 1; i < l->n; i++) {
		double need = 6.6 * (double)(strlen(l->text[i]) + strlen(l->text[i - 1])) / 2 + 4;
		if (l->x[i] - l->x[i - 1] < need)
			fail_msg("labels '%s' at %.1f and '%s' at %.1f run together",
				 l->text[i - 1], l->x[i - 1], l->text[i], l->x[i]);
	}
}

static void test_log_axis(void **state)
{
	(void)state;
	/* An ITL CDF: one zero (not on a log axis), then 0.5 ms to a 400 ms stall. */
	double x[] = { 0, 0.5, 5, 6, 7, 40, 400 }, y[] = { 0.1, 0.2, 0.5, 0.9, 0.99, 0.999, 1 };
	struct svg_series s = { "itl", "#2ca02c", x, y, NULL, 7, SVG_STEP };
	struct svg_plot p = { .title = "t",
			      .xlabel = "ms",
			      .ylabel = "f",
			      .xlog = true,
			      .y_fixed = true,
			      .ymin = 0,
			      .ymax = 1,
			      .series = &s,
			      .n_series = 1 };
	char *out = plot_text(&p);
	struct labels l;
	x_labels(out, &l);
	/* Decades 0.1 … 1000, each labelled once. */
	const char *want[] = { "0.1", "1", "10", "100", "1000" };
	assert_int_equal(l.n, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(l.text[i], want[i]);
	/* Equal spacing per decade: a log axis. */
	assert_double_near(l.x[2] - l.x[1], l.x[1] - l.x[0], 0.2);
	assert_no_overlap(&l);
	/* The zero is left out: the step path has 6 points (M then 5 H). */
	size_t at = (size_t)(strstr(out, "class=\"series\"") - out);
	at += (size_t)(strstr(out + at, " d=\"") - (out + at)) + 4;
	size_t h = 0;
	for (; out[at] != '"'; at++)
		h += out[at] == 'H';
	assert_int_equal(h, 5);
	free(out);

	/* A short range gets 2 and 5 between the decades. */
	double x2[] = { 3, 9, 30 }, y2[] = { 0.2, 0.5, 1 };
	struct svg_series s2 = { "ttft", "#1f77b4", x2, y2, NULL, 3, SVG_STEP };
	p.series = &s2;
	out = plot_text(&p);
	x_labels(out, &l);
	assert_true(l.n >= 3);
	assert_string_equal(l.text[0], "2");
	assert_no_overlap(&l);
	free(out);
}

static void test_linear_labels_never_overlap(void **state)
{
	(void)state;
	/* Wide numbers on a narrow plot: the ticks thin out, labels stay apart. */
	double ranges[][2] = {
		{ 0, 123456 }, { 0.001, 0.0173 }, { 990, 1010 }, { -5, 5 }, { 0, 1e9 }
	};
	for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
		double x[] = { ranges[r][0], ranges[r][1] }, y[] = { 1, 2 };
		struct svg_series s = { "s", "#000", x, y, NULL, 2, SVG_LINE };
		struct svg_plot p = { .title = "t",
				      .xlabel = "x",
				      .ylabel = "y",
				      .series = &s,
				      .n_series = 1,
				      .width = 300,
				      .height = 200 };
		char *out = plot_text(&p);
		struct labels l;
		x_labels(out, &l);
		assert_true(l.n >= 2);
		assert_no_overlap(&l);
		free(out);
	}
}

/* Nothing in the page reaches outside it. */
static void assert_self_contained(const char *html)
{
	assert_true(!strncmp(html, "<!DOCTYPE html>", 15));
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "<link"));
	assert_null(strstr(html, "@import"));
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, " src="));
	assert_null(strstr(html, "<img"));
	/* The only http is the SVG namespace, one per plot. */
	assert_int_equal(count(html, "http"), count(html, "xmlns=\"http://www.w3.org/2000/svg\""));
	assert_contains(html, "</html>\n");
	/* Every element the writers open is closed. */
	static const char *const pairs[][2] = {
		{ "<section>", "</section>" }, { "<table>", "</table>" }, { "<svg ", "</svg>" },
		{ "<div", "</div>" },	       { "<g ", "</g>" },	  { "<tr>", "</tr>" },
		{ "<pre>", "</pre>" },
	};
	for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
		if (count(html, pairs[i][0]) != count(html, pairs[i][1]))
			fail_msg("%zu %s but %zu %s", count(html, pairs[i][0]), pairs[i][0],
				 count(html, pairs[i][1]), pairs[i][1]);
	/* <p> and <p class=…>, not <path> */
	assert_int_equal(count(html, "<p>") + count(html, "<p "), count(html, "</p>"));
}

/* The page of c13-bench-serve with num_prompts requests (the caller
 * frees it), checked self-contained. */
static char *run_page(int num_prompts)
{
	char dir[64];
	test_tmpdir(dir, sizeof dir, "html");
	struct cmd_result r;
	run_cmd(&r, "'%s' report c13-bench-serve --set workload.num_prompts=%d --out '%s/run.html'",
		SERVESIM_BIN, num_prompts, dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	char path[512];
	snprintf(path, sizeof path, "%s/run.html", dir);
	char *html = test_slurp_path(path);
	assert_self_contained(html);
	test_rmdir(dir);
	return html;
}

static void test_run_report(void **state)
{
	(void)state;
	char *html = run_page(80);
	/* The answer first, then five plots: running/waiting, KV, throughput,
	 * TTFT and ITL CDFs (six series), each drawn. */
	assert_true(strstr(html, "class=\"answer\"") < strstr(html, "<svg"));
	assert_int_equal(count(html, "<svg "), 5);
	assert_int_equal(count(html, "<g class=\"series\""), 6);
	assert_int_equal(count(html, "d=\"\""), 0); /* no empty line */
	assert_contains(html, "TTFT distribution (CDF, log axis)");
	assert_contains(html, "ITL distribution (CDF, log axis)");
	assert_contains(html, "USD per million output tokens");
	assert_contains(html, "servesim ");
	assert_contains(html, "Hardware profile h100-sxm");
	assert_contains(html, "No real run of llama-3.1-8b checks servesim");
	assert_contains(html, "workload.num_prompts=80");
	/* No folder of this machine: the scenario by its file name. */
	assert_contains(html, "c13-bench-serve.ini");
	assert_null(strstr(html, "/scenarios/"));
	free(html);
}

/* 601 to 1199 requests: the CDFs' thinning stepped by n / 600 rounded
 * down, one point a request, past the 602 it had room for (a heap
 * overflow: abort in free, found by tidy's bad-input battery). */
static void test_run_report_thins_the_cdfs(void **state)
{
	(void)state;
	char *html = run_page(1000);
	assert_contains(html, "TTFT distribution (CDF, log axis)");
	free(html);
}

/* The page's accuracy figures are accuracy.data's, read when the page is
 * written: the shipped file's numbers appear as the file has them, and a
 * data folder whose file says otherwise gives a page that says otherwise
 * (so no copy of them lives in the code). A bad file is an error naming
 * its line, and the page then says the figures could not be read. */
/* Runs a shell command (fmt, …) that writes dir/name, and returns that
 * page (caller frees). */
__attribute__((format(printf, 3, 4))) static char *page_of(const char *dir, const char *name,
							   const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	struct cmd_result r;
	run_cmd(&r, "%s", cmd);
	if (r.status != 0)
		fail_msg("%s: exit %d: %s", cmd, r.status, r.err);
	cmd_result_free(&r);
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return test_slurp_path(path);
}

static void test_accuracy_from_data(void **state)
{
	(void)state;
	struct accdata acc;
	struct err e;
	if (accdata_load_default(&acc, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(acc.hardware, "h100-sxm");
	assert_true(acc.n_models >= 1 && acc.runs >= (int64_t)acc.n_models);
	const struct accdata_model *m = accdata_find(&acc, "llama-2-7b");
	assert_non_null(m);
	char want_hw[256], want_model[512];
	snprintf(want_hw, sizeof want_hw, "mean TTFT %.1f%%, mean ITL %.1f%%, mean E2E latency %.1f%%",
		 acc.mape_pct[ACC_TTFT], acc.mape_pct[ACC_ITL], acc.mape_pct[ACC_E2E]);
	snprintf(want_model, sizeof want_model, "%lld runs at TP %s: mean TTFT", (long long)m->runs,
		 m->tp);
	accdata_free(&acc);

	char dir[256];
	assert_int_equal(test_tmpdir_make(dir, sizeof dir, "acc"), 0);
	const char *data = getenv("SERVESIM_DATA_DIR");
	assert_non_null(data);
	const char *args = "c13-bench-serve --set run.model=llama-2-7b --set workload.num_prompts=30";
	char *html =
		page_of(dir, "a.html", "'%s' report %s --out '%s/a.html'", SERVESIM_BIN, args, dir);
	assert_contains(html, want_hw);
	assert_contains(html, want_model);
	free(html);

	/* A data folder with another accuracy.data: the page follows it. */
	html = page_of(
		dir, "b.html",
		"cd '%s' && mkdir -p d/scenarios/calibration && ln -s '%s/models' "
		"'%s/hardware_profiles' '%s/plots' d/ && cp '%s/scenarios/c13-bench-serve.ini' "
		"d/scenarios/ && sed 's/^ttft_mape_pct = .*/ttft_mape_pct = 42.5/' "
		"'%s/scenarios/calibration/accuracy.data' > d/scenarios/calibration/accuracy.data "
		"&& "
		"SERVESIM_DATA_DIR='%s/d' '%s' report %s --out b.html",
		dir, data, data, data, data, data, dir, SERVESIM_BIN, args);
	assert_contains(html, "mean TTFT 42.5%");
	free(html);

	/* A bad line: the loader names it; the page says it could not read it. */
	html = page_of(
		dir, "c.html",
		"cd '%s' && printf 'bogus_key = 1\\n' >> d/scenarios/calibration/accuracy.data && "
		"SERVESIM_DATA_DIR='%s/d' '%s' report %s --out c.html",
		dir, dir, SERVESIM_BIN, args);
	assert_contains(html, "The accuracy figures could not be read here (");
	assert_contains(html, "accuracy.data:");
	assert_contains(html, "bogus_key");
	free(html);
	assert_int_equal(test_tmpdir_remove(dir), 0);
}

static void test_doc_reports(void **state)
{
	(void)state;
	char dir[64];
	test_tmpdir(dir, sizeof dir, "html");
	struct cmd_result r;
	run_cmd(&r,
		"'%s' sweep --vary request_rate=2,8,16 --replications 2 --set "
		"workload.num_prompts=40 "
		"--format json > '%s/sweep.json' && '%s' compare --hardware h100-sxm,l40s --slo "
		"ttft_p99_ms=3000 "
		"--replications 2 --set workload.num_prompts=40 --duration 0 --max-load 64 "
		"--format json > '%s/cmp.json' && "
		"'%s' plan --slo ttft_p99_ms=2000,itl_p99_ms=100 --target-rate 20 --hardware "
		"h100-sxm,l40s "
		"--replications 2 --set workload.num_prompts=40 --duration 0 --max-load 64 "
		"--format json > '%s/plan.json'",
		SERVESIM_BIN, dir, SERVESIM_BIN, dir, SERVESIM_BIN, dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	run_cmd(&r, "'%s' report '%s/sweep.json' '%s/cmp.json' '%s/plan.json' --out '%s/docs.html'",
		SERVESIM_BIN, dir, dir, dir, dir);
	assert_int_equal(r.status, 0);
	cmd_result_free(&r);
	char path[512];
	snprintf(path, sizeof path, "%s/docs.html", dir);
	char *html = test_slurp_path(path);
	assert_self_contained(html);
	/* sweep: TTFT, ITL, E2E, throughput, requests; compare: three bars;
	 * plan: the search, load and cost bars. */
	assert_int_equal(count(html, "<svg "), 11);
	assert_contains(html, "Which configuration serves 20 req/s within ttft_p99_ms ≤ 2000, "
			      "itl_p99_ms ≤ 100 at the lowest cost?");
	/* The plan's answer first: replicas × the winner, its GPUs and cost. */
	const char *big = strstr(strstr(html, "Which configuration serves"), "<p class=\"big\">");
	assert_non_null(big);
	char answer[256];
	snprintf(answer, sizeof answer, "%.*s", (int)strcspn(big + 15, "<"), big + 15);
	assert_non_null(strstr(answer, " × "));
	assert_non_null(strstr(answer, " TP1 bf16: "));
	assert_non_null(strstr(answer, " GPU"));
	assert_non_null(strstr(answer, " USD/hour"));
	assert_contains(html, "(bars: 95% CI over replications)");
	assert_contains(html, "How do latency and throughput change with workload.request_rate");
	assert_contains(html, "Which GPU serves llama-3.1-8b best (ttft_p99_ms ≤ 3000)?");
	assert_contains(html, "Hardware profile l40s");
	free(html);

	/* Not a result: exit 2 naming the file, and no page left behind. */
	run_cmd(&r,
		"echo '{\"kind\": \"nonsense\"}' > '%s/bad.json' && '%s' report '%s/bad.json' "
		"--out '%s/bad.html'",
		dir, SERVESIM_BIN, dir, dir);
	assert_int_equal(r.status, 2);
	assert_contains(r.err, "bad.json: expected the JSON of servesim sweep, plan, compare or "
			       "run, got nonsense");
	snprintf(path, sizeof path, "%s/bad.html", dir);
	assert_int_equal(access(path, F_OK), -1);
	cmd_result_free(&r);
	test_rmdir(dir);
}

#ifdef HAVE_ZLIB
static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
	int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
	return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* Decodes an 8-bit RGB or RGBA PNG (what Chromium writes) into rgb,
 * 3 bytes a pixel (caller frees). */
static unsigned char *png_rgb(const unsigned char *png, size_t len, uint32_t *w, uint32_t *h)
{
	assert_true(len > 8 && !memcmp(png, "\x89PNG\r\n\x1a\n", 8));
	size_t off = 8, idat_len = 0;
	unsigned char *idat = malloc(len), ctype = 0;
	assert_non_null(idat);
	while (off + 12 <= len) {
		uint32_t n = be32(png + off);
		const unsigned char *type = png + off + 4, *data = png + off + 8;
		if (!memcmp(type, "IHDR", 4)) {
			*w = be32(data);
			*h = be32(data + 4);
			assert_int_equal(data[8], 8); /* bit depth */
			ctype = data[9];
			assert_true(ctype == 2 || ctype == 6);
			assert_int_equal(data[12], 0); /* not interlaced */
		} else if (!memcmp(type, "IDAT", 4)) {
			memcpy(idat + idat_len, data, n);
			idat_len += n;
		}
		off += 12 + n;
	}
	size_t bpp = ctype == 6 ? 4 : 3, stride = 1 + (size_t)*w * bpp;
	uLongf raw_len = (uLongf)(stride * *h);
	unsigned char *raw = malloc(raw_len), *rgb = malloc((size_t)*w * *h * 3);
	assert_true(raw && rgb);
	assert_int_equal(uncompress(raw, &raw_len, idat, (uLong)idat_len), Z_OK);
	free(idat);
	for (uint32_t y = 0; y < *h; y++) {
		unsigned char *row = raw + y * stride + 1,
			      *prev = y ? raw + (y - 1) * stride + 1 : NULL;
		int ft = row[-1];
		for (size_t i = 0; i < (size_t)*w * bpp; i++) {
			int a = i >= bpp ? row[i - bpp] : 0, b = prev ? prev[i] : 0,
			    c = prev && i >= bpp ? prev[i - bpp] : 0;
			int add = ft == 1   ? a
				  : ft == 2 ? b
				  : ft == 3 ? (a + b) / 2
				  : ft == 4 ? paeth(a, b, c)
					    : 0;
			row[i] = (unsigned char)(row[i] + add);
		}
		for (uint32_t x = 0; x < *w; x++)
			memcpy(rgb + ((size_t)y * *w + x) * 3, row + (size_t)x * bpp, 3);
	}
	free(raw);
	return rgb;
}
#endif

/* A real browser draws the page: not blank, plots down the page. */
static void test_browser_renders(void **state)
{
	(void)state;
	if (access("/usr/bin/chromium", X_OK) != 0) {
		print_message("chromium not found (Debian: apt-get install chromium): browser "
			      "check skipped\n");
		skip();
	}
	char dir[64];
	test_tmpdir(dir, sizeof dir, "html");
	struct cmd_result r;
	run_cmd(&r,
		"'%s' report c13-bench-serve --set workload.num_prompts=80 --out '%s/run.html' && "
		"timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic "
		"--no-first-run "
		"--disable-background-networking --disable-component-update --disable-sync "
		"--user-data-dir='%s/profile' --screenshot='%s/run.png' --window-size=1200,2600 "
		"'file://%s/run.html'",
		SERVESIM_BIN, dir, dir, dir, dir);
	if (r.status != 0)
		fail_msg("chromium: exit %d: %s", r.status, r.err);
	cmd_result_free(&r);
	char path[512];
	snprintf(path, sizeof path, "%s/run.png", dir);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	unsigned char *png = malloc(16 << 20);
	size_t len = fread(png, 1, 16 << 20, f);
	fclose(f);
	assert_true(len > 8 && !memcmp(png, "\x89PNG", 4));
#ifdef HAVE_ZLIB
	uint32_t w = 0, h = 0;
	unsigned char *rgb = png_rgb(png, len, &w, &h);
	assert_int_equal(w, 1200);
	assert_int_equal(h, 2600);
	/* Not blank: text, tables and plots ink more than 2% of the page. */
	size_t ink = 0, bands = 0;
	size_t colour_in_band[2600 / 200 + 1] = { 0 };
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			const unsigned char *p = rgb + ((size_t)y * w + x) * 3;
			int mx = p[0] > p[1] ? (p[0] > p[2] ? p[0] : p[2])
					     : (p[1] > p[2] ? p[1] : p[2]);
			int mn = p[0] < p[1] ? (p[0] < p[2] ? p[0] : p[2])
					     : (p[1] < p[2] ? p[1] : p[2]);
			ink += mx < 200;
			/* Saturated colour (the plots' lines, marks and bars), away
			 * from the answer box's left border. */
			if (mx - mn > 90 && x > 80)
				colour_in_band[y / 200]++;
		}
	for (size_t b = 0; b < sizeof colour_in_band / sizeof *colour_in_band; b++)
		bands += colour_in_band[b] > 150;
	print_message(
		"browser: %zu of %u pixels inked, coloured plot lines in %zu bands of 200 px\n",
		ink, w * h, bands);
	assert_true(ink > (size_t)w * h / 50);
	/* Five plots in three rows of about 330 px: colour in at least 4 bands. */
	assert_true(bands >= 4);
	free(rgb);
#else
	print_message("built without zlib: the screenshot is checked as a PNG only\n");
	assert_true(len > 20000); /* a blank page compresses to a few kB */
#endif
	free(png);
	test_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svg_escapes_text),
		cmocka_unit_test(test_log_axis),
		cmocka_unit_test(test_linear_labels_never_overlap),
		cmocka_unit_test(test_run_report),
		cmocka_unit_test(test_run_report_thins_the_cdfs),
		cmocka_unit_test(test_doc_reports),
		cmocka_unit_test(test_accuracy_from_data),
		cmocka_unit_test(test_browser_renders),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
