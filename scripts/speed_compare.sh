#!/usr/bin/env bash
# Speed unchanged: times two builds of tokenmill on the same work, alternating them run by run
# (ABAB, then BABA: the machine is shared and the second of two back-to-back runs tends to be
# faster), and prints each build's median wall time and the ratio new / base.
#
# The work: `tokenmill train --vocab-size 30000` on each of the four shared corpora, and
# `tokenmill encode` with cl100k_base on linux_docs and poetry (ids to /dev/null). The corpora
# are decompressed once beforehand, so that the times are tokenmill's, not zstd's.
#
# Usage: scripts/speed_compare.sh [RUNS]   (default 5 runs of each build for each job)
# Env: BASE, NEW (tokenmill binaries; NEW defaults to build/tokenmill), THREADS (default: all).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
base=${BASE:?set BASE to the tokenmill binary of the build before the change}
new=${NEW:-"$root/build/tokenmill"}
threads=${THREADS:-0}
shared="$root/../shared"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for c in brown linux_docs linux_c_100m poetry; do
  zstd -qdc "$shared/corpora/$c.txt.zst" > "$work/$c.txt"
done

# time_ms BIN ARGS...: the wall time of one run in milliseconds (to 0.01 ms).
time_ms() {
  local start end
  start=$(date +%s%N)
  "$@" > /dev/null
  end=$(date +%s%N)
  echo "$(( (end - start) / 10000 ))" | awk '{printf "%.2f", $1 / 100}'
}

median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

job() {  # job LABEL ARGS... (the tokenmill arguments, after the binary)
  local label=$1; shift
  : > "$work/base.times"; : > "$work/new.times"
  for ((i = 0; i < runs; i++)); do
    local order=(base new)
    if (( i % 2 == 1 )); then order=(new base); fi
    for side in "${order[@]}"; do
      local bin=$base; [[ $side == new ]] && bin=$new
      time_ms "$bin" "$@" >> "$work/$side.times"
      echo >> "$work/$side.times"
    done
  done
  local b n
  b=$(median < "$work/base.times"); n=$(median < "$work/new.times")
  printf "%-28s base %9.1f ms   new %9.1f ms   new/base %.3f   (runs: base %s; new %s)\n" \
    "$label" "$b" "$n" "$(awk -v b="$b" -v n="$n" 'BEGIN {print n / b}')" \
    "$(tr '\n' ' ' < "$work/base.times" | xargs)" "$(tr '\n' ' ' < "$work/new.times" | xargs)"
}

echo "base: $base"
echo "new:  $new"
echo "$runs runs each, alternating; threads: ${threads} (0: all $(nproc) cores)"
for c in brown linux_docs linux_c_100m poetry; do
  job "train $c" train --vocab-size 30000 --output "$work/t.json" --checkpoint=none --quiet \
    --threads "$threads" "$work/$c.txt"
done
for c in linux_docs poetry; do
  job "encode $c (cl100k)" encode --tokenizer "$shared/vocab/cl100k_base.tiktoken" \
    --threads "$threads" "$work/$c.txt"
done
