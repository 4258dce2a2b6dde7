/*
 * apiserver: vLLM's API-server event loops as FIFO servers (apiserver.h).
 */
#include "apiserver.h"

#include <string.h>

void apiservers_init(struct apiservers *a, int64_t n)
{
	memset(a, 0, sizeof *a);
	a->n = n < 1 ? 1 : n > APISERVER_MAX ? APISERVER_MAX : (int)n;
}

int64_t apiservers_work(struct apiservers *a, int s, enum apiserver_queue q, int64_t now, int64_t ns,
			int64_t *wait_ns)
{
	int64_t *free_ns = &a->free_ns[s][q];
	int64_t start = *free_ns > now ? *free_ns : now;
	if (wait_ns)
		*wait_ns = start - now;
	*free_ns = start + ns;
	return *free_ns;
}

int apiservers_pick(struct apiservers *a)
{
	int s = a->next;
	a->next = (a->next + 1) % a->n;
	return s;
}
