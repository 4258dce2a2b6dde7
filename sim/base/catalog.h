/*
 * catalog: where servesim's data lives and how names become files.
 *
 * The data folders (models/, hardware_profiles/, scenarios/, plots/) are
 * found, in order: under $SERVESIM_DATA_DIR when set; under
 * <dir of the executable>/../share/servesim when installed; in the source
 * tree the binary was built from. A name is either a path to an existing
 * file or an id: the file name without its extension, matched without
 * regard to case (`h100-sxm`, `llama-3.1-8b`). Models also accept a Hugging
 * Face id listed in models/aliases.ini (`meta-llama/Llama-3.1-8B-Instruct`).
 */
#ifndef SERVESIM_CATALOG_H
#define SERVESIM_CATALOG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

enum catalog_kind {
	CATALOG_MODELS,
	CATALOG_HARDWARE,
	CATALOG_SCENARIOS,
	CATALOG_PLOTS,
};

/* A buffer for catalog_dir. */
enum { CATALOG_DIR_MAX = PATH_MAX + 32 };

/* The folder for kind into buf (cap bytes; CATALOG_DIR_MAX holds any),
 * returning buf, or NULL when no data folder was found (or it does not
 * fit). Looked up at each call: getenv, a readlink and a few stats. */
const char *catalog_dir(enum catalog_kind kind, char *buf, size_t cap);

/* Resolves name to a file path in out. Returns 0, or -1 with e listing the
 * known ids when the name is neither a file nor a known id. Models take
 * every name modelname.h does (folders, the Hugging Face cache, Ollama
 * tags, .gguf files). */
int catalog_resolve(enum catalog_kind kind, const char *name, char *out,
		    size_t cap, struct err *e);

/* The same for files and ids of the data folders only (and aliases.ini). */
int catalog_resolve_id(enum catalog_kind kind, const char *name, char *out,
		       size_t cap, struct err *e);

/* The sorted ids of kind; *ids is the caller's (free each and the array).
 * Returns the count (0 when the folder is missing). */
size_t catalog_list(enum catalog_kind kind, char ***ids);

/* The folder of the running executable, in out. Returns 0, or -1 when it
 * cannot be read or does not fit. */
int catalog_exe_dir(char *out, size_t cap);

/* The executable file name on $PATH (as a shell finds it: the first
 * folder that holds it as a regular, executable file), its path in out.
 * Returns 0, or -1 when no folder of $PATH holds it (or $PATH is unset). */
int catalog_find_exe(const char *name, char *out, size_t cap);

/* Whether p names a regular file / a folder (stat follows links). */
bool catalog_is_file(const char *p);
bool catalog_is_dir(const char *p);

/* The id of a path: its base name without extension, in out. */
void catalog_id_of(const char *path, char *out, size_t cap);

#endif
