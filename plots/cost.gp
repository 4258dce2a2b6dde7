# servesim: goodput against cost (servesim plan --plot DIR, servesim compare
# --plot DIR with an SLO and prices). cost.dat columns: 1 $/hour of one
# replica (price × GPUs), 2 its highest request rate within the SLO (req/s),
# 3 $ per 1M output tokens at that rate, 4 label. Variables: data,
# subtitle (the SLO), out, term.
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1200,540 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1200,540 enhanced font 'Sans,10'
}
set output out
set multiplot layout 1,2 title sprintf("{/:Bold Goodput against cost}\n{/*0.85 SLO: %s}", subtitle)
set grid
set key top left Left reverse box opaque font ',9'
set xlabel 'Cost of one replica (US$/hour)'
set ylabel 'Highest request rate within the SLO (req/s)'
set title 'Each configuration: SLO goodput per replica against its price'
stats data using 2 nooutput
set xrange [0:*]
if (STATS_min > 0 && STATS_max / STATS_min > 20) {
    set logscale y
    set ylabel 'Highest request rate within the SLO (req/s, log scale)'
} else {
    set yrange [0:*]
}
set offsets graph 0.05, graph 0.15, graph 0.1, 0
plot data using 1:2 with points pt 7 ps 1.5 lc rgb '#1f77b4' title 'configuration', \
     data using 1:2:4 with labels offset 0,1 font ',8' noenhanced notitle
set title 'US$ per 1M output tokens at the SLO limit'
set xlabel ''
set ylabel 'US$ per 1M output tokens'
set style fill solid 0.75 border -1
set boxwidth 0.6
set xtics rotate by -30 left
set offsets 0, 0, 0, 0
unset logscale y
set yrange [0:*]
set xrange [-0.6:STATS_records - 0.4]
set xtics noenhanced
unset key
plot data using 0:3:xtic(4) with boxes lc rgb '#d62728'
unset multiplot
