# servesim: latency percentiles against load (the knee), from a sweep.
# Run by `servesim sweep --plot DIR` and `servesim plot RESULT.json` as
#   gnuplot -e "data='sweep.dat'; series='a b'; xlabel='…'; subtitle='…';
#               categorical='0'; errorbars='0'; out='x.png'; term='png'" latency_vs_rate.gp
# sweep.dat: one block per series (gnuplot index), columns: 1 x, 2 label,
# then mean and 95% CI half-width of ttft p50/p90/p99 (3-8), itl p50/p90/p99
# (9-14), e2el p50/p90/p99 (15-20), all in ms.
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1500,560 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1500,560 enhanced font 'Sans,10'
}
set output out
ns = words(series)
XT = (categorical eq '1') ? ':xtic(2)' : ''
if (errorbars eq '1') { set bars small } else { set bars 0 }
set multiplot layout 1,3 title sprintf("{/:Bold Latency percentiles against load}\n{/*0.85 %s}", subtitle)
set grid
set xtics noenhanced
if (categorical eq '1') { set xtics rotate by -30 left; set bmargin 7 }
set logscale y
set xlabel xlabel
set key top left Left reverse box opaque font ',9'
set ylabel 'Time to first token (ms)'
set title 'TTFT: p50 (dashed), p90 (dotted), p99 (solid)'
plot for [i=1:ns] data index i-1 using 1:7:8@XT with yerrorlines lc i lw 2 pt 7 ps 0.6 title word(series,i).' p99', \
     for [i=1:ns] data index i-1 using 1:5 with lines lc i dt 3 lw 1.5 notitle, \
     for [i=1:ns] data index i-1 using 1:3 with lines lc i dt 2 lw 1.5 notitle
set ylabel 'Inter-token latency (ms)'
set title 'ITL (per token): p50 (dashed), p90 (dotted), p99 (solid)'
plot for [i=1:ns] data index i-1 using 1:13:14@XT with yerrorlines lc i lw 2 pt 7 ps 0.6 title word(series,i).' p99', \
     for [i=1:ns] data index i-1 using 1:11 with lines lc i dt 3 lw 1.5 notitle, \
     for [i=1:ns] data index i-1 using 1:9 with lines lc i dt 2 lw 1.5 notitle
set ylabel 'End-to-end latency (ms)'
set title 'E2EL: p50 (dashed), p90 (dotted), p99 (solid)'
plot for [i=1:ns] data index i-1 using 1:19:20@XT with yerrorlines lc i lw 2 pt 7 ps 0.6 title word(series,i).' p99', \
     for [i=1:ns] data index i-1 using 1:17 with lines lc i dt 3 lw 1.5 notitle, \
     for [i=1:ns] data index i-1 using 1:15 with lines lc i dt 2 lw 1.5 notitle
unset multiplot
