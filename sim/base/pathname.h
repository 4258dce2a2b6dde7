/*
 * pathname: the parts of a file path, read from the string alone (no file
 * system call): the name after the last '/', and the folder before it.
 * The one home for what calibrate, the run readers, plot, the page
 * writers, wholefile and the catalog each wrote for themselves.
 */
#ifndef SERVESIM_PATHNAME_H
#define SERVESIM_PATHNAME_H

#include <stddef.h>

/* The file name of path: what follows its last '/', path itself without
 * one, "" for NULL (a subtitle or a page shows no folder of the machine a
 * result was made on). Borrowed: it points into path. Cannot fail. */
const char *pathname_base(const char *path);

/* The folder path is in, into out: "." without a '/', "/" for a file at
 * the root ("/x"), else what precedes the last '/'. Cut to cap - 1 bytes
 * (callers size out as their paths). Cannot fail. */
void pathname_parent(const char *path, char *out, size_t cap);

#endif
