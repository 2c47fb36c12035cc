#!/usr/bin/env bash
# Hugging Face parity of `tokenmill train --hf-compat`: trains each corpus with Hugging Face
# tokenizers 0.23.2 (npm, Rust core; its default BpeTrainer, vocab 30000, ByteLevel
# pre-tokenizer without prefix space, GPT-2 regex: scripts/compare/hf_train.js) and with
# tokenmill (--hf-compat --vocab-size 30000 --preset gpt2), then compares the merge lists and
# vocabularies (token -> id) rank by rank. Exit status 0 only if every corpus has zero differing
# merges and zero differing ids. Not part of CI: Hugging Face needs ~211 s and 6.3 GB on poetry.
#
# Character level (issue 20): --char metaspace|whitespace trains HF's default BpeTrainer with
# that pre-tokenizer set (no ByteLevel) and tokenmill with --unit char --hf-compat
# --byte-fallback=false --preset metaspace|whitespace; --nfkc sets HF's NFKC normalizer and
# tokenmill's --normalize nfkc.
#
# Usage: scripts/hf_parity.sh [--tokenmill BIN] [--build-dir DIR] [--out DIR] [--threads N]
#                             [--char metaspace|whitespace [--nfkc]] CORPUS...
# CORPUS: a text file (.zst is decompressed first) or a shared corpus name (brown, linux_docs,
# linux_c_100m, poetry: ../shared/corpora/NAME.txt.zst). Installs tokenizers@0.23.2 into
# scripts/.peers if missing. Prints one line per corpus and leaves both tokenizer.json files,
# the time/RSS logs and the first differences in --out (default out/hf_parity/<date>-<time>).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
peers="$root/scripts/.peers"
tokenmill=""
build_dir="$root/build"
out_dir="$root/out/hf_parity/$(date +%Y%m%d-%H%M%S)"
threads=$(nproc)
char=""
nfkc=""
corpora=()
while (($# > 0)); do
  case "$1" in
    --tokenmill) tokenmill=$2; shift 2 ;;
    --build-dir) build_dir=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --char) char=$2; shift 2 ;;
    --nfkc) nfkc=nfkc; shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "hf_parity.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
if ((${#corpora[@]} == 0)); then
  echo "hf_parity.sh: no corpus given (e.g. brown linux_docs poetry)" >&2
  exit 2
fi
if [[ ! -d "$peers/node_modules/tokenizers" ]]; then
  npm install --silent --prefix "$peers" tokenizers@0.23.2 >&2
fi
if [[ -z "$tokenmill" ]]; then
  "$root/scripts/build.sh" "$build_dir" >/dev/null
  tokenmill="$build_dir/tokenmill"
fi
mkdir -p "$out_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

status=0
for corpus in "${corpora[@]}"; do
  if [[ ! -e "$corpus" && -e "$root/../shared/corpora/$corpus.txt.zst" ]]; then
    corpus="$root/../shared/corpora/$corpus.txt.zst"
  fi
  name=$(basename "$corpus"); name=${name%.zst}; name=${name%.txt}
  text="$corpus"
  if [[ "$corpus" == *.zst ]]; then
    text="$work/$name.txt"
    zstd -dqf "$corpus" -o "$text"
  fi
  hf_json="$out_dir/$name.hf.json"
  tm_json="$out_dir/$name.tokenmill.json"
  hf_args=() tm_args=(--preset gpt2)
  if [[ -n "$char" ]]; then
    hf_args=("$char" ${nfkc:+nfkc})
    tm_args=(--unit char --byte-fallback=false --preset "$char" ${nfkc:+--normalize nfkc})
  fi
  /usr/bin/time -v -o "$out_dir/$name.hf.time" \
    node "$root/scripts/compare/hf_train.js" "$peers/node_modules" "$text" "$hf_json" \
    "${hf_args[@]}" >/dev/null
  /usr/bin/time -v -o "$out_dir/$name.tokenmill.time" \
    "$tokenmill" train --hf-compat --vocab-size 30000 "${tm_args[@]}" --threads "$threads" \
    --quiet --checkpoint none --output "$tm_json" "$text"
  if ! python3 - "$name" "$hf_json" "$tm_json" "$out_dir/$name.diff.txt" \
      "$out_dir/$name.hf.time" "$out_dir/$name.tokenmill.time" <<'EOF'
import json, re, sys
name, hf_path, tm_path, diff_path, hf_time, tm_time = sys.argv[1:]
def merges(path):
    model = json.load(open(path, encoding='utf-8'))['model']
    return [tuple(m.split(' ', 1)) if isinstance(m, str) else tuple(m) for m in model['merges']], model['vocab']
def usage(path):
    text = open(path).read()
    wall = re.search(r'Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)', text).group(1)
    seconds = sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall.split(':'))))
    rss = int(re.search(r'Maximum resident set size \(kbytes\): (\d+)', text).group(1))
    return seconds, rss / 1024 / 1024
hf_merges, hf_vocab = merges(hf_path)
tm_merges, tm_vocab = merges(tm_path)
differing = [i for i in range(max(len(hf_merges), len(tm_merges)))
             if i >= len(hf_merges) or i >= len(tm_merges) or hf_merges[i] != tm_merges[i]]
id_diff = sorted(t for t in set(hf_vocab) | set(tm_vocab) if hf_vocab.get(t) != tm_vocab.get(t))
with open(diff_path, 'w', encoding='utf-8') as out:
    for i in differing[:50]:
        out.write(f'merge {i}: hf {hf_merges[i] if i < len(hf_merges) else None} '
                  f'tokenmill {tm_merges[i] if i < len(tm_merges) else None}\n')
    for t in id_diff[:50]:
        out.write(f'token {t!r}: hf id {hf_vocab.get(t)} tokenmill id {tm_vocab.get(t)}\n')
(hs, hr), (ts, tr) = usage(hf_time), usage(tm_time)
print(f'{name}: {len(differing)} differing merges of {len(hf_merges)} (hf) / {len(tm_merges)} '
      f'(tokenmill), {len(id_diff)} differing ids; hf {hs:.1f} s {hr:.2f} GB, '
      f'tokenmill {ts:.1f} s {tr:.2f} GB')
sys.exit(0 if not differing and not id_diff else 1)
EOF
  then
    status=1
    echo "  first differences: $out_dir/$name.diff.txt"
  fi
done
exit $status
