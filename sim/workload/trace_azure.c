/*
 * trace_azure: the Azure LLM inference trace (Azure/AzurePublicDataset,
 * AzureLLMInferenceTrace_*.csv) for trace.h: wall-clock TIMESTAMP,
 * ContextTokens, GeneratedTokens, read by trace_csv.c's layout reader.
 */
#include "trace_int.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>

/* Parses a 0-padded decimal of exactly n digits. */
static bool fixed_digits(const char **s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return false;
		v = v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	*out = v;
	return true;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard
 * Hinnant's days_from_civil), so that no time zone or mktime is involved. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

static int days_in_month(int y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : days[m - 1];
}

/* "YYYY-MM-DD HH:MM:SS[.f…]" with up to 9 fractional digits, a 'T' allowed
 * for the blank, and an optional "Z" or "±HH:MM" offset (the 2024 Azure
 * traces write "+00:00"). Gives UTC seconds since 1970 and nanoseconds. */
static bool parse_wall_clock(const char *s, int64_t *sec, int64_t *nsec)
{
	int y, mo, d, h, mi, se, frac = 0;
	while (isspace((unsigned char)*s))
		s++;
	if (!fixed_digits(&s, 4, &y) || *s++ != '-' || !fixed_digits(&s, 2, &mo) ||
	    *s++ != '-' || !fixed_digits(&s, 2, &d))
		return false;
	if (*s != ' ' && *s != 'T')
		return false;
	s++;
	if (!fixed_digits(&s, 2, &h) || *s++ != ':' || !fixed_digits(&s, 2, &mi) ||
	    *s++ != ':' || !fixed_digits(&s, 2, &se))
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 ||
	    se > 59)
		return false;
	if (*s == '.') {
		int n = 0;
		for (s++; isdigit((unsigned char)*s); s++, n++)
			if (n < 9)
				frac = frac * 10 + (*s - '0');
		if (n == 0 || n > 9)
			return false;
		for (; n < 9; n++)
			frac *= 10;
	}
	int offset_s = 0;
	if (*s == 'Z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		int sign = *s++ == '-' ? -1 : 1, oh, om;
		if (!fixed_digits(&s, 2, &oh) || *s++ != ':' || !fixed_digits(&s, 2, &om) ||
		    oh > 23 || om > 59)
			return false;
		offset_s = sign * (oh * 3600 + om * 60);
	}
	while (isspace((unsigned char)*s))
		s++;
	if (*s)
		return false;
	*sec = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
	*nsec = frac;
	return true;
}

/* Azure: nanoseconds after the first row, kept integral until the end so
 * that 7-digit fractions survive (seconds since 1970 as a double would keep
 * only about 0.2 µs). */
static int azure_time(struct reader *rd, const char *key, const char *text, double *raw)
{
	int64_t s, ns;
	if (!parse_wall_clock(text, &s, &ns))
		return trace_fail_at(rd, rd->lineno,
			       "%s: expected a time 'YYYY-MM-DD HH:MM:SS[.fraction]', got '%.*s'",
			       key, SHOWN_CHARS, text);
	if (!rd->have_t0) {
		rd->have_t0 = true;
		rd->t0_s = s;
		rd->t0_ns = ns;
	}
	int64_t ds = s - rd->t0_s;
	/* 9e9 s is about 285 years: beyond that the nanoseconds overflow. */
	if (ds > 9000000000LL || ds < -9000000000LL)
		return trace_fail_at(rd, rd->lineno, "%s: '%.*s' is centuries from the first row",
			       key, SHOWN_CHARS, text);
	*raw = (double)(ds * NS_PER_S + (ns - rd->t0_ns));
	return 0;
}

static const struct csv_layout azure_layout = {
	{ "TIMESTAMP", "ContextTokens", "GeneratedTokens" }, azure_time, 1e9, false,
};

int trace_load_azure(struct reader *rd)
{
	return trace_load_csv_layout(rd, &azure_layout);
}
