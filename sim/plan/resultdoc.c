#include "resultdoc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comparedoc.h"
#include "jsonfile.h"
#include "num.h"
#include "outfmt.h"
#include "plandoc.h"
#include "sweepdoc.h"
#include "xalloc.h"

static const struct resultdoc_kind *const kinds[] = {
	&sweepdoc_kind,
	&plandoc_kind,
	&comparedoc_kind,
};

int resultdoc_shard_parse(struct shard *sh, const char *s, struct err *e)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	int64_t k, n;
	if (!slash || (size_t)(slash - s) >= sizeof buf)
		return err_set(e, "--shard: expected K/N with 1 <= K <= N (e.g. 2/8), got '%s'", s);
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	if (num_parse_int64(buf, &k) || num_parse_int64(slash + 1, &n) || n < 1 || n > 1000000 ||
	    k < 1 || k > n)
		return err_set(e, "--shard: expected K/N with 1 <= K <= N (e.g. 2/8), got '%s'", s);
	sh->k = (int)k;
	sh->n = (int)n;
	return 0;
}

bool resultdoc_in_shard(const struct shard *sh, size_t i)
{
	return i % (size_t)sh->n == (size_t)(sh->k - 1);
}

json_t *resultdoc_new(const struct resultdoc_kind *k)
{
	json_t *doc = json_object();
	json_object_set_new(doc, "kind", json_string(k->name));
	json_object_set_new(doc, "servesim", json_pack("{s:s}", "version", SERVESIM_VERSION));
	return doc;
}

void resultdoc_close(json_t *doc, const struct resultdoc_kind *k, size_t total,
		     const struct shard *sh, json_t *items)
{
	json_object_set_new(doc, k->total, json_integer((json_int_t)total));
	if (sh->n > 1) {
		char s[48];
		snprintf(s, sizeof s, "%d/%d", sh->k, sh->n);
		json_object_set_new(doc, "shard", json_string(s));
	}
	json_object_set_new(doc, k->items, items);
	if (sh->n == 1 && k->finish)
		k->finish(doc);
}

const struct resultdoc_kind *resultdoc_kind_of(json_t *doc, struct err *e)
{
	const char *name = json_is_object(doc) ? resultdoc_str(doc, "kind") : NULL;
	for (size_t i = 0; name && i < sizeof kinds / sizeof *kinds; i++)
		if (!strcmp(name, kinds[i]->name) && json_is_array(json_object_get(doc, kinds[i]->items)))
			return kinds[i];
	err_set(e, "expected the JSON of servesim sweep, plan or compare (with \"kind\"), got %s",
		name ? name : "a document without \"kind\"");
	return NULL;
}

int resultdoc_print(FILE *f, json_t *doc, int fmt)
{
	const struct resultdoc_kind *k = resultdoc_kind_of(doc, NULL);
	if (fmt == FMT_JSON) {
		if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(12)))
			return -1;
		fputc('\n', f);
	} else if (fmt == FMT_CSV) {
		k->csv(f, doc);
	} else {
		k->text(f, doc);
	}
	return ferror(f) || fflush(f) ? -1 : 0;
}

json_t *resultdoc_read_json(const char *path, struct err *e)
{
	return jsonfile_load(path, 0, e);
}

json_t *resultdoc_load(const char *path, struct err *e)
{
	json_t *doc = resultdoc_read_json(path, e);
	if (!doc)
		return NULL;
	const struct resultdoc_kind *k = resultdoc_kind_of(doc, e);
	if (!k || docschema_check(doc, k->schema, e)) {
		err_prefix(e, "%s", path);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* The shard a document says it is (1/1 when it says nothing). */
static int shard_of(json_t *doc, const char *name, struct shard *sh, struct err *e)
{
	const char *s = resultdoc_str(doc, "shard");
	sh->k = sh->n = 1;
	if (s && resultdoc_shard_parse(sh, s, e))
		return err_prefix(e, "%s: \"shard\"", name);
	return 0;
}

/* The header: the document without its shard, items and total. */
static json_t *header_of(json_t *doc, const struct resultdoc_kind *k)
{
	json_t *h = json_deep_copy(doc);
	json_object_del(h, "shard");
	json_object_del(h, k->items);
	json_object_del(h, k->total);
	return h;
}

static int by_index(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t i = json_integer_value(json_array_get(x, 0)), j = json_integer_value(json_array_get(y, 0));
	return (i > j) - (i < j);
}

json_t *resultdoc_merge(json_t *const *docs, const char *const *names, size_t n, struct err *e)
{
	const struct resultdoc_kind *k = resultdoc_kind_of(docs[0], e);
	if (!k)
		return NULL;
	struct shard sh0;
	if (shard_of(docs[0], names[0], &sh0, e))
		return NULL;
	json_t *head = header_of(docs[0], k);
	json_int_t total = json_integer_value(json_object_get(docs[0], k->total));
	bool *seen = xcalloc((size_t)sh0.n, sizeof *seen);
	json_t *pairs = json_array();   /* [index, item] */
	json_t *out = NULL;
	if (sh0.n == 1 && n > 1) {
		err_set(e, "%s: a whole result, not a shard; expected the --shard K/N outputs of one run",
			names[0]);
		goto done;
	}
	if ((size_t)sh0.n != n) {
		err_set(e, "%s: shard of %d, but %zu file%s given; expected all %d shards, each once",
			names[0], sh0.n, n, n == 1 ? "" : "s", sh0.n);
		goto done;
	}
	for (size_t d = 0; d < n; d++) {
		struct shard sh;
		const struct resultdoc_kind *kd = resultdoc_kind_of(docs[d], e);
		if (!kd || kd != k) {
			if (kd)
				err_set(e, "expected the JSON of servesim %s like %s, got %s", k->name, names[0],
					kd->name);
			err_prefix(e, "%s", names[d]);
			goto done;
		}
		if (shard_of(docs[d], names[d], &sh, e))
			goto done;
		if (sh.n != sh0.n) {
			err_set(e, "%s: shard %d/%d does not belong with %s (shard of %d)", names[d], sh.k, sh.n,
				names[0], sh0.n);
			goto done;
		}
		if (seen[sh.k - 1]) {
			err_set(e, "%s: shard %d/%d given twice", names[d], sh.k, sh.n);
			goto done;
		}
		seen[sh.k - 1] = true;
		json_t *h = header_of(docs[d], k);
		bool same = json_equal(h, head) &&
			    json_integer_value(json_object_get(docs[d], k->total)) == total;
		json_decref(h);
		if (!same) {
			err_set(e, "%s: not a shard of the same run as %s (scenario, overrides, grid or options differ)",
				names[d], names[0]);
			goto done;
		}
		size_t i;
		json_t *item;
		json_array_foreach(json_object_get(docs[d], k->items), i, item) {
			json_t *ix = json_object_get(item, k->index);
			json_int_t v = json_integer_value(ix);
			if (!json_is_integer(ix) || v < 0 || v >= total ||
			    !resultdoc_in_shard(&sh, (size_t)v)) {
				err_set(e, "%s: %s[%zu]: expected \"%s\" an index of shard %d/%d below %lld", names[d],
					k->items, i, k->index, sh.k, sh.n, (long long)total);
				goto done;
			}
			json_array_append_new(pairs, json_pack("[IO]", v, item));
		}
	}
	size_t np = json_array_size(pairs);
	json_t **v = xcalloc(np ? np : 1, sizeof *v);
	for (size_t i = 0; i < np; i++)
		v[i] = json_array_get(pairs, i);
	qsort(v, np, sizeof *v, by_index);
	json_t *items = json_array();
	bool ok = np == (size_t)total;
	for (size_t i = 0; ok && i < np; i++) {
		ok = json_integer_value(json_array_get(v[i], 0)) == (json_int_t)i;
		json_array_append(items, json_array_get(v[i], 1));
	}
	free(v);
	if (!ok) {
		json_decref(items);
		err_set(e, "the shards hold %zu %s with duplicates or gaps; expected %lld, each once", np,
			k->items, (long long)total);
		goto done;
	}
	out = head;
	head = NULL;
	resultdoc_close(out, k, (size_t)total, &(struct shard){ 1, 1 }, items);
done:
	json_decref(head);
	json_decref(pairs);
	free(seen);
	return out;
}

json_t *resultdoc_real(double v, int decimals)
{
	return outfmt_real(v, decimals);
}

void resultdoc_put(json_t *o, const char *key, double v, int decimals)
{
	json_object_set_new(o, key, resultdoc_real(v, decimals));
}

void resultdoc_header(json_t *doc, const char *scenario, const struct inidoc *overrides)
{
	json_object_set_new(doc, "scenario", json_string(scenario ? scenario : "built-in default"));
	json_t *set = json_array();
	for (size_t k = 0; overrides && k < overrides->len; k++) {
		const struct inidoc_entry *o = &overrides->entries[k];
		json_array_append_new(set, json_sprintf("%s.%s=%s", o->section, o->key, o->value));
	}
	json_object_set_new(doc, "set", set);
}

double resultdoc_num(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *resultdoc_str(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

void resultdoc_cell(FILE *f, double v, int decimals, int w)
{
	if (isnan(v))
		fprintf(f, " %*s", w, "-");
	else
		fprintf(f, " %*.*f", w, decimals, v);
}

void resultdoc_csv_str(FILE *f, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void resultdoc_csv_num(FILE *f, double v, int decimals)
{
	if (!isnan(v))
		fprintf(f, "%.*f", decimals, v);
}

json_t *resultdoc_ranked(json_t *items, json_t *ranking, const char *index, size_t pos)
{
	if (!ranking)
		return json_array_get(items, pos);
	json_int_t want = json_integer_value(json_array_get(ranking, pos));
	size_t j;
	json_t *it;
	json_array_foreach(items, j, it)
		if ((json_int_t)resultdoc_num(it, index) == want)
			return it;
	return json_array_get(items, pos);   /* a ranking that names no item */
}
