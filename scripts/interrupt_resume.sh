#!/usr/bin/env bash
# Interrupts `tokenmill train` on a large corpus at random moments (SIGINT or SIGKILL), resumes
# it until it finishes, and checks that the tokenizer is byte-identical to an uninterrupted run.
# Prints how many rounds a signal actually interrupted (exit 130 for SIGINT, 137 for SIGKILL);
# a round that finished before its signal is said so, and a run in which no round was
# interrupted fails: it would show nothing. (The GoogleTest version, which interrupts every
# round for certain, is Interrupt*/InterruptedTraining in tests/checkpoint_resume_test.cc.)
#
# Usage: scripts/interrupt_resume.sh CORPUS [ROUNDS] [VOCAB_SIZE]
#   CORPUS: a text file (a .zst file is decompressed to a temporary folder first)
#   ROUNDS: interrupted rounds before the last one runs to the end (default 6)
#   VOCAB_SIZE: default 30000
# Env: TOKENMILL (binary; default build/tokenmill), CHECKPOINT_EVERY (default 500).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:?usage: scripts/interrupt_resume.sh CORPUS [ROUNDS] [VOCAB_SIZE]}
rounds=${2:-6}
vocab=${3:-30000}
tokenmill=${TOKENMILL:-"$root/build/tokenmill"}
every=${CHECKPOINT_EVERY:-500}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ "$corpus" == *.zst ]]; then
  zstd -qdc "$corpus" > "$work/corpus.txt"
  corpus="$work/corpus.txt"
fi

start=$(date +%s%N)
"$tokenmill" train --vocab-size "$vocab" --output "$work/reference.json" --checkpoint=none --quiet "$corpus"
full_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "uninterrupted run: ${full_ms} ms"

interrupted=0
out="$work/out.json"
ckpt="$out.ckpt"
for ((round = 0; round <= rounds; round++)); do
  if [[ -f "$ckpt" ]]; then
    args=(train --resume "$ckpt" --output "$out" --checkpoint-every "$every" --quiet)
  else
    args=(train --vocab-size "$vocab" --output "$out" --checkpoint-every "$every" --quiet "$corpus")
  fi
  "$tokenmill" "${args[@]}" 2>"$work/err.txt" &
  pid=$!
  if ((round < rounds)); then
    delay_ms=$(( RANDOM % (full_ms > 0 ? full_ms : 1000) ))
    sig=$([[ $((RANDOM % 2)) == 0 ]] && echo INT || echo KILL)
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    kill -s "$sig" "$pid" 2>/dev/null || true
  else
    sig=none
  fi
  rc=0
  wait "$pid" || rc=$?
  merges="no checkpoint"
  if [[ -f "$ckpt" ]]; then
    merges=$("$tokenmill" inspect "$ckpt" | sed -n 's/^merges done: \([0-9]*\).*/\1 merges/p')
  fi
  echo "round $round: signal $sig, exit $rc, checkpoint: $merges"
  if [[ $rc == 0 ]]; then
    [[ $sig == none ]] || echo "round $round finished before its signal: not interrupted"
    break
  fi
  if [[ $sig == INT && $rc != 130 ]] || [[ $sig == KILL && $rc != 137 ]]; then
    echo "error: SIG$sig should exit with $([[ $sig == INT ]] && echo 130 || echo 137), got $rc" >&2
    cat "$work/err.txt" >&2; exit 1
  fi
  interrupted=$((interrupted + 1))
done
echo "$interrupted of $rounds rounds interrupted"
if ((interrupted == 0)); then
  echo "error: no round was interrupted (the run is too short for the delays): nothing shown" >&2
  exit 1
fi
if cmp -s "$out" "$work/reference.json"; then
  echo "IDENTICAL: the resumed tokenizer equals the uninterrupted one"
else
  echo "DIFFERENT: the resumed tokenizer differs from the uninterrupted one" >&2
  exit 1
fi
