/*
 * engine: the table of engine classes, looked up by a scenario's [engine]
 * kind. A new engine is one more row here and one class file.
 */
#include "engine.h"

#include <stdio.h>
#include <string.h>

const struct engine_class *const engine_classes[] = {
	&vllm_engine_class,
	&ollama_engine_class,
	&llamacpp_engine_class,
	NULL,
};

const struct engine_class *engine_class_find(const char *name)
{
	for (size_t i = 0; engine_classes[i]; i++)
		if (!strcmp(engine_classes[i]->name, name))
			return engine_classes[i];
	return NULL;
}

void engine_class_list(char *buf, size_t cap)
{
	size_t n = 0;
	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; engine_classes[i] && n < cap; i++) {
		int w = snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", engine_classes[i]->name);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}
