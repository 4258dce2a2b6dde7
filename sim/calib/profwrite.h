/*
 * profwrite: writes a hardware profile whose [efficiency] section holds
 * given values; everything else is the base profile's text, so the new
 * file keeps the datasheet figures and their sources as they were.
 *
 * The output is the base file line for line, minus its [efficiency]
 * section, then comment lines and a fresh [efficiency] section: `source =
 * …`, every key of effparam's table, and any line of the base's section
 * whose key effparam does not know (kept as it was). Lines stay under the
 * 200 characters the INI reader accepts (longer comments are cut). The
 * file is written to a temporary name beside it and renamed, then loaded
 * back with hw_load as a check: it is whole and valid, or absent.
 */
#ifndef SERVESIM_PROFWRITE_H
#define SERVESIM_PROFWRITE_H

#include <stdbool.h>
#include <stddef.h>

#include "err.h"
#include "hwprofile.h"

/* Writes out_path from the base profile at base_path with eff's values.
 * source becomes the section's `source` (cut to fit one line); comments
 * (may be NULL when n_comments is 0) become `; ` lines above it. Returns 0,
 * or -1 with e set and no file at out_path. */
int profwrite_save(const char *out_path, const char *base_path, const struct hw_efficiency *eff,
		   const char *source, const char *const *comments, size_t n_comments, struct err *e);

/* The same, writing only the [efficiency] keys whose write[id] is true
 * (write NULL: all), so a key left out keeps meaning "the class's (or the
 * engine's) default" when the profile is loaded. */
int profwrite_save_keys(const char *out_path, const char *base_path, const struct hw_efficiency *eff,
			const bool *write, const char *source, const char *const *comments,
			size_t n_comments, struct err *e);

/* "YYYY-MM-DD" (UTC) of now, or of $SOURCE_DATE_EPOCH when set, so tests
 * and reproducible builds get a fixed date. out must hold 11 bytes. */
void profwrite_date(char *out, size_t cap);

#endif
