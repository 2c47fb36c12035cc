#!/usr/bin/env bash
# Behaviour unchanged: compares what two builds of tokenmill write, byte for byte, on real
# corpora. Made for changes that must not change any output (a restructuring, a speed-up).
#
# For each corpus, both builds:
#  - train a tokenizer (vocab VOCAB): native tokenizer.json, --hf-compat tokenizer.json,
#    --format tiktoken (the .tiktoken file and its JSON sidecar);
#  - count it (`tokenmill count`, the .tmc file);
#  - train to VOCAB/2 with a checkpoint, then resume it to VOCAB (a resume that goes on
#    training), and compare with the uninterrupted native tokenizer;
#  - train with a checkpoint every 1000 merges and SIGINT half way (exit 130 expected), then
#    resume to the end: compared with the uninterrupted tokenizer;
#  - the new build resumes the checkpoints the base build wrote (VOCAB/2 and the interrupted
#    one): the result must equal the base's uninterrupted tokenizer.
# Every pair of files must be identical; the script prints one line per comparison and exits 1
# if any differs.
#
# Usage: scripts/behaviour_check.sh [CORPUS...]   (default: the four corpora of ../shared)
#   CORPUS: a shared corpus name (brown, linux_docs, linux_c_100m, poetry) or a file.
# Env: BASE   the build before the change (a tokenmill binary; default: BASE_COMMIT built into
#             build-base-COMMIT/ from a git worktree of this repository)
#      BASE_COMMIT  default ace9bed (the build before issue 18)
#      NEW    the build to check (default build/tokenmill)
#      VOCAB  default 30000
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
vocab=${VOCAB:-30000}
new=${NEW:-"$root/build/tokenmill"}
base_commit=${BASE_COMMIT:-ace9bed}
if [[ -z ${BASE:-} ]]; then
  base_tree="$root/build-base-$base_commit/src"
  if [[ ! -x "$root/build-base-$base_commit/bin/tokenmill" ]]; then
    echo "building $base_commit into build-base-$base_commit/ ..." >&2
    rm -rf "$base_tree"
    git -C "$root" worktree add --detach "$base_tree" "$base_commit" >/dev/null 2>&1 ||
      { git -C "$root" worktree prune; git -C "$root" worktree add --detach "$base_tree" "$base_commit" >/dev/null; }
    cmake -S "$base_tree" -B "$root/build-base-$base_commit/bin" -DCMAKE_BUILD_TYPE=Release \
      -DTOKENMILL_BUILD_TESTS=OFF -DTOKENMILL_BUILD_BENCHMARKS=OFF >/dev/null
    cmake --build "$root/build-base-$base_commit/bin" -j "$(nproc)" --target tokenmill >/dev/null
  fi
  BASE="$root/build-base-$base_commit/bin/tokenmill"
fi
corpora=("$@")
if ((${#corpora[@]} == 0)); then corpora=(brown linux_docs linux_c_100m poetry); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

same() {  # same LABEL FILE_A FILE_B
  if cmp -s "$2" "$3"; then
    echo "  identical  $1 ($(stat -c %s "$2") bytes)"
  else
    echo "  DIFFERENT  $1: $2 vs $3"
    failures=$((failures + 1))
  fi
}

# interrupt BIN DIR CORPUS: trains with checkpoints, sends SIGINT half way, resumes to the end.
interrupt() {
  local bin=$1 dir=$2 corpus=$3 start ms rc=0
  start=$(date +%s%N)
  "$bin" train --vocab-size "$vocab" --output "$dir/full.json" --checkpoint=none --quiet "$corpus"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  "$bin" train --vocab-size "$vocab" --output "$dir/int.json" --checkpoint-every 1000 --quiet \
    "$corpus" 2>/dev/null &
  local pid=$!
  sleep "$(printf '%d.%03d' $((ms * 7 / 10000)) $((ms * 7 / 10 % 1000)))"
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" || rc=$?
  if [[ $rc == 130 ]]; then
    echo "  $(basename "$bin") interrupted: $("$bin" inspect "$dir/int.json.ckpt" | sed -n 's/^merges done: \([0-9]*\).*/\1/p') merges, exit 130"
    cp "$dir/int.json.ckpt" "$dir/interrupted.ckpt"
    cp "$dir/int.json.ckpt.words" "$dir/interrupted.ckpt.words" 2>/dev/null || true
    "$bin" train --resume "$dir/int.json.ckpt" --quiet
  else
    echo "  $(basename "$bin") finished before the signal (exit $rc): no interruption this time"
  fi
}

for corpus in "${corpora[@]}"; do
  if [[ ! -f "$corpus" && -f "$root/../shared/corpora/$corpus.txt.zst" ]]; then
    corpus="$root/../shared/corpora/$corpus.txt.zst"
  fi
  name=$(basename "$corpus"); name=${name%.zst}; name=${name%.txt}
  echo "== $name (vocab $vocab)"
  for side in base new; do
    bin=$BASE; [[ $side == new ]] && bin=$new
    d="$work/$name/$side"; mkdir -p "$d"
    "$bin" train --vocab-size "$vocab" --output "$d/native.json" --checkpoint=none --quiet "$corpus"
    "$bin" train --vocab-size "$vocab" --hf-compat --output "$d/hf.json" --checkpoint=none --quiet "$corpus"
    "$bin" train --vocab-size "$vocab" --format tiktoken --output "$d/t.tiktoken" --checkpoint=none --quiet "$corpus"
    "$bin" count --output "$d/counts.tmc" --quiet "$corpus"
    "$bin" train --vocab-size $((vocab / 2)) --output "$d/half.json" --quiet "$corpus"
    cp "$d/half.json.ckpt" "$d/half.ckpt"; cp "$d/half.json.ckpt.words" "$d/half.ckpt.words"
    "$bin" train --resume "$d/half.json.ckpt" --vocab-size "$vocab" --output "$d/extended.json" --quiet
    interrupt "$bin" "$d" "$corpus"
  done
  b="$work/$name/base" n="$work/$name/new"
  same "tokenizer.json" "$b/native.json" "$n/native.json"
  same "tokenizer.json --hf-compat" "$b/hf.json" "$n/hf.json"
  same ".tiktoken" "$b/t.tiktoken" "$n/t.tiktoken"
  same ".tiktoken sidecar" "$b/t.json" "$n/t.json"
  same "counts file" "$b/counts.tmc" "$n/counts.tmc"
  same "resumed from vocab/2 (new build)" "$b/native.json" "$n/extended.json"
  if [[ -f "$n/int.json" ]]; then same "interrupted, resumed (new build)" "$b/native.json" "$n/int.json"; fi
  # The base build's checkpoints, resumed by the new build.
  "$new" train --resume "$b/half.ckpt" --vocab-size "$vocab" --output "$n/from_base_half.json" --quiet
  same "base's vocab/2 checkpoint resumed by the new build" "$b/native.json" "$n/from_base_half.json"
  if [[ -f "$b/interrupted.ckpt" ]]; then
    "$new" train --resume "$b/interrupted.ckpt" --output "$n/from_base_int.json" --quiet
    same "base's interrupted checkpoint resumed by the new build" "$b/native.json" "$n/from_base_int.json"
  fi
  rm -rf "$work/$name"
done
if ((failures > 0)); then
  echo "$failures comparison(s) DIFFERENT"
  exit 1
fi
echo "all identical"
