/*
 * engine: the table from a scenario's [engine] kind to its class.
 */
#include "engine.h"

#include <assert.h>

const struct engine_class *engine_class_for(int kind)
{
	static const struct engine_class *const by_kind[] = {
		[ENGINE_VLLM] = &vllm_engine_class,
		[ENGINE_OLLAMA] = &ollama_engine_class,
		[ENGINE_LLAMACPP] = &llamacpp_engine_class,
	};
	assert(kind >= 0 && (size_t)kind < sizeof by_kind / sizeof *by_kind && by_kind[kind]);
	return by_kind[kind];
}
