/*
 * cli: the verbs of the servesim command and what they share.
 *
 * Each verb is `int cmd_<verb>(int argc, char **argv)` returning the exit
 * status: 0 success, 1 a failure of the machine (cannot write a file), 2 bad
 * input or misuse. `--help` prints to stdout and exits 0; misuse prints to
 * stderr and exits 2 (jq's convention). Options are parsed with getopt_long
 * from one table per verb.
 */
#ifndef SERVESIM_CLI_H
#define SERVESIM_CLI_H

#include <jansson.h>
#include <stdio.h>

#include "err.h"
#include "outfmt.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_BAD_INPUT = 2 };


int cmd_ceiling(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_vllm_flags(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_keys(int argc, char **argv);

/* Prints "servesim VERB: message" to stderr and returns EXIT_BAD_INPUT. */
int cli_fail(const char *verb, const struct err *e);
int cli_misuse(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The option getopt_long just refused ('?'), named in one cli_misuse line:
 * unknown, given a value it does not take, or missing its value (main
 * turns getopt's own messages off). Returns EXIT_BAD_INPUT. */
int cli_bad_option(const char *verb, char **argv);

/* Parses a --format value among the allowed ones (a mask of 1 << FMT_*).
 * Returns 0 or -1 with e saying what was expected. */
int cli_parse_format(const char *s, unsigned allowed, enum out_format *out, struct err *e);

/* Writes j to stdout as indented JSON with a final newline and drops the
 * reference. An object gets servesim.version (added to its "servesim"
 * object, or as one). Returns EXIT_OK or EXIT_FAIL. */
int cli_print_json(json_t *j);

/* cli_print_json of a run's report_json: the --save-detailed arrays res
 * streamed (report.h: report_json_dumpf) go where report_json marked them. */
struct run_result;
int cli_print_json_run(json_t *j, const struct run_result *res);

#endif
