#define _GNU_SOURCE   /* strcasestr */
#include "modelname.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog.h"
#include "xalloc.h"

static bool set_path(struct modelname *out, const char *a, const char *b)
{
	int n = snprintf(out->path, sizeof out->path, "%s%s", a, b);
	return n >= 0 && (size_t)n < sizeof out->path && catalog_is_file(out->path);
}

/* The base name of a folder path (without trailing slashes), into out. */
static void folder_id(const char *dir, char *out, size_t cap)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", dir);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	const char *base = strrchr(buf, '/');
	snprintf(out, cap, "%s", base ? base + 1 : buf);
}

/* A folder's config.json, else its only .gguf file, else (quant given,
 * as llama.cpp's -hf ORG/NAME:Q4_K_M) the .gguf whose name holds quant. */
static bool from_folder_quant(const char *dir, const char *quant, struct modelname *out);

static bool from_folder(const char *dir, struct modelname *out)
{
	return from_folder_quant(dir, NULL, out);
}

static bool from_folder_quant(const char *dir, const char *quant, struct modelname *out)
{
	if (!quant && set_path(out, dir, "/config.json"))
		return true;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	char found[1024] = "";
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (len > 5 && !strcasecmp(de->d_name + len - 5, ".gguf") && len < sizeof found &&
		    (!quant || strcasestr(de->d_name, quant))) {
			snprintf(found, sizeof found, "/%s", de->d_name);
			n++;
		}
	}
	closedir(d);
	return n == 1 && set_path(out, dir, found);
}

/* The Hugging Face hub cache folder, into out (huggingface_hub's
 * constants.py: HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub). */
static void hf_cache_dir(char *out, size_t cap)
{
	const char *v;
	if ((v = getenv("HF_HUB_CACHE")) && *v)
		snprintf(out, cap, "%s", v);
	else if ((v = getenv("HF_HOME")) && *v)
		snprintf(out, cap, "%s/hub", v);
	else if ((v = getenv("XDG_CACHE_HOME")) && *v)
		snprintf(out, cap, "%s/huggingface/hub", v);
	else
		snprintf(out, cap, "%s/.cache/huggingface/hub", getenv("HOME") ? getenv("HOME") : "");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ORG/NAME in the cache: the snapshot refs/main names, else the first
 * snapshot (by name) holding a config.json or one .gguf. */
static bool from_hf_cache(const char *name, const char *quant, const char *cache, struct modelname *out)
{
	const char *slash = strchr(name, '/');
	if (!slash || strchr(slash + 1, '/') || slash == name || !slash[1])
		return false;
	char repo[4096], snap[4096 + 600];
	int len = snprintf(repo, sizeof repo, "%s/models--%.*s--%s", cache, (int)(slash - name), name,
			 slash + 1);
	if (len < 0 || (size_t)len >= sizeof repo)
		return false;   /* a path longer than any file system takes */
	char ref[128] = "";
	snprintf(snap, sizeof snap, "%s/refs/main", repo);
	FILE *f = fopen(snap, "r");
	if (f) {
		if (!fgets(ref, sizeof ref, f))
			ref[0] = '\0';
		fclose(f);
		ref[strcspn(ref, " \r\n")] = '\0';
		snprintf(snap, sizeof snap, "%s/snapshots/%s", repo, ref);
		if (ref[0] && !strchr(ref, '/') && from_folder_quant(snap, quant, out))
			return true;
	}
	snprintf(snap, sizeof snap, "%s/snapshots", repo);
	DIR *d = opendir(snap);
	if (!d)
		return false;
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			xgrow(&names, &cap, n + 1, sizeof *names);
			names[n++] = xstrdup(de->d_name);
		}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	bool ok = false;
	for (size_t i = 0; i < n; i++) {
		char dir[4096 + 900];
		snprintf(dir, sizeof dir, "%s/snapshots/%s", repo, names[i]);
		if (!ok && from_folder_quant(dir, quant, out))
			ok = true;
		free(names[i]);
	}
	free(names);
	return ok;
}

/* Ollama's library (ollama.com/library): family, size tag, servesim id.
 * The first row of a family is its `latest`. */
static const struct {
	const char *family, *size, *id;
} ollama_tags[] = {
	{ "codellama", "34b", "codellama-34b" },
	{ "deepseek-v3", "671b", "deepseek-v3" },
	{ "falcon", "7b", "falcon-7b" },
	{ "gemma3", "1b", "gemma-3-1b" },
	{ "gemma2", "9b", "gemma-2-9b" },
	{ "gpt-oss", "20b", "gpt-oss-20b" }, { "gpt-oss", "120b", "gpt-oss-120b" },
	{ "llama2", "7b", "llama-2-7b" }, { "llama2", "70b", "llama-2-70b" },
	{ "llama3.1", "8b", "llama-3.1-8b" }, { "llama3.1", "70b", "llama-3.1-70b" },
	{ "llama3.1", "405b", "llama-3.1-405b" },
	{ "llama3.2", "3b", "llama-3.2-3b" }, { "llama3.2", "1b", "llama-3.2-1b" },
	{ "llama4", "scout", "llama-4-scout-17b-16e" },
	{ "mistral", "7b", "mistral-7b-v0.3" },
	{ "mistral-nemo", "12b", "mistral-nemo-12b" },
	{ "mixtral", "8x7b", "mixtral-8x7b" }, { "mixtral", "8x22b", "mixtral-8x22b" },
	{ "phi3", "mini", "phi-3-mini-4k-instruct" }, { "phi3", "3.8b", "phi-3-mini-4k-instruct" },
	{ "qwen2.5", "7b", "qwen2.5-7b-instruct" }, { "qwen2.5", "72b", "qwen2.5-72b" },
	{ "qwen3", "14b", "qwen3-14b" }, { "qwen3", "30b", "qwen3-30b-a3b" },
	{ "yi", "34b", "yi-34b" },
};

/* Quantization suffixes of Ollama tags (…-q8_0) → servesim precisions. */
static const struct {
	const char *suffix, *weights;
} ollama_quants[] = {
	{ "q4_0", "q4_0" }, { "q4_k_m", "q4_k_m" }, { "q4_k_s", "q4_k_m" }, { "q5_k_m", "q5_k_m" },
	{ "q5_k_s", "q5_k_m" }, { "q6_k", "q6_k" }, { "q8_0", "q8_0" }, { "fp16", "f16" }, { "bf16", "bf16" },
	{ "mxfp4", "mxfp4" },
};

/* 1 resolved, 0 not an Ollama family, -1 a known family with an unknown
 * size or quantization (e says). */
static int from_ollama(const char *name, struct modelname *out, struct err *e)
{
	char family[128], tag[128] = "latest";
	const char *colon = strchr(name, ':');
	const char *lib = strncmp(name, "library/", 8) ? name : name + 8;
	if (colon) {
		snprintf(family, sizeof family, "%.*s", (int)(colon - lib), lib);
		snprintf(tag, sizeof tag, "%s", colon + 1);
	} else {
		snprintf(family, sizeof family, "%s", lib);
	}
	for (char *p = tag; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	int first = -1;
	for (size_t i = 0; i < sizeof ollama_tags / sizeof *ollama_tags; i++)
		if (!strcmp(ollama_tags[i].family, family) && first < 0)
			first = (int)i;
	if (first < 0)
		return 0;
	/* The tag: SIZE[-variant…][-QUANT], or latest, or a bare quantization. */
	char size[128];
	snprintf(size, sizeof size, "%s", tag);
	char *dash = strchr(size, '-');
	if (dash)
		*dash = '\0';
	const char *weights = strcmp(family, "gpt-oss") ? "q4_k_m" : "mxfp4";  /* the library's defaults */
	const char *q = strrchr(tag, '-');
	if (q) {
		size_t k;
		for (k = 0; k < sizeof ollama_quants / sizeof *ollama_quants; k++)
			if (!strcmp(q + 1, ollama_quants[k].suffix))
				break;
		if (k == sizeof ollama_quants / sizeof *ollama_quants && strstr(q + 1, "q") == q + 1)
			return err_set(e, "ollama tag '%s': quantization '%s' is not among servesim's (q4_0, q4_k_m, q5_k_m, q6_k, q8_0, fp16, bf16)",
				       name, q + 1);
		if (k < sizeof ollama_quants / sizeof *ollama_quants)
			weights = ollama_quants[k].weights;
	}
	int row = -1;
	char sizes[256] = "";
	for (size_t i = (size_t)first; i < sizeof ollama_tags / sizeof *ollama_tags &&
				       !strcmp(ollama_tags[i].family, family); i++) {
		if (!strcmp(size, "latest") ? (int)i == first : !strcmp(size, ollama_tags[i].size))
			row = (int)i;
		size_t used = strlen(sizes);
		snprintf(sizes + used, sizeof sizes - used, "%s%s", used ? ", " : "", ollama_tags[i].size);
	}
	if (row < 0)
		return err_set(e, "ollama tag '%s': servesim knows %s in sizes %s", name, family, sizes);
	char path[4096];
	if (catalog_resolve_id(CATALOG_MODELS, ollama_tags[row].id, path, sizeof path, e))
		return -1;
	snprintf(out->path, sizeof out->path, "%s", path);
	snprintf(out->id, sizeof out->id, "%.40s:%.20s", family, ollama_tags[row].size);
	snprintf(out->weights, sizeof out->weights, "%s", weights);
	out->how = "ollama";
	return 1;
}

int modelname_resolve(const char *name, struct modelname *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	if (catalog_is_file(name)) {
		snprintf(out->path, sizeof out->path, "%s", name);
		out->how = "file";
		const char *base = strrchr(name, '/');
		if (base && !strcmp(base + 1, "config.json")) {
			char dir[4096];
			snprintf(dir, sizeof dir, "%.*s", (int)(base - name), name);
			folder_id(dir, out->id, sizeof out->id);
		}
		return 0;
	}
	if (catalog_is_dir(name)) {
		if (!from_folder(name, out))
			return err_set(e, "%s: a folder without config.json (or one .gguf file)", name);
		folder_id(name, out->id, sizeof out->id);
		out->how = "folder";
		return 0;
	}
	struct err catalog_err;
	if (catalog_resolve_id(CATALOG_MODELS, name, out->path, sizeof out->path, &catalog_err) == 0) {
		out->how = "catalog";
		return 0;
	}
	int r = from_ollama(name, out, e);
	if (r)
		return r > 0 ? 0 : -1;
	/* ORG/NAME, or ORG/NAME:QUANT for one GGUF of a GGUF repository
	 * (llama.cpp -hf, Ollama hf.co/ORG/NAME:QUANT). */
	char repo[1024], quant[64] = "";
	const char *hf = strncmp(name, "hf.co/", 6) ? name : name + 6;
	snprintf(repo, sizeof repo, "%s", hf);
	char *colon = strchr(repo, ':');
	if (colon) {
		snprintf(quant, sizeof quant, "%s", colon + 1);
		*colon = '\0';
	}
	char cache[4096];
	hf_cache_dir(cache, sizeof cache);
	if (from_hf_cache(repo, quant[0] ? quant : NULL, cache, out)) {
		const char *slash = strchr(repo, '/');
		snprintf(out->id, sizeof out->id, "%s", slash + 1);
		out->how = "hf-cache";
		return 0;
	}
	if (strchr(name, '/'))
		return err_set(e, "%s; nor in the Hugging Face cache %s (models--ORG--NAME/snapshots/*/config.json)",
			       catalog_err.msg, cache);
	return err_set(e, "%s", catalog_err.msg);
}
