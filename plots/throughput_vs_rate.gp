# servesim: throughput against load, from a sweep (see latency_vs_rate.gp
# for the variables and sweep.dat's columns; 21-26: output tok/s, request
# throughput and goodput in req/s, each mean and CI). offered='1' draws the
# offered rate (y = x) when x is the request rate; goodput='1' draws the
# goodput (only a scenario with an [slo] has one).
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1200,520 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1200,520 enhanced font 'Sans,10'
}
set output out
ns = words(series)
XT = (categorical eq '1') ? ':xtic(2)' : ''
if (!exists("offered")) offered = '0'
if (!exists("goodput")) goodput = '0'
GP = (goodput eq '1') ? ' (solid) and goodput under the scenario [slo] (dashed)' : ''
if (errorbars eq '1') { set bars small } else { set bars 0 }
set multiplot layout 1,2 title sprintf("{/:Bold Throughput against load}\n{/*0.85 %s}", subtitle)
set grid
set xtics noenhanced
if (categorical eq '1') { set xtics rotate by -30 left; set bmargin 7 }
set xlabel xlabel
set key top left Left reverse box opaque font ',9'
set yrange [0:*]
set ylabel 'Output tokens per second (tok/s)'
set title 'Output token throughput'
plot for [i=1:ns] data index i-1 using 1:21:22@XT with yerrorlines lc i lw 2 pt 7 ps 0.6 title word(series,i)
set ylabel 'Requests per second (req/s)'
set title 'Completed requests'.GP
if (offered eq '1') {
    plot for [i=1:ns] data index i-1 using 1:23:24@XT with yerrorlines lc i lw 2 pt 7 ps 0.6 title word(series,i), \
         for [i=1:ns] data index i-1 using 1:25 with lines lc i dt 2 lw 1.5 notitle, \
         x with lines lc rgb '#888888' dt 4 title 'offered rate'
} else {
    plot for [i=1:ns] data index i-1 using 1:23:24@XT with yerrorlines lc i lw 2 pt 7 ps 0.6 title word(series,i), \
         for [i=1:ns] data index i-1 using 1:25 with lines lc i dt 2 lw 1.5 notitle
}
unset multiplot
