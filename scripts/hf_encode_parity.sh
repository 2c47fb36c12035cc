#!/usr/bin/env bash
# Parity of `tokenmill encode` with Hugging Face tokenizers (npm `tokenizers@0.23.2`, Rust core)
# on tokenizer.json files that tokenmill wrote: proof that they load in HF and encode the same.
#
#   scripts/hf_encode_parity.sh [--build DIR] [--tokenizers "A.json B.json"]
#                               [--corpora "brown linux_docs linux_c_100m poetry"] [--modes "lines whole"]
#
# Without --tokenizers it makes two: cl100k_base converted by `tokenmill convert` (a big tiktoken
# vocabulary with the cl100k Split regex and ignore_merges), and a 30000-token tokenizer that
# `tokenmill train` learns from brown (gpt2 preset, ByteLevel). Each tokenizer encodes each
# corpus line by line and whole-file with both tools; prints ids compared and differing lines;
# exit 1 on any difference.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared="$root/../shared"
build="$root/build"
tokenizers=""
corpora="brown linux_docs linux_c_100m poetry"
modes="lines whole"
while (($# > 0)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --tokenizers) tokenizers=$2; shift 2 ;;
    --corpora) corpora=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    *) echo "hf_encode_parity.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
"$root/scripts/install_peers.sh"
[[ -x "$build/tokenmill" ]] || { echo "hf_encode_parity.sh: build first (scripts/build.sh $build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "$tokenizers" ]]; then
  "$build/tokenmill" convert "$shared/vocab/cl100k_base.tiktoken" "$tmp/cl100k_base.json"
  zstd -dc "$shared/corpora/brown.txt.zst" > "$tmp/brown.txt"
  "$build/tokenmill" train --vocab-size 30000 --quiet --output "$tmp/brown_30k.json" "$tmp/brown.txt"
  tokenizers="$tmp/cl100k_base.json $tmp/brown_30k.json"
fi
status=0
for corpus in $corpora; do
  zstd -dc "$shared/corpora/$corpus.txt.zst" > "$tmp/text"
  for tokenizer in $tokenizers; do
    for mode in $modes; do
      flag=(); [[ $mode == whole ]] && flag=(--whole)
      node "$root/scripts/peer_encode.cjs" hf "$tokenizer" "$tmp/text" "${flag[@]}" > "$tmp/expected"
      "$build/tokenmill" encode --tokenizer "$tokenizer" "${flag[@]}" "$tmp/text" > "$tmp/actual"
      python3 - "$(basename "$tokenizer") $corpus $mode" "$tmp/expected" "$tmp/actual" <<'PY' || status=1
import sys
label, a, b = sys.argv[1:]
ids = differing = 0
with open(a) as fa, open(b) as fb:
    for n, (x, y) in enumerate(zip(fa, fb), 1):
        ids += x.count(" ") + (x.strip() != "")
        if x != y:
            if differing == 0:
                print(f"  first difference at output line {n}:\n    hf:        {x[:200].strip()}\n    tokenmill: {y[:200].strip()}")
            differing += 1
    rest_a, rest_b = fa.read(), fb.read()
    differing += max(rest_a.count("\n"), rest_b.count("\n"))
print(f"{label}: {ids} ids compared, {differing} lines differ")
sys.exit(1 if differing else 0)
PY
    done
  done
done
exit $status
