#!/usr/bin/env bash
# What checkpoints cost and what resuming saves, on one corpus, in one session (issue 6):
#  - the uninterrupted run without checkpoints vs with --checkpoint-every N (default 1000),
#    alternating run by run, RUNS runs each: medians of wall time, the overhead in %, peak RSS;
#  - the checkpoint's size and the summed time of its writes (from the run's summary);
#  - resuming from the finished run's checkpoint (load + replay; with no merge left, the pair
#    counts are not rebuilt): median wall time of the whole `train --resume` process and its
#    share of the uninterrupted run's time;
#  - resuming it with --vocab-size VOCAB_SIZE + 1000 (load + replay + the pair counts of the
#    pairs that can still be merged + 1000 merges): the whole process, and its restore time
#    (all but the merge phase and writing the tokenizer, which an uninterrupted run does as
#    well) as a share of the uninterrupted run's time.
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
# The wall time is taken with microseconds around /usr/bin/time (whose %e has 10 ms steps, too
# coarse for a 60 ms resume); it includes starting /usr/bin/time itself (about 1 ms).
run() {
  local label=$1; shift
  local t0=$EPOCHREALTIME
  /usr/bin/time -f "%M" -o "$work/time.txt" "$tokenmill" "$@" 2> "$work/$label.log" > /dev/null
  local t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') $(cat "$work/time.txt")" >> "$work/$label"
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
# Resuming to extend the finished run by 1000 merges: the pair table and queue are rebuilt too
# (a resume with no merge left skips them). Its restore time is the whole process minus its
# merge and write phases (from the summary line, in ms); the output is checked against an
# uninterrupted run.
ext=$((vocab + 1000))
run full_ext train --vocab-size "$ext" --threads "$threads" --output "$work/full_ext.json" --checkpoint=none "$corpus"
for ((i = 0; i < runs; i++)); do
  run extend train --resume "$work/run.ckpt" --vocab-size "$ext" --output "$work/extended.json" --checkpoint=none --quiet=false
  phases=$(grep -o 'time: .*' "$work/extend.log")
  echo "$phases" >> "$work/extend_phases.txt"
  merge_s=$(echo "$phases" | grep -o 'merges [0-9.]* s' | awk '{ print $2 }')
  write_s=$(echo "$phases" | grep -o 'write [0-9.]* s' | awk '{ print $2 }')
  tail -1 "$work/extend" | awk -v m="$merge_s" -v w="$write_s" '{ printf "%.4f\n", $1 - m - w }' >> "$work/restore"
done
cmp -s "$work/full_ext.json" "$work/extended.json" || { echo "extended output differs!" >&2; exit 1; }

none=$(median "$work/none"); every_t=$(median "$work/every"); resume=$(median "$work/resume")
# A checkpoint is CKPT (merges, rewritten each time) + CKPT.words (the table, written once).
size=$(( $(stat -c %s "$work/run.ckpt") + $(stat -c %s "$work/run.ckpt.words") ))
echo "corpus: $name, vocab $vocab, $threads threads, $runs runs each (medians), tokenmill at $(git -C "$root" rev-parse --short HEAD)"
echo
echo "| corpus | no checkpoints | every $every merges | overhead | checkpoint size | writes (last run) | resume (load + replay) | resume / full run |"
echo "|---|---|---|---|---|---|---|---|"
awk -v n="$name" -v a="$none" -v b="$every_t" -v r="$resume" -v s="$size" -v w="$(tail -1 "$work/writes.txt" | sed 's/.*(\([^;]*\);.*/\1/')" \
  'BEGIN { printf "| %s | %.3f s | %.3f s | %+.1f%% | %.1f MB | %s | %.3f s | %.1f%% |\n", n, a, b, 100 * (b - a) / a, s / 1e6, w, r, 100 * r / a }'
echo
extend=$(median "$work/extend"); restore=$(median "$work/restore")
echo "| corpus | resume extending to $ext | its restore (all but merging and writing) | restore / full run |"
echo "|---|---|---|---|"
awk -v n="$name" -v a="$none" -v e="$extend" -v r="$restore" \
  'BEGIN { printf "| %s | %.3f s | %.3f s | %.1f%% |\n", n, e, r, 100 * r / a }'
echo
echo "peak RSS (median): no checkpoints $(median_col2 "$work/none") KB, every $every $(median_col2 "$work/every") KB, resume $(median_col2 "$work/resume") KB, resume extending $(median_col2 "$work/extend") KB"
echo "all runs (wall s, RSS KB): none: $(tr '\n' ' ' < "$work/none")| every: $(tr '\n' ' ' < "$work/every")| resume: $(tr '\n' ' ' < "$work/resume")| extend: $(tr '\n' ' ' < "$work/extend")"
echo "resume phases (each run):"
sed 's/^/  /' "$work/resume_phases.txt"
echo "resume extending, phases (each run):"
sed 's/^/  /' "$work/extend_phases.txt"
