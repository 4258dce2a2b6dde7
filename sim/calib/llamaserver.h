/*
 * llamaserver: llama.cpp's llama-server responses (tools/server: the
 * /completion and /v1/chat/completions replies, non-streaming or a
 * stream's last chunk), read through their `timings` object: prompt_n
 * prompt tokens computed in prompt_ms, predicted_n generated in
 * predicted_ms, and cache_n prompt tokens served from the slot's cache
 * (newer builds). formats.md §4.
 *
 * Each response becomes an Ollama /api/generate line (ollamaresp.h reads
 * it), the way Ollama's own llama-server runner maps them
 * (llm/llama_server.go): prompt_eval_count = cache_n + prompt_n,
 * prompt_eval_duration = prompt_ms, eval_count = predicted_n,
 * eval_duration = predicted_ms; at the line where the response starts.
 */
#ifndef SERVESIM_LLAMASERVER_H
#define SERVESIM_LLAMASERVER_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"

bool llamaserver_sniff(const json_t *o);

/* text's responses as Ollama JSON lines (a new string), or NULL with e
 * naming path, line and the timings field that is missing or bad. */
char *llamaserver_to_ollama(const char *text, const char *path, struct err *e);

#endif
