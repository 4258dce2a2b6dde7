# servesim: TTFT, TPOT and ITL distributions of one run (servesim run --plot
# DIR, servesim plot DIR). Variables: ttft, tpot (value_ms, fraction of
# requests at or below), itl (value_ms, fraction of output tokens at or
# below, from itl_histogram.csv: every token gap, within 1/4096), marks =
# 'TTFT p50 p99 TPOT p50 p99 ITL p50 p99' (ms, space-separated), subtitle, out, term.
# TTFT and ITL are on log axes: a queue makes TTFT span milliseconds to
# tens of seconds, and one stall of seconds among thousands of 10 ms gaps
# would squeeze the ITL curve into a vertical line at zero on a linear one.
# Log ticks: 1-2-5 per decade, labels as plain numbers (no 10^k, no run-ins).
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1500,520 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1500,520 enhanced font 'Sans,10'
}
set output out
m(k) = real(word(marks, k))
# A log x axis over [lo, hi] (ms): whole decades around the data; labels at
# 1, 2 and 5 of each decade when it spans three decades or less, else at
# the decades alone, so they never run together.
lo10(v) = 10**floor(log10(v > 0 ? v : 1e-3))
hi10(v) = 10**ceil(log10(v > 0 ? v : 1e-3))
logaxis_cmd(lo, hi) = sprintf("set logscale x 10; set format x '%%g'; set mxtics 10; set xrange [%g:%g]; set xtics %s", \
    lo10(lo), hi10(hi) > lo10(lo) ? hi10(hi) : 10*lo10(lo), \
    log10(hi10(hi)/lo10(lo)) <= 3 ? "(" . \
        sprintf("'%g' %g, '%g' %g, '%g' %g, ", lo10(lo), lo10(lo), 2*lo10(lo), 2*lo10(lo), 5*lo10(lo), 5*lo10(lo)) . \
        sprintf("'%g' %g, '%g' %g, '%g' %g, ", 10*lo10(lo), 10*lo10(lo), 20*lo10(lo), 20*lo10(lo), 50*lo10(lo), 50*lo10(lo)) . \
        sprintf("'%g' %g, '%g' %g, '%g' %g, '%g' %g", 100*lo10(lo), 100*lo10(lo), 200*lo10(lo), 200*lo10(lo), 500*lo10(lo), 500*lo10(lo), 1000*lo10(lo), 1000*lo10(lo)) . ")" \
      : "10")

# The data's ranges, before yrange is set (stats of one column reads it as y).
stats ttft using 1 nooutput
ttft_min = STATS_min; ttft_max = STATS_max
stats itl using 1 nooutput
itl_min = STATS_min; itl_max = STATS_max
set multiplot layout 1,3 title sprintf("{/:Bold Latency distributions (CDF)}\n{/*0.85 %s}", subtitle)
set grid
set yrange [0:1.02]
set key bottom right Left reverse box opaque font ',9'
set ylabel 'Fraction of requests at or below'
set xlabel 'Time to first token (ms, log scale)'
set title 'TTFT per request'
eval logaxis_cmd(ttft_min, ttft_max)
set arrow 1 from m(1), graph 0 to m(1), graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from m(2), graph 0 to m(2), graph 1 nohead dt 4 lc rgb '#cc0000'
plot ttft using 1:2 with steps lw 2 lc rgb '#1f77b4' title sprintf('TTFT (p50 %.1f ms, p99 %.1f ms)', m(1), m(2))
set xlabel 'Time per output token (ms)'
set title 'TPOT per request (its mean inter-token gap)'
unset logscale x
set xtics autofreq norotate offset 0,0
set mxtics default
set xrange [*:*]
set arrow 1 from m(3), graph 0 to m(3), graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from m(4), graph 0 to m(4), graph 1 nohead dt 4 lc rgb '#cc0000'
plot tpot using 1:2 with steps lw 2 lc rgb '#ff7f0e' title sprintf('TPOT (p50 %.2f ms, p99 %.2f ms)', m(3), m(4))
set ylabel 'Fraction of output tokens at or below'
set xlabel 'Inter-token latency (ms, log scale)'
set title 'ITL per token (every gap between tokens)'
eval logaxis_cmd(itl_min, itl_max)
set arrow 1 from m(5), graph 0 to m(5), graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from m(6), graph 0 to m(6), graph 1 nohead dt 4 lc rgb '#cc0000'
plot itl using 1:2 with steps lw 2 lc rgb '#2ca02c' title sprintf('ITL (p50 %.2f ms, p99 %.2f ms)', m(5), m(6))
unset multiplot
