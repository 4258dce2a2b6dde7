#include "precision.h"

#include <stdio.h>
#include <strings.h>

static const struct precision table[] = {
	{ "fp32", 32, MATMUL_FP32, false, false, "32-bit float" },
	{ "bf16", 16, MATMUL_BF16, false, false, "bfloat16 (vLLM --dtype bfloat16)" },
	{ "fp16", 16, MATMUL_BF16, false, false, "float16" },
	{ "fp8", 8, MATMUL_FP8, false, false, "FP8 e4m3 weights and activations (vLLM --quantization fp8)" },
	{ "int8", 8, MATMUL_INT8, false, false, "INT8 W8A8 (SmoothQuant-style)" },
	{ "int4", 4.25, MATMUL_BF16, false, false, "4-bit weight-only, group 128 scales (AWQ/GPTQ)" },
	{ "awq", 4.25, MATMUL_BF16, false, false, "AWQ 4-bit, group 128" },
	{ "gptq", 4.25, MATMUL_BF16, false, false, "GPTQ 4-bit, group 128" },
	{ "mxfp4", 4.25, MATMUL_BF16, false, true, "MXFP4 experts (gpt-oss): 4 bits + 8-bit scale per 32" },
	{ "nvfp4", 4.5, MATMUL_FP4, false, false, "NVFP4: 4 bits + fp8 scale per 16" },
	{ "f16", 16, MATMUL_BF16, true, false, "GGUF F16" },
	{ "q8_0", 8.5, MATMUL_BF16, true, false, "GGUF Q8_0: 8.5 bits per weight" },
	{ "q6_k", 6.5625, MATMUL_BF16, true, false, "GGUF Q6_K: 6.56 bits per weight" },
	{ "q5_k_m", 5.7, MATMUL_BF16, true, false, "GGUF Q5_K_M: about 5.7 bits per weight" },
	{ "q4_k_m", 4.85, MATMUL_BF16, true, false, "GGUF Q4_K_M: about 4.85 bits per weight" },
	{ "q4_0", 4.5, MATMUL_BF16, true, false, "GGUF Q4_0: 4.5 bits per weight" },
};

#define ROW(id, name, bytes) [id] = { name, bytes },
const struct kv_dtype kv_dtypes[KV_DTYPE_COUNT] = { KV_DTYPE_ROWS(ROW) };
#undef ROW
#define NAME(id, name, bytes) [id] = name,
const char *const kv_dtype_names[KV_DTYPE_COUNT + 1] = { KV_DTYPE_ROWS(NAME) NULL };
#undef NAME

const struct precision *precision_find(const char *name)
{
	for (size_t i = 0; i < sizeof table / sizeof *table; i++)
		if (!strcasecmp(table[i].name, name))
			return &table[i];
	return NULL;
}

const struct precision *precision_all(size_t *n)
{
	*n = sizeof table / sizeof *table;
	return table;
}

void precision_names(char *out, size_t cap)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < sizeof table / sizeof *table && used + 1 < cap; i++)
		used += (size_t)snprintf(out + used, cap - used, "%s%s", i ? ", " : "",
					 table[i].name);
}
