#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: set up, build (Release), train a byte-level BPE
# tokenizer, show a summary, encode and decode a sample sentence.
#
# Usage: scripts/run.sh [FILE...]
#   With no arguments it trains on the bundled sample corpus (tests/data/sample.txt, English
#   and Chinese). With arguments it trains on your files instead.
# Environment: VOCAB_SIZE (default 8000), PRESET (gpt2, cl100k, o200k, qwen2; default gpt2),
#   OUTPUT (default out/tokenizer.json).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" "$root/build" >/dev/null
tokenmill="$root/build/tokenmill"

inputs=("$@")
if ((${#inputs[@]} == 0)); then inputs=("$root/tests/data/sample.txt"); fi
vocab_size=${VOCAB_SIZE:-8000}
preset=${PRESET:-gpt2}
output=${OUTPUT:-"$root/out/tokenizer.json"}
mkdir -p "$(dirname "$output")"

echo "== training: vocab $vocab_size, preset $preset, on ${inputs[*]}"
start=$(date +%s%N)
"$tokenmill" train --vocab-size "$vocab_size" --preset "$preset" \
  --special-token '<|endoftext|>' --output "$output" "${inputs[@]}"
end=$(date +%s%N)
elapsed_ms=$(( (end - start) / 1000000 ))
printf '== wall time: %d.%03d s\n' $((elapsed_ms / 1000)) $((elapsed_ms % 1000))

sentence='Tokenizers split text into pieces. 分詞器把文字切成小塊。<|endoftext|>'
echo "== encoding: $sentence"
ids=$(printf '%s' "$sentence" | "$tokenmill" encode --tokenizer "$output" --whole)
echo "   ids: $ids"
decoded=$(printf '%s\n' "$ids" | "$tokenmill" decode --tokenizer "$output")
echo "   decoded: $decoded"
if [[ "$decoded" != "$sentence" ]]; then
  echo "error: decoding did not give back the sentence" >&2
  exit 1
fi
echo "== tokenizer written to $output (Hugging Face tokenizer.json)"
