#!/usr/bin/env bash
# What checkpoints cost and what resuming saves, on one corpus, in one session (issue 6):
#  - the uninterrupted run without checkpoints vs with --checkpoint-every N (default 1000),
#    alternating run by run, RUNS runs each: medians of wall time, the overhead in %, peak RSS;
#  - the checkpoint's size and the summed time of its writes (from the run's summary);
#  - resuming from the finished run's checkpoint (load + replay + pair counts; the merge loop
#    then has nothing left to do): median wall time of the whole `train --resume` process and
#    its share of the uninterrupted run's time.
#
# Usage: scripts/checkpoint_bench.sh CORPUS [RUNS] [VOCAB_SIZE]
#   CORPUS: a text file, a .zst file (decompressed first) or a shared corpus name
#           (brown, linux_docs, linux_c_100m, poetry).
# Env: TOKENMILL (binary; default build/tokenmill), THREADS (default 2), EVERY (default 1000).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:?usage: scripts/checkpoint_bench.sh CORPUS [RUNS] [VOCAB_SIZE]}
runs=${2:-3}
vocab=${3:-30000}
tokenmill=${TOKENMILL:-"$root/build/tokenmill"}
threads=${THREADS:-2}
every=${EVERY:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ ! -f "$corpus" && -f "$root/../shared/corpora/$corpus.txt.zst" ]]; then
  corpus="$root/../shared/corpora/$corpus.txt.zst"
fi
name=$(basename "$corpus"); name=${name%.zst}; name=${name%.txt}
if [[ "$corpus" == *.zst ]]; then
  zstd -qdc "$corpus" > "$work/corpus.txt"
  corpus="$work/corpus.txt"
fi

# run LABEL ARGS...: runs tokenmill under /usr/bin/time; appends "wall rss_kb" to $work/LABEL.
run() {
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.txt" "$tokenmill" "$@" 2> "$work/$label.log" > /dev/null
  cat "$work/time.txt" >> "$work/$label"
}
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
median_col2() { awk '{ print $2 }' "$1" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

train=(train --vocab-size "$vocab" --threads "$threads" --output "$work/out.json")
run_none() { run none "${train[@]}" --checkpoint=none "$corpus"; }
run_every() {
  rm -f "$work/run.ckpt" "$work/run.ckpt.words"
  run every "${train[@]}" --checkpoint "$work/run.ckpt" --checkpoint-every "$every" "$corpus"
  grep -o 'checkpoint: .*' "$work/every.log" >> "$work/writes.txt" || true
}
# The order alternates (none first, then every first): on this machine the second of two
# back-to-back runs was measured faster (a resume ran about 6% faster second).
for ((i = 0; i < runs; i++)); do
  if ((i % 2 == 0)); then run_none; run_every; else run_every; run_none; fi
done
cp "$work/out.json" "$work/full.json"
for ((i = 0; i < runs; i++)); do
  run resume train --resume "$work/run.ckpt" --output "$work/resumed.json" --checkpoint=none --quiet=false
  grep -o 'time: .*' "$work/resume.log" >> "$work/resume_phases.txt"
done
cmp -s "$work/full.json" "$work/resumed.json" || { echo "resumed output differs!" >&2; exit 1; }

none=$(median "$work/none"); every_t=$(median "$work/every"); resume=$(median "$work/resume")
# A checkpoint is CKPT (merges, rewritten each time) + CKPT.words (the table, written once).
size=$(( $(stat -c %s "$work/run.ckpt") + $(stat -c %s "$work/run.ckpt.words") ))
echo "corpus: $name, vocab $vocab, $threads threads, $runs runs each (medians), tokenmill at $(git -C "$root" rev-parse --short HEAD)"
echo
echo "| corpus | no checkpoints | every $every merges | overhead | checkpoint size | writes (last run) | resume (load + replay) | resume / full run |"
echo "|---|---|---|---|---|---|---|---|"
awk -v n="$name" -v a="$none" -v b="$every_t" -v r="$resume" -v s="$size" -v w="$(tail -1 "$work/writes.txt" | sed 's/.*(\([^;]*\);.*/\1/')" \
  'BEGIN { printf "| %s | %.2f s | %.2f s | %+.1f%% | %.1f MB | %s | %.2f s | %.1f%% |\n", n, a, b, 100 * (b - a) / a, s / 1e6, w, r, 100 * r / a }'
echo
echo "peak RSS (median): no checkpoints $(median_col2 "$work/none") KB, every $every $(median_col2 "$work/every") KB, resume $(median_col2 "$work/resume") KB"
echo "all runs (wall s, RSS KB): none: $(tr '\n' ' ' < "$work/none")| every: $(tr '\n' ' ' < "$work/every")| resume: $(tr '\n' ' ' < "$work/resume")"
echo "resume phases (each run):"
sed 's/^/  /' "$work/resume_phases.txt"
