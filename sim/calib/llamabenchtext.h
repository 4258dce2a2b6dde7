/*
 * llamabenchtext: llama-bench's two text outputs besides CSV and JSON
 * (tools/llama-bench/llama-bench.cpp, markdown_printer and sql_printer),
 * turned into the CSV llamabench.h reads.
 *
 *   -o md (the default): a Markdown table, `| model | size | params |
 *   backend | ngl | test | t/s |` plus a column for each setting that
 *   differs from its default (n_ubatch, fa, …); test is pp512, tg128,
 *   pp512+tg128 or `pp512 @ d4096` (n_prompt, n_gen, n_depth), t/s is
 *   `avg_ts ± stddev_ts`. The table has no time: avg_ns is taken as
 *   1e9·(n_prompt + n_gen)/avg_ts, which is the mean time exactly only
 *   when the repetitions agree (avg_ts averages the rates, not the times;
 *   at llama-bench's usual stddev of 1% the two differ by about 0.01%).
 *   The table's last line, `build: <commit> (<number>)`, is ignored.
 *   -o sql: `CREATE TABLE IF NOT EXISTS test (…);` then one `INSERT INTO
 *   test (col, …) VALUES (…);` per test, strings in single quotes ('' for
 *   a quote): the CSV fields by name.
 *
 * Each CSV row keeps the line number of its source row.
 */
#ifndef SERVESIM_LLAMABENCHTEXT_H
#define SERVESIM_LLAMABENCHTEXT_H

#include <stdbool.h>

#include "err.h"

bool llamabenchtext_sniff_md(const char *text);
bool llamabenchtext_sniff_sql(const char *text);

/* The table as CSV with a header line (new string), or NULL with e naming
 * path, line and what was expected. */
char *llamabenchtext_md_to_csv(const char *text, const char *path, struct err *e);
char *llamabenchtext_sql_to_csv(const char *text, const char *path, struct err *e);

#endif
