/*
 * wholefile: outputs written whole or not at all (DESIGN "Errors").
 *
 * One file: wholefile_open writes to a temporary name beside the
 * destination (".NAME.PID.tmp" in the same folder, so the rename stays on
 * one file system); wholefile_commit closes it and renames it into place.
 * On any failure the temporary file is removed and the destination is
 * untouched. A destination that is a device or a FIFO (`--out /dev/stdout`)
 * is written in place: renamed onto, it would become a file. A symbolic
 * link is followed: its target is replaced and the link stays.
 *
 * A folder of files (wholedir, `run --out DIR`): when DIR does not exist,
 * the files are written in a temporary sibling (".DIR.PID.tmp") that is
 * renamed to DIR once every file is whole, so DIR appears complete or not at
 * all. When DIR exists (a previous run's, perhaps holding the user's own
 * files), each file is staged as a temporary beside its destination and all
 * are renamed into place only after the last is written: a failure midway
 * leaves DIR as it was. Either way the parents are created first, as
 * `mkdir -p` does (wholefile_mkdirs).
 *
 * A folder filled by other writers too (wholedir_stage, `--plot DIR`,
 * where gnuplot writes the pictures): everything is written in a fresh
 * temporary sibling (".DIR.PID.tmp"), whose path the caller writes to as
 * the folder; the commit renames it to DIR when DIR does not exist (DIR
 * appears complete or not at all), else renames each of its files into
 * DIR, after the last was written. A failure before leaves DIR as it was.
 */
#ifndef SERVESIM_WHOLEFILE_H
#define SERVESIM_WHOLEFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

/* Opens the temporary file for path. Returns NULL with e set (the
 * temporary's name and the reason) when it cannot be created. */
FILE *wholefile_open(const char *path, struct err *e);

/* Closes f (from wholefile_open(path)) and renames it to path. Returns 0,
 * or -1 with e set after a write, close or rename error; then nothing of it
 * is left. */
int wholefile_commit(FILE *f, const char *path, struct err *e);

/* Closes f and removes the temporary file: nothing is written. */
void wholefile_abort(FILE *f, const char *path);

/* Creates an empty scratch file of servesim's own (a gnuplot error log, a
 * candidate profile) in $TMPDIR, or /tmp when unset: "servesim-STEM-XXXXXX"
 * then suffix (may be ""), its name in out. Returns 0, or -1 with e naming
 * the pattern and the reason. The caller unlinks it. */
int wholefile_temp(char *out, size_t cap, const char *stem, const char *suffix, struct err *e);

/* Creates dir and every missing ancestor (mkdir -p). Returns 0, or -1 with
 * e naming the folder that could not be made and why. */
int wholefile_mkdirs(const char *dir, struct err *e);

#define WHOLEDIR_MAX_FILES 16

/* A folder being written; a plain record the functions below fill. */
struct wholedir {
	char dir[PATH_MAX];           /* the destination */
	char stage[PATH_MAX];         /* where files are written now */
	bool fresh;                   /* dir did not exist: stage is its sibling */
	int n;                        /* files written so far */
	char names[WHOLEDIR_MAX_FILES][64];
};

/* Starts writing folder dir (its parents created). Returns 0, or -1 with e
 * when it cannot be prepared; then nothing is left behind. */
int wholedir_open(struct wholedir *d, const char *dir, struct err *e);

/* Opens file name (no slash) of the folder for writing. Returns NULL with e
 * set when it cannot. Close it with wholedir_close before the next one. */
FILE *wholedir_file(struct wholedir *d, const char *name, struct err *e);

/* Closes the file last opened. Returns 0, or -1 with e after a write or
 * close error (the caller then calls wholedir_abort). */
int wholedir_close(struct wholedir *d, FILE *f, struct err *e);

/* Puts every file in place. Returns 0, or -1 with e; on failure the
 * staged files are removed (wholedir_abort need not be called). */
int wholedir_commit(struct wholedir *d, struct err *e);

/* Removes what was staged: the destination is as it was. */
void wholedir_abort(struct wholedir *d);

/* Starts folder dir as a stage (see the header): its parents created, the
 * empty stage made, its path in d->stage. Returns 0, or -1 with e when it
 * cannot be prepared; then nothing is left behind. */
int wholedir_stage(struct wholedir *d, const char *dir, struct err *e);

/* Puts every file of the stage in place and removes the stage. Returns 0,
 * or -1 with e; on failure the stage is removed (and DIR keeps what it
 * had, save files already renamed when the failure hit midway). */
int wholedir_stage_commit(struct wholedir *d, struct err *e);

/* Removes the stage and its files: the destination is as it was. */
void wholedir_stage_abort(struct wholedir *d);

#endif
