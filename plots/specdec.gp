# Speculative decoding under load (docs/cluster.md): TPOT with and without
# speculation, and the speed-up, against the number of concurrent streams.
# Input (datafile): concurrency, TPOT without (ms), TPOT with (ms).
# Usage: gnuplot -e "datafile='d.dat'; outfile='specdec.svg'" plots/specdec.gp
if (!exists("datafile")) datafile = 'specdec.dat'
if (!exists("outfile")) outfile = 'specdec.svg'
set terminal svg size 720,420 dynamic font "sans,12"
set output outfile
set title "Speculative decoding: Llama-3.1-8B + 1B drafter, k = 3, acceptance 0.7 (H100)"
set logscale x 2
set xlabel "concurrent streams"
set ylabel "TPOT (ms)"
set y2label "speed-up (TPOT without / with)"
set y2tics
set ytics nomirror
set key left center
set grid
set y2range [0:*]
plot datafile using 1:2 with linespoints title "without", \
     datafile using 1:3 with linespoints title "with speculation", \
     datafile using 1:($2/$3) axes x1y2 with linespoints dashtype 2 title "speed-up", \
     1 axes x1y2 with lines lc rgb "gray" notitle
