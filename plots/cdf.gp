# servesim: TTFT, TPOT and ITL distributions of one run (servesim run --plot
# DIR, servesim plot DIR). Variables: ttft, tpot (value_ms, fraction of
# requests at or below), itl (value_ms, fraction of output tokens at or
# below, from itl_histogram.csv: every token gap, within 1/4096), marks =
# 'TTFT p50 p99 TPOT p50 p99 ITL p50 p99' (ms, space-separated), subtitle, out, term.
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1500,520 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1500,520 enhanced font 'Sans,10'
}
set output out
m(k) = real(word(marks, k))
set multiplot layout 1,3 title sprintf("{/:Bold Latency distributions (CDF)}\n{/*0.85 %s}", subtitle)
set grid
set yrange [0:1.02]
set key bottom right Left reverse box opaque font ',9'
set ylabel 'Fraction of requests at or below'
set xlabel 'Time to first token (ms)'
set title 'TTFT per request'
set arrow 1 from m(1), graph 0 to m(1), graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from m(2), graph 0 to m(2), graph 1 nohead dt 4 lc rgb '#cc0000'
plot ttft using 1:2 with steps lw 2 lc rgb '#1f77b4' title sprintf('TTFT (p50 %.1f ms, p99 %.1f ms)', m(1), m(2))
set xlabel 'Time per output token (ms)'
set title 'TPOT per request (its mean inter-token gap)'
set arrow 1 from m(3), graph 0 to m(3), graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from m(4), graph 0 to m(4), graph 1 nohead dt 4 lc rgb '#cc0000'
plot tpot using 1:2 with steps lw 2 lc rgb '#ff7f0e' title sprintf('TPOT (p50 %.2f ms, p99 %.2f ms)', m(3), m(4))
set ylabel 'Fraction of output tokens at or below'
set xlabel 'Inter-token latency (ms)'
set title 'ITL per token (every gap between tokens)'
set arrow 1 from m(5), graph 0 to m(5), graph 1 nohead dt 2 lc rgb '#666666'
set arrow 2 from m(6), graph 0 to m(6), graph 1 nohead dt 4 lc rgb '#cc0000'
plot itl using 1:2 with steps lw 2 lc rgb '#2ca02c' title sprintf('ITL (p50 %.2f ms, p99 %.2f ms)', m(5), m(6))
unset multiplot
