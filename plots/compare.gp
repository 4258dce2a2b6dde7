# servesim: devices side by side (servesim compare --plot DIR). compare.dat
# columns: 1 hardware, 2 decode ceiling (tok/s), 3 output throughput at the
# scenario's load (tok/s), 4 its 95% CI half-width, 5 highest rate within
# the SLO (req/s), 6 $ per 1M output tokens (at the SLO limit when an SLO
# was searched, else at the scenario's load). Variables: data,
# subtitle, slo ('1' when searched), cost ('1' with prices), out, term.
if (!exists("term")) term = 'png'
np = 2 + (slo eq '1') + (cost eq '1')
if (term eq 'svg') {
    set terminal svg size 380*np+200,520 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 380*np+200,520 enhanced font 'Sans,10'
}
set output out
set multiplot layout 1,np title sprintf("{/:Bold GPU comparison}\n{/*0.85 %s}", subtitle)
set grid ytics
set style fill solid 0.75 border -1
set boxwidth 0.6
set bars 0.5
set xtics rotate by -30 left
set yrange [0:*]
stats data using 2 nooutput
set xrange [-0.6:STATS_records - 0.4]
set xtics noenhanced
unset key
set ylabel 'tok/s'
set title "Single-stream decode ceiling\n{/*0.8 bandwidth / weight bytes, datasheet (SEED C8)}"
plot data using 0:2:xtic(1) with boxes lc rgb '#7f7f7f'
set title "Output throughput at the scenario's load\n{/*0.8 mean, 95% CI}"
plot data using 0:3:4:xtic(1) with boxerrorbars lc rgb '#1f77b4'
if (slo eq '1') {
    set ylabel 'req/s'
    set title "Highest request rate within the SLO\n{/*0.8 per replica; see the subtitle for the SLO}"
    plot data using 0:5:xtic(1) with boxes lc rgb '#2ca02c'
}
if (cost eq '1') {
    set ylabel 'US$'
    set title (slo eq '1') ? "Cost per 1M output tokens\n{/*0.8 at the highest rate within the SLO}" : "Cost per 1M output tokens\n{/*0.8 at the scenario's load}"
    plot data using 0:6:xtic(1) with boxes lc rgb '#d62728'
}
unset multiplot
