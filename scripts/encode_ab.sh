#!/usr/bin/env bash
# A/B of two tokenmill binaries on `encode --output-format u32` of shared corpora, whole process,
# the two runs alternating (old, new, old, new, ...), medians; each run's output md5 is compared.
# Usage: scripts/encode_ab.sh OLD_BINARY NEW_BINARY RUNS THREADS CORPUS...
#   e.g. scripts/encode_ab.sh /tmp/tm_before build/tokenmill 7 2 linux_docs linux_c_100m poetry
# Corpora are decompressed once into $ENCODE_AB_DIR (default /tmp/encode_ab). The tokenizers:
# cl100k_base and o200k_base, or the files in $ENCODE_AB_TOKENIZERS (space-separated paths,
# e.g. a tokenizer.json that `tokenmill train` wrote).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
old=$1 new=$2 runs=$3 threads=$4
shift 4
vocab="$root/build/test_vocab/vocab"
dir=${ENCODE_AB_DIR:-/tmp/encode_ab}
mkdir -p "$dir"
read -r -a tokenizers <<<"${ENCODE_AB_TOKENIZERS:-$vocab/cl100k_base.tiktoken $vocab/o200k_base.tiktoken}"
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for corpus in "$@"; do
  [[ -f "$dir/$corpus.txt" ]] || zstd -qdc "$root/../shared/corpora/$corpus.txt.zst" > "$dir/$corpus.txt"
  for tokenizer in "${tokenizers[@]}"; do
    enc=$(basename "$tokenizer")
    rm -f "$dir"/times_* "$dir"/sums_*
    for ((i = 0; i < runs; i++)); do
      for which in old new; do
        bin=$([[ $which == old ]] && echo "$old" || echo "$new")
        rm -f "$dir/out.u32"
        sync  # the last run's output written back now, not inside this run's clock
        start=${EPOCHREALTIME//[.,]/}  # microseconds, read by bash: no clock process timed with the run
        "$bin" encode --tokenizer "$tokenizer" --output-format u32 --output "$dir/out.u32" \
          --threads "$threads" --progress none "$dir/$corpus.txt"
        end=${EPOCHREALTIME//[.,]/}
        echo $(( (end - start) / 1000 )) >> "$dir/times_$which"
        md5sum < "$dir/out.u32" >> "$dir/sums_$which"
      done
    done
    same=$(cmp -s "$dir/sums_old" "$dir/sums_new" && echo same || echo DIFFERENT)
    echo "$corpus $enc threads $threads: old $(median < "$dir/times_old") ms, new $(median < "$dir/times_new") ms, output $same"
  done
done
