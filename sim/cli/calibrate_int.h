/*
 * calibrate_int.h: what the files of `servesim calibrate` share:
 * cmd_calibrate.c (the verb, its help, `calibrate runs`) and
 * cmd_calibrate_probe.c (`calibrate fit` and `calibrate gpu`).
 */
#ifndef SERVESIM_CALIBRATE_INT_H
#define SERVESIM_CALIBRATE_INT_H

#include <stdbool.h>
#include <stdio.h>

#include "err.h"
#include "hwprofile.h"

void calib_help(FILE *f);                      /* the verb's usage and options */

/* An integer option in [lo, hi]; -1 with e naming the option otherwise. */
int calib_parse_int(const char *name, const char *s, long long lo, long long hi, long long *out,
		    struct err *e);

/* Each [efficiency] parameter before and after, "(kept)" for those not
 * fitted; stderr_after and bounded may be NULL. */
void calib_print_eff_change(FILE *f, const struct hw_efficiency *before, const struct hw_efficiency *after,
			    const bool *fitted, const double *stderr_after, const bool *bounded);

double calib_pct(double pred, double meas);    /* 100 (pred - meas) / meas; NAN when undefined */
void calib_put_pct(FILE *f, double v);         /* " +12.3%", or " -" for NAN */

/* Loads the base profile named by name (an id or a path) into hw, its path
 * into path. Returns 0, or -1 with e. */
int calib_load_base(const char *name, char *path, size_t cap, struct hw_profile *hw, struct err *e);

/* The subcommands of cmd_calibrate_probe.c; argv[0] is the subcommand. */
int calibrate_fit(int argc, char **argv);
int calibrate_gpu(int argc, char **argv);

#endif
