# servesim: the engine's gauges over one run (SEED C12, C17):
# vllm:kv_cache_usage_perc, vllm:num_requests_running and
# vllm:num_requests_waiting, sampled at step starts (timeseries.csv of
# servesim run --out: time_s, running, waiting, kv_cache_usage_perc,
# step_tokens, step_time_s). Variables: data, subtitle, out, term.
if (!exists("term")) term = 'png'
if (term eq 'svg') {
    set terminal svg size 1100,700 dynamic enhanced font 'Sans,11' background '#ffffff'
} else {
    set terminal pngcairo size 1100,700 enhanced font 'Sans,10'
}
set output out
set datafile separator comma
set multiplot layout 2,1 title sprintf("{/:Bold KV cache and queue over time}\n{/*0.85 %s}", subtitle)
set grid
set key top right Left reverse box opaque font ',9'
set xlabel 'Simulated time (s)'
set ylabel 'KV cache usage (%)'
set yrange [0:119]
set key top right
set title 'KV pool usage (vllm:kv\_cache\_usage\_perc)'
plot data every ::1 using 1:($4*100) with lines lw 1.5 lc rgb '#2ca02c' title 'KV cache usage'
set ylabel 'Requests'
set yrange [0:*]
set title 'Running and waiting requests (vllm:num\_requests\_running, \_waiting)'
plot data every ::1 using 1:2 with lines lw 1.5 lc rgb '#1f77b4' title 'running', \
     data every ::1 using 1:3 with lines lw 1.5 lc rgb '#d62728' title 'waiting'
unset multiplot
