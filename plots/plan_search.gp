# servesim: how servesim plan searched (servesim plan --plot DIR).
# search.dat: one block per candidate (gnuplot index), columns: 1 load,
# 2 the worst SLO ratio there (upper confidence bound / limit; 1 = at the
# limit), 3 1 when the load passed. Variables: data, series (the
# candidates' labels), subtitle (the SLO), xlabel, out, term.
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1000,600 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1000,600 enhanced font 'Sans,10'
}
set output out
ns = words(series)
set title sprintf("{/:Bold SLO search: worst SLO statistic / limit at each load tried}\n{/*0.85 SLO: %s; filled: passes, open: fails}", subtitle)
set grid
set logscale xy
set xlabel xlabel
set ylabel 'Worst SLO ratio (upper bound / limit)'
set key outside right Left reverse box font ',9'
plot for [i=1:ns] data index i-1 using 1:2 smooth unique with lines lc i lw 1.5 title word(series,i), \
     for [i=1:ns] data index i-1 using 1:($3 > 0 ? $2 : 1/0) with points lc i pt 7 ps 1 notitle, \
     for [i=1:ns] data index i-1 using 1:($3 > 0 ? 1/0 : $2) with points lc i pt 6 ps 1 notitle, \
     1 with lines lc rgb '#cc0000' dt 2 lw 2 title 'SLO limit'
