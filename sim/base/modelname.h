/*
 * modelname: a model as people name it, to a file servesim can read.
 *
 * In order: a file (a config.json or a .gguf); a model folder (its
 * config.json, or its one .gguf); an id or Hugging Face id of models/
 * (catalog.h, aliases.ini); a Hugging Face id in the local Hugging Face
 * cache ($HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub:
 * models--ORG--NAME/snapshots/<refs/main, else the first>/config.json, or
 * its one .gguf; ORG/NAME:Q4_K_M, as llama.cpp's -hf and Ollama's
 * hf.co/ORG/NAME:Q4_K_M name one GGUF of a repository of several); an
 * Ollama tag (`llama3.1:8b`, `qwen2.5:7b-instruct-q8_0`, `gpt-oss`: the
 * library's model, at the tag's quantization or the library's default,
 * Q4_K_M, MXFP4 for gpt-oss; a table in modelname.c).
 */
#ifndef SERVESIM_MODELNAME_H
#define SERVESIM_MODELNAME_H

#include <stddef.h>

#include "err.h"

struct modelname {
	char path[4096];     /* the file to read: a config.json or a .gguf */
	char id[64];         /* the name to show; "" = the file's id */
	char weights[16];    /* an Ollama tag's precision ("q4_k_m"); "" = the file's */
	const char *how;     /* static: "file", "folder", "catalog", "hf-cache", "ollama" */
};

/* Resolves name into *out. Returns 0, or -1 with e saying what was tried
 * (the known ids, the cache folder looked in, the Ollama sizes known). */
int modelname_resolve(const char *name, struct modelname *out, struct err *e);

#endif
