"""An aiconfigurator GEMM table (the CSV scripts/fits/aic-dump.mjs writes) as a lookup of one GEMM's time, shared by
aic_gemm.py and aic_gemm_check.py: N and K between the grid's values interpolated linearly (a GEMM's time is about
linear in each), M on the grid, and a timing slower than 1.2x the next larger M's taken as a bad sample (that one
instead: the table has a few, such as 192 TFLOP/s at 12,288 x 8,192, M 2,048, among 800s)."""
import bisect, csv


class GemmTable:
    def __init__(self, path, dtype='bfloat16'):
        self.t = {}
        for r in csv.DictReader(open(path)):
            if r['gemm_dtype'] == dtype:
                self.t[int(r['m']), int(r['n']), int(r['k'])] = float(r['latency']) * 1e-3
        self.ms, self.ns, self.ks = (sorted({key[i] for key in self.t}) for i in range(3))

    @staticmethod
    def _weights(grid, x):
        i = bisect.bisect_left(grid, x)
        if grid[i] == x:
            return [(x, 1.0)]
        a, b = grid[i - 1], grid[i]
        return [(a, (b - x) / (b - a)), (b, (x - a) / (b - a))]

    def look(self, m, n, k):
        """Seconds of one M x N x K GEMM, M on the grid."""
        return sum(wn * wk * self.t[m, nn, kk] for nn, wn in self._weights(self.ns, n)
                   for kk, wk in self._weights(self.ks, k))

    def clean(self, m, n, k):
        v, i = self.look(m, n, k), self.ms.index(m)
        if i + 1 < len(self.ms):
            nxt = self.look(self.ms[i + 1], n, k)
            if v > 1.2 * nxt:
                return nxt
        return v


def layer_shapes(hidden, heads, kv_heads, head_dim, intermediate, tp):
    """(N, K) of a dense decoder layer's four GEMMs on one GPU as vLLM runs them: QKV merged, O, gate-up
    merged, down."""
    return [((heads + 2 * kv_heads) * head_dim // tp, hidden), (hidden, heads * head_dim // tp),
            (2 * intermediate // tp, hidden), (hidden, intermediate // tp)]
