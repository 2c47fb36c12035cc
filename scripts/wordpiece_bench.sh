#!/usr/bin/env bash
# WordPiece benchmarks (issue 21), every tool in the same run, alternating, on a quiet machine:
#
#  Training, vocab 30000, on each corpus (whole): `tokenmill train --algorithm wordpiece`
#  (likelihood, the default; and --wordpiece-score frequency), both with --lowercase
#  --strip-accents (what Hugging Face's bertNormalizer() does by default), tokenmill's own BPE
#  (`tokenmill train`, byte level, GPT-2 preset, its defaults), and Hugging Face's default
#  WordPieceTrainer (scripts/hf_wordpiece.cjs train: BertNormalizer, BertPreTokenizer). Wall
#  time of the whole process and peak RSS (/usr/bin/time), median of RUNS runs.
#  Encoding on one core (taskset -c 0): the likelihood tokenizer.json, every line of the corpus;
#  tokenmill's in-process time (`inspect --corpus`) against Hugging Face's encodeBatch time
#  (scripts/hf_wordpiece.cjs encode --time), median of RUNS runs.
#  Quality: tokens per word on the held-out slice (the corpus's last 1 MB of whole lines; the
#  tokenizers then train on the rest), likelihood against frequency scoring, and likelihood with
#  --min-frequency 10 and 100.
#
#   scripts/wordpiece_bench.sh [--tokenmill BIN] [--runs N] CORPUS...   (default linux_docs poetry)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
runs=3
corpora=()
while (($# > 0)); do
  case "$1" in
    --tokenmill) tm=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "wordpiece_bench.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || corpora=(linux_docs poetry)
hf="$root/scripts/hf_wordpiece.cjs"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# measure LABEL CMD...: appends "seconds peak_kb" of one run to $work/LABEL.
measure() {
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/time.out" "$@" > /dev/null 2> "$work/err.out" ||
    { cat "$work/err.out" >&2; return 1; }
  cat "$work/time.out" >> "$work/$label"
}
echo "tokenmill $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, $runs runs each, medians"
for corpus in "${corpora[@]}"; do
  zstd -qdc "$root/../shared/corpora/$corpus.txt.zst" > "$work/all.txt"
  rm -f "$work"/train_* "$work"/encode_*
  common=(train --vocab-size 30000 --checkpoint=none --quiet)
  wp=(--algorithm wordpiece --lowercase --strip-accents)
  for ((i = 0; i < runs; i++)); do
    jobs=(like freq bpe hf)
    ((i % 2 == 1)) && jobs=(hf bpe freq like)
    for job in "${jobs[@]}"; do
      case $job in
        like) measure train_like "$tm" "${common[@]}" "${wp[@]}" --output "$work/like.json" "$work/all.txt" ;;
        freq) measure train_freq "$tm" "${common[@]}" "${wp[@]}" --wordpiece-score frequency --output "$work/freq.json" "$work/all.txt" ;;
        bpe) measure train_bpe "$tm" "${common[@]}" --output "$work/bpe.json" "$work/all.txt" ;;
        hf) measure train_hf node "$hf" train "$work/all.txt" "$work/hf.json" ;;
      esac
    done
  done
  echo
  echo "### $corpus: training ($(stat -c %s "$work/all.txt") bytes, vocab 30000)"
  echo "| trainer | wall s (median) | peak RSS MB | vocab reached |"
  echo "|---|---|---|---|"
  for job in like freq bpe hf; do
    s=$(awk '{print $1}' "$work/train_$job" | median)
    m=$(awk '{print $2}' "$work/train_$job" | median)
    out="$work/$job.json"
    v=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['model']['vocab']))" "$out")
    name=$(case $job in like) echo "tokenmill wordpiece likelihood";; freq) echo "tokenmill wordpiece frequency";;
           bpe) echo "tokenmill BPE (byte level, gpt2)";; hf) echo "Hugging Face WordPieceTrainer";; esac)
    printf '| %s | %s | %.0f | %s |\n' "$name" "$s" "$(echo "$m / 1024" | bc -l)" "$v"
    echo "$s" > "$work/median_$job"
  done
  like=$(cat "$work/median_like"); bpe=$(cat "$work/median_bpe"); hfs=$(cat "$work/median_hf")
  echo "likelihood / BPE: $(echo "$like / $bpe" | bc -l | cut -c1-5); Hugging Face / likelihood: $(echo "$hfs / $like" | bc -l | cut -c1-5)"
  # Encoding, one core.
  for ((i = 0; i < runs; i++)); do
    taskset -c 0 "$tm" inspect --corpus "$work/all.txt" "$work/like.json" |
      awk '/encoded in/ {gsub(/\(/, ""); print $3}' >> "$work/encode_tm"
    taskset -c 0 node "$hf" encode "$work/like.json" "$work/all.txt" --time --no-output 2>&1 |
      sed -n 's/.*encode_s=\([0-9.]*\).*/\1/p' >> "$work/encode_hf"
  done
  bytes=$(stat -c %s "$work/all.txt")
  tm_s=$(median < "$work/encode_tm"); hf_s=$(median < "$work/encode_hf")
  echo
  echo "### $corpus: encoding on one core (taskset -c 0), the likelihood tokenizer.json"
  echo "| encoder | seconds (median) | MB/s |"
  echo "|---|---|---|"
  printf '| tokenmill (in process) | %s | %.1f |\n' "$tm_s" "$(echo "$bytes / 1000000 / $tm_s" | bc -l)"
  printf '| Hugging Face encodeBatch | %s | %.1f |\n' "$hf_s" "$(echo "$bytes / 1000000 / $hf_s" | bc -l)"
  echo "tokenmill / Hugging Face throughput: $(echo "$hf_s / $tm_s" | bc -l | cut -c1-5)"
  # Quality on a held-out slice.
  /usr/bin/python3 - "$work/all.txt" "$work/train.txt" "$work/held.txt" <<'PY'
import sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')
if lines and lines[-1] == b'':
    lines.pop()
lines = [l + b'\n' for l in lines]
size, cut = 0, len(lines)
while cut > 0 and size + len(lines[cut - 1]) <= 1000000:
    cut -= 1
    size += len(lines[cut])
open(sys.argv[2], 'wb').write(b''.join(lines[:cut]))
open(sys.argv[3], 'wb').write(b''.join(lines[cut:]))
PY
  words=$("$tm" pretokenize --preset bert --lowercase --strip-accents "$work/held.txt" | wc -l)
  echo
  echo "### $corpus: tokens per word on the held-out 1 MB ($words words), trained on the rest"
  echo "| scoring | tokens | tokens/word |"
  echo "|---|---|---|"
  for variant in "likelihood" "likelihood --min-frequency 10" "likelihood --min-frequency 100" "frequency"; do
    read -r score rest <<< "$variant"
    # shellcheck disable=SC2086
    "$tm" "${common[@]}" "${wp[@]}" --wordpiece-score "$score" $rest --output "$work/q.json" "$work/train.txt"
    tokens=$("$tm" encode --tokenizer "$work/q.json" "$work/held.txt" | wc -w)
    printf '| %s | %s | %.3f |\n' "$variant" "$tokens" "$(echo "$tokens / $words" | bc -l)"
  done
done
