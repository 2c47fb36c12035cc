#!/usr/bin/env bash
# What two cores give this machine for `tokenmill encode --output-format u32` itself, beside
# what `--threads 2` gets from them: the ceiling for the "x from 1 to 2 threads" target of
# bench/RESULTS.md (corpus encoding), measured on the job rather than on synthetic loops
# (scripts/parallel_ceiling.sh).
#
# For each corpus and vocabulary, alternating, medians of RUNS (process start to exit):
#   one      one process, --threads 1, the whole corpus
#   threads  one process, --threads 2, the whole corpus
#   halves   two processes at once, --threads 1 each, each on one half of the corpus (cut at
#            the line nearest the middle): the same job split the shared-nothing way
#   wholes   two processes at once, --threads 1 each, each on the whole corpus: twice the
#            work of `one`, each process as warm as `one` (its own caches see every line)
#   empty    one process on an empty file, --threads 1 and --threads 2: the start-up (process
#            start, loading the vocabulary, making the output), which a second thread shortens
#            little
# and prints one ÷ threads, one ÷ halves, and 2 × one ÷ wholes: how much faster two cores run
# the 1-thread job when each core runs one copy of it, with nothing shared between them. A
# threaded run can beat that only by doing less work per core than one thread does. The
# start-up is printed beside them: it is part of both runs' times and is not halved by a thread.
# The vocabulary cache (model/vocab_cache.h) is a folder of this run's, filled before any clock.
#
#   scripts/encode_ceiling.sh [--runs N] [CORPUS...]   (default: 11 runs; linux_docs linux_c_100m poetry)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
runs=11
corpora=()
while (($# > 0)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "encode_ceiling.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || corpora=(linux_docs linux_c_100m poetry)
vocab="$root/build/test_vocab/vocab"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
encode() {  # THREADS INPUT OUTPUT
  "$tm" encode --tokenizer "$vocab/$enc.tiktoken" --output-format u32 --output "$3" \
    --threads "$1" --progress none "$2"
}
export TOKENMILL_CACHE_DIR="$work/vocab_cache"
for enc in cl100k_base o200k_base; do encode 1 /dev/null "$work/warm.u32"; done
rm -f "$work/warm.u32"
echo "tokenmill $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, $runs runs, medians"
echo
: > "$work/empty.txt"
echo "| corpus | vocabulary | 1 thread | --threads 2 | 1 ÷ threads | two processes on halves | 1 ÷ halves | two processes on the whole | ceiling: 2 × 1 ÷ wholes | start-up (empty input), 1 / 2 threads |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for corpus in "${corpora[@]}"; do
  zstd -qdc "$root/../shared/corpora/$corpus.txt.zst" > "$work/all.txt"
  (cd "$work" && split -n l/2 -d all.txt half.)  # half.00, half.01: whole lines each
  sync
  for enc in cl100k_base o200k_base; do
    rm -f "$work"/t_*
    for ((i = 0; i < runs; i++)); do
      jobs=(one threads halves wholes empty1 empty2)
      ((i % 2 == 1)) && jobs=(empty2 empty1 wholes halves threads one)
      for job in "${jobs[@]}"; do
        rm -f "$work"/*.u32
        sync  # the run before: its output's writeback is its own
        start=$EPOCHREALTIME  # bash's clock: no process of its own inside the timing
        case $job in
          one) encode 1 "$work/all.txt" "$work/a.u32" ;;
          threads) encode 2 "$work/all.txt" "$work/a.u32" ;;
          halves) encode 1 "$work/half.00" "$work/a.u32" & encode 1 "$work/half.01" "$work/b.u32"; wait $! ;;
          wholes) encode 1 "$work/all.txt" "$work/a.u32" & encode 1 "$work/all.txt" "$work/b.u32"; wait $! ;;
          empty1) encode 1 "$work/empty.txt" "$work/a.u32" ;;
          empty2) encode 2 "$work/empty.txt" "$work/a.u32" ;;
        esac
        end=$EPOCHREALTIME
        echo "$end - $start" | bc >> "$work/t_$job"
      done
    done
    one=$(median < "$work/t_one"); threads=$(median < "$work/t_threads")
    halves=$(median < "$work/t_halves"); wholes=$(median < "$work/t_wholes")
    empty1=$(median < "$work/t_empty1"); empty2=$(median < "$work/t_empty2")
    printf '| %s | %s | %.4f s | %.4f s | %.3f× | %.4f s | %.3f× | %.4f s | %.3f× | %.1f / %.1f ms |\n' \
      "$corpus" "$enc" "$one" "$threads" "$(echo "$one / $threads" | bc -l)" "$halves" \
      "$(echo "$one / $halves" | bc -l)" "$wholes" "$(echo "2 * $one / $wholes" | bc -l)" \
      "$(echo "$empty1 * 1000" | bc -l)" "$(echo "$empty2 * 1000" | bc -l)"
  done
done
