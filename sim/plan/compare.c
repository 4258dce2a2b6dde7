#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwprofile.h"
#include "model.h"
#include "precision.h"
#include "xalloc.h"

int compare_row_init(struct compare_row *r, size_t index, const struct scenario *sc, bool cost,
		     const char *origin, struct err *e)
{
	memset(r, 0, sizeof *r);
	struct hw_profile hw;
	struct model m;
	if (hw_load_named(&hw, sc->hardware, e) || model_load_named(&m, sc->model, e))
		return err_prefix(e, "%s", origin);
	const struct precision *w = precision_find(sc->weights[0] ? sc->weights : m.weights);
	if (!w)
		return err_set(e, "%s: [run] weights: expected a precision, got '%s'", sc->path,
			       sc->weights[0] ? sc->weights : m.weights);
	if (plan_cand_init(&r->cand, index, sc, cost, origin, e))
		return -1;
	snprintf(r->name, sizeof r->name, "%s", hw.name);
	r->bandwidth_gb_s = hw.bandwidth_gb_s;
	r->decode_ceiling_tok_s = (double)sc->engine.tensor_parallel_size * hw.bandwidth_gb_s * 1e9 /
				  model_active_weight_bytes(&m, w);
	return 0;
}

void compare_row_free(struct compare_row *r)
{
	plan_cand_free(&r->cand);
	free(r->error);
	r->error = NULL;
}

void compare_run(struct compare_row *rows, size_t n, const struct plan_slo *slo,
		 const struct plan_opts *o, struct tune_cand *tuned, const struct tune_space *space)
{
	if (!slo->n)
		tuned = NULL;
	if (tuned)
		tune_run(tuned, n, space, slo, o);
	struct scenario *scs = xcalloc(n + 1, sizeof *scs);
	char **errors = xcalloc(n + 1, sizeof *errors);
	struct measure_summary *at = xcalloc(n + 1, sizeof *at);
	for (size_t i = 0; i < n; i++)
		scs[i] = rows[i].cand.sc;
	measure_many(scs, n, o->replications, o->jobs, o->progress, at, errors);
	struct plan_cand *search = xcalloc(n + 1, sizeof *search);
	size_t *from = xcalloc(n + 1, sizeof *from), ns = 0;
	for (size_t i = 0; i < n; i++) {
		if (errors[i] && !rows[i].error)
			rows[i].error = errors[i];
		else
			free(errors[i]);
		if (rows[i].error) {
			plan_cand_free(&rows[i].cand);
			rows[i].cand.status = PLAN_INFEASIBLE;
			rows[i].cand.error = xstrdup(rows[i].error);
			continue;
		}
		rows[i].at_load = at[i];
		if (slo->n && !tuned) {
			search[ns] = rows[i].cand;
			from[ns++] = i;
		}
	}
	plan_search(search, ns, slo, o);
	for (size_t k = 0; k < ns; k++)
		rows[from[k]].cand = search[k];
	free(from);
	free(search);
	free(at);
	free(errors);
	free(scs);
}
