#include "request.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

size_t reqtab_add(struct reqtab *t)
{
	xgrow(&t->v, &t->cap, t->len + 1, sizeof *t->v);
	memset(&t->v[t->len], 0, sizeof t->v[t->len]);
	t->v[t->len].conversation = -1;
	t->v[t->len].first_scheduled_ns = -1;
	t->v[t->len].first_token_ns = -1;
	t->v[t->len].first_launch_ns = -1;
	return t->len++;
}

void reqtab_free(struct reqtab *t)
{
	for (size_t i = 0; i < t->len; i++)
		free(t->v[i].blocks);
	free(t->v);
	*t = (struct reqtab){ 0 };
}
