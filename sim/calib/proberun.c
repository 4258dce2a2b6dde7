#include "proberun.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "catalog.h"

#define PROBE_NAME "servesim-probe"

#ifdef SERVESIM_WITH_CUDA
#define WITH_CUDA 1
#else
#define WITH_CUDA 0
#endif

#define NO_CUDA "built without CUDA support (no nvcc when servesim was configured, or -DSERVESIM_CUDA=OFF): " \
		"build on a machine with the CUDA toolkit, or run servesim-probe there and " \
		"`servesim calibrate fit` its CSV here"

bool proberun_available(void)
{
	return WITH_CUDA;
}

int proberun_dims(struct probe_dims *d, const struct model *m, int tp, struct err *e)
{
	if (m->mla)
		return err_set(e, "%s: MLA attention (kv_lora_rank): the probe's kernels measure grouped-query attention only",
			       m->id);
	int64_t ffn = m->dense_ffn_width > 0 ? m->dense_ffn_width : m->expert_ffn_width;
	*d = (struct probe_dims){ m->hidden, ffn, m->n_heads, m->n_kv_heads, m->head_dim, m->vocab, tp,
				  m->n_experts > 1 ? m->n_experts : 0,
				  m->n_experts > 1 ? m->experts_per_token : 0,
				  m->n_sliding_layers > 0 ? m->sliding_window : 0 };
	if (m->n_heads % tp || ffn % tp)
		return err_set(e, "--tp %d: %s has %lld attention heads and an FFN width of %lld; both must divide by tp",
			       tp, m->id, (long long)m->n_heads, (long long)ffn);
	return 0;
}

static bool executable(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int proberun_find(char *out, size_t cap, const char *explicit_path, struct err *e)
{
	if (!WITH_CUDA)
		return err_set(e, NO_CUDA);
	if (explicit_path) {
		if (!executable(explicit_path))
			return err_set(e, "--probe %s: not an executable file", explicit_path);
		snprintf(out, cap, "%s", explicit_path);
		return 0;
	}
	char exe[PATH_MAX];
	if (catalog_exe_dir(exe, sizeof exe) == 0 &&
	    snprintf(out, cap, "%s/%s", exe, PROBE_NAME) < (int)cap && executable(out))
		return 0;
	if (catalog_find_exe(PROBE_NAME, out, cap) == 0)
		return 0;
	return err_set(e, "%s: not found next to servesim nor on PATH (pass --probe PATH)", PROBE_NAME);
}

int proberun_exec(const char *probe, const struct probe_dims *d, int budget_s, const char *csv_path,
		  struct err *e)
{
	if (!WITH_CUDA)
		return err_set(e, NO_CUDA);
	char a[11][32];
	const long long v[11] = { d->hidden, d->intermediate, d->heads, d->kv_heads, d->head_dim, d->vocab,
				  d->tp, budget_s, d->experts, d->experts_per_token > 0 ? d->experts_per_token : 1,
				  d->window };
	for (int i = 0; i < 11; i++)
		snprintf(a[i], sizeof a[i], "%lld", v[i]);
	char *argv[] = { (char *)probe, "--hidden", a[0], "--intermediate", a[1], "--heads", a[2],
			 "--kv-heads", a[3], "--head-dim", a[4], "--vocab", a[5], "--tp", a[6],
			 "--budget-s", a[7], "--out", (char *)csv_path, "--window", a[10],
			 d->experts ? "--experts" : NULL, a[8], "--experts-per-token", a[9], NULL };
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return err_set(e, "%s: cannot start: %s", probe, strerror(errno));
	if (pid == 0) {
		execv(probe, argv);
		fprintf(stderr, "servesim: %s: cannot run: %s\n", probe, strerror(errno));
		_exit(127);
	}
	int ws;
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			return err_set(e, "%s: wait: %s", probe, strerror(errno));
	if (WIFSIGNALED(ws))
		return err_set(e, "%s: killed by signal %d", probe, WTERMSIG(ws));
	if (WEXITSTATUS(ws) == 3) {
		err_set(e, "%s: some families failed on the GPU (see '# failed:' in %s)", probe, csv_path);
		return 1;
	}
	if (WEXITSTATUS(ws) != 0)
		return err_set(e, "%s: exited with status %d (its message is above)", probe, WEXITSTATUS(ws));
	return 0;
}
