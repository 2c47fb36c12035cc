#!/usr/bin/env bash
# Python package benchmarks (issue 23), every tool in the same run, alternating, medians of RUNS
# runs, on a quiet machine:
#  - encode_batch: every line of each corpus (with its newline) with cl100k_base, from Python
#    (Tokenizer.from_file(cl100k_base.tiktoken).encode_batch, all cores) against Hugging Face's
#    encodeBatch (npm tokenizers, on tokenmill's tokenizer.json of the same vocabulary, which
#    scripts/hf_encode_parity.sh shows HF encodes as tiktoken does) and tiktoken's encode
#    (npm, one call per line); the encode calls alone are timed (scripts/python_encode.py,
#    scripts/peer_encode_batch.cjs). Token counts are printed to show the same work.
#  - the cost of one encode() call on a short string, against len() of it.
#  - train_from_iterator on a Python generator over linux_c_100m's lines against
#    `tokenmill train` on the file (vocab 30000, GPT-2 preset, no checkpoints): wall time of the
#    whole process and peak RSS (/usr/bin/time).
#
#   scripts/python_bench.sh [--runs N] [--pythonpath DIR] [CORPUS...]   (default linux_docs poetry)
# DIR holds the tokenmill package (default build-py/python, else the installed one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
runs=3
pythonpath="$root/build-py/python"
corpora=()
while (($# > 0)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --tokenmill) tm=$2; shift 2 ;;
    --pythonpath) pythonpath=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "python_bench.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || corpora=(linux_docs poetry)
export PYTHONPATH="$pythonpath${PYTHONPATH:+:$PYTHONPATH}"
py=/usr/bin/python3
vocab="$root/build/test_vocab/vocab"
[[ -f $vocab/cl100k_base.tiktoken ]] || { echo "python_bench.sh: $vocab/cl100k_base.tiktoken missing (build with tests)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
field() { $py -c "import json,sys; print(json.loads(sys.stdin.readline())['$1'])"; }
"$tm" convert "$vocab/cl100k_base.tiktoken" "$work/cl100k.json" 2>/dev/null
echo "tokenmill $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, $runs runs each, medians; $($py -c 'import tokenmill,sys; print("module", tokenmill.__file__)')"
for corpus in "${corpora[@]}"; do
  zstd -qdc "$root/../shared/corpora/$corpus.txt.zst" > "$work/all.txt"
  rm -f "$work"/enc_*
  for ((i = 0; i < runs; i++)); do
    jobs=(py hf tt)
    ((i % 2 == 1)) && jobs=(tt hf py)
    for job in "${jobs[@]}"; do
      case $job in
        py) $py "$root/scripts/python_encode.py" batch "$vocab/cl100k_base.tiktoken" "$work/all.txt" >> "$work/enc_py" ;;
        hf) node "$root/scripts/peer_encode_batch.cjs" hf "$work/cl100k.json" "$work/all.txt" >> "$work/enc_hf" ;;
        tt) node "$root/scripts/peer_encode_batch.cjs" tiktoken cl100k_base "$work/all.txt" >> "$work/enc_tt" ;;
      esac
    done
  done
  bytes=$(stat -c %s "$work/all.txt")
  echo
  echo "### $corpus: encoding every line with cl100k_base ($bytes bytes)"
  echo "| encoder | seconds (median) | MB/s | tokens |"
  echo "|---|---|---|---|"
  for job in py hf tt; do
    s=$($py -c "import json,sys; print('\n'.join(str(json.loads(l)['seconds']) for l in open(sys.argv[1])))" "$work/enc_$job" | median)
    t=$(head -1 "$work/enc_$job" | field tokens)
    name=$(case $job in py) echo "tokenmill encode_batch (Python)";; hf) echo "Hugging Face encodeBatch (npm)";; tt) echo "tiktoken encode per line (npm)";; esac)
    printf '| %s | %.3f | %.1f | %s |\n' "$name" "$s" "$(echo "$bytes / $s / 1000000" | bc -l)" "$t"
    echo "$s" > "$work/median_$job"
  done
  echo "tokenmill ÷ Hugging Face throughput: $(echo "$(cat "$work/median_hf") / $(cat "$work/median_py")" | bc -l | cut -c1-5); ÷ tiktoken: $(echo "$(cat "$work/median_tt") / $(cat "$work/median_py")" | bc -l | cut -c1-5)"
done
echo
echo "### one encode() call (cl100k_base, best of 5 x 200000 calls)"
$py "$root/scripts/python_encode.py" overhead "$vocab/cl100k_base.tiktoken"

zstd -qdc "$root/../shared/corpora/linux_c_100m.txt.zst" > "$work/c.txt"
rm -f "$work"/train_*
for ((i = 0; i < runs; i++)); do
  jobs=(file iter)
  ((i % 2 == 1)) && jobs=(iter file)
  for job in "${jobs[@]}"; do
    case $job in
      file) /usr/bin/time -f "%e %M" -o "$work/t.out" "$tm" train --vocab-size 30000 --checkpoint=none --quiet --output "$work/f.json" "$work/c.txt" ;;
      iter) /usr/bin/time -f "%e %M" -o "$work/t.out" $py "$root/scripts/python_encode.py" iterator "$work/c.txt" 30000 > /dev/null ;;
    esac
    cat "$work/t.out" >> "$work/train_$job"
  done
done
echo
echo "### training on linux_c_100m ($(stat -c %s "$work/c.txt") bytes), vocab 30000, whole process"
echo "| run | wall s (median) | peak RSS MB |"
echo "|---|---|---|"
for job in file iter; do
  s=$(awk '{print $1}' "$work/train_$job" | median)
  m=$(awk '{print $2}' "$work/train_$job" | median)
  name=$(case $job in file) echo "tokenmill train FILE (CLI)";; iter) echo "tokenmill.train_from_iterator(generator over the lines)";; esac)
  printf '| %s | %s | %.0f |\n' "$name" "$s" "$(echo "$m / 1024" | bc -l)"
  echo "$s" > "$work/median_$job"
done
echo "iterator ÷ file: $(echo "$(cat "$work/median_iter") / $(cat "$work/median_file")" | bc -l | cut -c1-5)"
