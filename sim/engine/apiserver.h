/*
 * apiserver: vLLM's API-server processes (`--api-server-count`), each one
 * Python event loop that does, one piece of work after another, every
 * request's path before the engine (HTTP, the chat template, tokenization,
 * add_request) and its streams' share of every step's output work
 * (AsyncLLM's output handler: detokenization, one SSE chunk a stream).
 * Tokenization holds the GIL (the Rust encoder releases it only for batch
 * encodes, huggingface/tokenizers#1843) and runs on a one-thread executor
 * (vllm-project/vllm#25301), so a burst of requests queues here before the
 * engine sees any of them, and a step's output work waits behind the
 * requests that arrived before it.
 *
 * A request goes to the servers in turn (round robin in send order: the
 * kernel spreads connections over the processes sharing the port). Each
 * server has two FIFOs: its event loop (HTTP, request parsing,
 * add_request, the output handler) and its tokenizer thread; work handed
 * to one at now starts when the work before it there is done. (The two
 * also contend for the GIL; that is not modelled.)
 *
 * Invariant: 1 <= n <= APISERVER_MAX; free_ns never decreases.
 */
#ifndef SERVESIM_APISERVER_H
#define SERVESIM_APISERVER_H

#include <stdint.h>

#define APISERVER_MAX 64

enum apiserver_queue { APISERVER_LOOP, APISERVER_TOKENIZER, APISERVER_QUEUES };

struct apiservers {
	int n;
	int next;                          /* the server the next request goes to */
	int64_t free_ns[APISERVER_MAX][APISERVER_QUEUES];   /* queued work ends here */
};

/* n servers, idle. n is clamped to [1, APISERVER_MAX]. Cannot fail. */
void apiservers_init(struct apiservers *a, int64_t n);

/* Work of ns nanoseconds handed to queue q of server s at now: returns
 * when it is done; *wait_ns (when non-NULL) gets how long it queued. */
int64_t apiservers_work(struct apiservers *a, int s, enum apiserver_queue q, int64_t now, int64_t ns,
			int64_t *wait_ns);

/* The server the next request goes to (and advances the turn). */
int apiservers_pick(struct apiservers *a);

#endif
