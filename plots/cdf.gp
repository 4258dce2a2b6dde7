# servesim: TTFT and TPOT distributions of one run (servesim run --plot DIR,
# servesim plot DIR). Variables: ttft, tpot (data files: value_ms, fraction
# of requests at or below), marks = 'TTFT p50/TTFT p99/TPOT p50/TPOT p99'
# (ms), subtitle, out, term.
# requests.csv has no per-token gaps, so the right panel is each request's
# TPOT (its mean inter-token gap), not the per-token ITL distribution.
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1200,520 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1200,520 enhanced font 'Sans,10'
}
set output out
t50 = real(substr(marks, 1, strstrt(marks, '/') - 1))
rest = substr(marks, strstrt(marks, '/') + 1, strlen(marks))
t99 = real(substr(rest, 1, strstrt(rest, '/') - 1))
rest = substr(rest, strstrt(rest, '/') + 1, strlen(rest))
p50 = real(substr(rest, 1, strstrt(rest, '/') - 1))
p99 = real(substr(rest, strstrt(rest, '/') + 1, strlen(rest)))
set multiplot layout 1,2 title sprintf("{/:Bold Latency distributions (CDF over requests)}\n{/*0.85 %s}", subtitle)
set grid
set yrange [0:1.02]
set ylabel 'Fraction of requests at or below'
set key bottom right Left reverse box opaque font ',9'
set xlabel 'Time to first token (ms)'
set title 'TTFT per request'
set arrow 1 from t50, graph 0 to t50, graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from t99, graph 0 to t99, graph 1 nohead dt 4 lc rgb '#cc0000'
plot ttft using 1:2 with steps lw 2 lc rgb '#1f77b4' title sprintf('TTFT (p50 %.1f ms, p99 %.1f ms)', t50, t99)
set xlabel 'Time per output token (ms)'
set title "TPOT per request (mean inter-token gap; per-token ITLs are not in requests.csv)"
set arrow 1 from p50, graph 0 to p50, graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from p99, graph 0 to p99, graph 1 nohead dt 4 lc rgb '#cc0000'
plot tpot using 1:2 with steps lw 2 lc rgb '#ff7f0e' title sprintf('TPOT (p50 %.2f ms, p99 %.2f ms)', p50, p99)
unset multiplot
