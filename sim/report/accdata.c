/*
 * accdata: the accuracy figures file (see accdata.h), read through the INI
 * adapter: the [summary] keys are one table; every other section is a
 * model, bound through the same model table under its own name.
 */
#include "accdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "xalloc.h"

#define S(field) offsetof(struct accdata, field)
#define M(field) offsetof(struct accdata_model, field)
#define REQ	 INI_REQUIRED

static const struct inidoc_key summary_keys[] = {
	{ "summary", "hardware", INI_STRING, S(hardware), REQ, 0, 0, "a hardware id", NULL },
	{ "summary", "vllm_version", INI_STRING, S(vllm_version), REQ, 0, 0, "a vLLM version",
	  NULL },
	{ "summary", "runs", INI_INT, S(runs), REQ, 1, 1e6, "a run count >= 1", NULL },
	{ "summary", "models", INI_INT, S(models), REQ, 1, 1e6, "a model count >= 1", NULL },
	{ "summary", "tp_min", INI_INT, S(tp_min), REQ, 1, 1024, "a tensor-parallel size >= 1",
	  NULL },
	{ "summary", "tp_max", INI_INT, S(tp_max), REQ, 1, 1024, "a tensor-parallel size >= 1",
	  NULL },
	{ "summary", "ttft_mape_pct", INI_DOUBLE, S(mape_pct[ACC_TTFT]), REQ, 0, 1e6,
	  "percent >= 0", NULL },
	{ "summary", "itl_mape_pct", INI_DOUBLE, S(mape_pct[ACC_ITL]), REQ, 0, 1e6, "percent >= 0",
	  NULL },
	{ "summary", "e2e_mape_pct", INI_DOUBLE, S(mape_pct[ACC_E2E]), REQ, 0, 1e6, "percent >= 0",
	  NULL },
	{ "summary", "cv_ttft_pct", INI_DOUBLE, S(cv_pct[ACC_TTFT]), REQ, 0, 1e6, "percent >= 0",
	  NULL },
	{ "summary", "cv_itl_pct", INI_DOUBLE, S(cv_pct[ACC_ITL]), REQ, 0, 1e6, "percent >= 0",
	  NULL },
	{ "summary", "cv_e2e_pct", INI_DOUBLE, S(cv_pct[ACC_E2E]), REQ, 0, 1e6, "percent >= 0",
	  NULL },
};

/* A model section's keys; section is set to the model's name when bound. */
static const struct inidoc_key model_keys[] = {
	{ "", "runs", INI_INT, M(runs), REQ, 1, 1e6, "a run count >= 1", NULL },
	{ "", "tp", INI_STRING, M(tp), REQ, 0, 0, "tensor-parallel sizes, comma-separated", NULL },
	{ "", "ttft_min_pct", INI_DOUBLE, M(min_pct[ACC_TTFT]), REQ, -1e6, 1e6, "percent", NULL },
	{ "", "ttft_max_pct", INI_DOUBLE, M(max_pct[ACC_TTFT]), REQ, -1e6, 1e6, "percent", NULL },
	{ "", "itl_min_pct", INI_DOUBLE, M(min_pct[ACC_ITL]), REQ, -1e6, 1e6, "percent", NULL },
	{ "", "itl_max_pct", INI_DOUBLE, M(max_pct[ACC_ITL]), REQ, -1e6, 1e6, "percent", NULL },
	{ "", "e2e_min_pct", INI_DOUBLE, M(min_pct[ACC_E2E]), REQ, -1e6, 1e6, "percent", NULL },
	{ "", "e2e_max_pct", INI_DOUBLE, M(max_pct[ACC_E2E]), REQ, -1e6, 1e6, "percent", NULL },
};

enum {
	N_SUMMARY = sizeof summary_keys / sizeof *summary_keys,
	N_MODEL = sizeof model_keys / sizeof *model_keys,
};

static int bind_model(struct inidoc *doc, const char *name, struct accdata_model *m, struct err *e)
{
	struct inidoc_key k[N_MODEL];
	for (size_t i = 0; i < N_MODEL; i++) {
		k[i] = model_keys[i];
		k[i].section = name;
	}
	memset(m, 0, sizeof *m);
	snprintf(m->id, sizeof m->id, "%s", name);
	return inidoc_bind(doc, k, N_MODEL, m, true, NULL, e);
}

int accdata_load(struct accdata *a, const char *path, struct err *e)
{
	memset(a, 0, sizeof *a);
	struct inidoc doc = { 0 };
	int rc = inidoc_load(&doc, path, e);
	if (rc == 0)
		rc = inidoc_bind(&doc, summary_keys, N_SUMMARY, a, true, NULL, e);
	for (size_t i = 0; rc == 0 && i < doc.len; i++) {
		const struct inidoc_entry *en = &doc.entries[i];
		if (en->used)
			continue;
		/* The first entry of a section not bound yet: a model. */
		a->model = xrealloc(a->model, (a->n_models + 1) * sizeof *a->model);
		rc = bind_model(&doc, en->section, &a->model[a->n_models], e);
		if (rc == 0)
			a->n_models++;
	}
	inidoc_free(&doc);
	return rc;
}

int accdata_load_default(struct accdata *a, struct err *e)
{
	char path[4096], dir[CATALOG_DIR_MAX];
	snprintf(path, sizeof path, "%s/calibration/accuracy.data", catalog_dir(CATALOG_SCENARIOS, dir, sizeof dir));
	return accdata_load(a, path, e);
}

const struct accdata_model *accdata_find(const struct accdata *a, const char *model_id)
{
	for (size_t i = 0; i < a->n_models; i++)
		if (!strcmp(a->model[i].id, model_id))
			return &a->model[i];
	return NULL;
}

void accdata_free(struct accdata *a)
{
	free(a->model);
	a->model = NULL;
	a->n_models = 0;
}
