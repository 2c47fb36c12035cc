# Chart of scripts/compare.sh: training wall time and peak RSS per corpus, one bar per tool,
# log scales (the tools differ by orders of magnitude). Called by report.py with
#   gnuplot -e "datafile='chart.dat'; outfile='compare.png'; ntools=3" chart.gp
# chart.dat: a header line (label, tool names), then per corpus: "label" walls... rsses...
# limit_walls... limit_rsses... (one column per tool in each group; "?" where absent). A run that
# hit the time limit is drawn hatched at the limit and at the peak RSS it had reached: lower bounds.
set terminal pngcairo size 1800,650 font "DejaVu Sans,11" noenhanced
set output outfile
set datafile missing "?"
set key autotitle columnhead
set bmargin 5
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set grid ytics mytics
set key top left
set xtics nomirror
set ytics nomirror
set linetype 1 lc rgb "#1b7837"
set linetype 2 lc rgb "#ef8a62"
set linetype 3 lc rgb "#67a9cf"
set multiplot layout 1,2 title "BPE training, end to end (medians; lower is better)"
set title "wall time (s, log scale)"
set yrange [*:*]
# Bar j (0-based) of cluster k is centred at k + (j - (n-1)/2) / (n+1) with "gap 1".
xpos(j) = column(0) + (j - (ntools - 1) / 2.0) / (ntools + 1)
set offsets 0, 0, graph 0.15, 0
bar = 0.9 / (ntools + 1)
plot for [i=2:ntools+1] datafile using i:xtic(1) title columnheader(i), \
     for [i=2:ntools+1] datafile using (xpos(i-2)):(column(i)):(sprintf("%.3g s", column(i))) \
       with labels rotate by 90 left offset 0,0.4 font ",9" notitle, \
     for [i=2:ntools+1] datafile using (xpos(i-2)):(column(i+2*ntools)):(bar) \
       with boxes fill pattern 4 border lt (i-1) lt (i-1) notitle, \
     for [i=2:ntools+1] datafile using (xpos(i-2)):(column(i+2*ntools)):(sprintf("> %.0f s", column(i+2*ntools))) \
       with labels rotate by 90 left offset 0,0.4 font ",9" notitle, \
     NaN with boxes fill pattern 4 lc rgb "black" title "hatched: stopped at the time limit (lower bound)"
set title "peak RSS (MB, log scale)"
plot for [i=2:ntools+1] datafile using (column(i+ntools)):xtic(1) title columnheader(i), \
     for [i=2:ntools+1] datafile using (xpos(i-2)):(column(i+ntools)):(sprintf("%.0f MB", column(i+ntools))) \
       with labels rotate by 90 left offset 0,0.4 font ",9" notitle, \
     for [i=2:ntools+1] datafile using (xpos(i-2)):(column(i+3*ntools)):(bar) \
       with boxes fill pattern 4 border lt (i-1) lt (i-1) notitle, \
     for [i=2:ntools+1] datafile using (xpos(i-2)):(column(i+3*ntools)):(sprintf("≥ %.0f MB", column(i+3*ntools))) \
       with labels rotate by 90 left offset 0,0.4 font ",9" notitle, \
     NaN with boxes fill pattern 4 lc rgb "black" title "hatched: peak RSS when stopped (lower bound)"
unset multiplot
