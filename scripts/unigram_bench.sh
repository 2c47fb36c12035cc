#!/usr/bin/env bash
# Unigram benchmark: training time, peak RSS and held-out compression of tokenmill's Unigram
# against SentencePiece's and Hugging Face's, every tool in the same run, alternating, on a quiet
# machine.
#
#   scripts/unigram_bench.sh [--tokenmill BIN] [--runs N] [--vocab-size V] [--train-bytes B]
#                            [--heldout-bytes H] [--threads T] [--timeout S] CORPUS...
#
# CORPUS: a shared corpus name (../shared/corpora/NAME.txt.zst) or a path to a text file;
# default: brown linux_docs. Per corpus the last H bytes' whole lines (default 1000000) are held
# out; the trainers read the rest, or its first B bytes' whole lines (default 0: all of it).
# Trainers, vocab V (default 8000), T threads each (default $(nproc)):
#  - tokenmill: `tokenmill train --algorithm unigram --vocab-size V --threads T --quiet
#    --checkpoint none`, its defaults being SentencePiece's setting (char unit, metaspace preset,
#    NFKC, coverage 0.9995, byte fallback, <unk> at 0, seed 1,000,000, pieces <= 16 characters,
#    2 sub-iterations, shrinking factor 0.75).
#  - SentencePiece (Debian's spm_train 0.1.97): `--model_type=unigram --vocab_size=V
#    --character_coverage=0.9995 --byte_fallback=true --num_threads=T`, its own normalization and
#    dummy prefix written out (--normalization_rule_name=nmt_nfkc --add_dummy_prefix=true, the
#    defaults; --remove_extra_whitespaces and --split_by_whitespace stay at their default, true),
#    --input_sentence_size=0 (its default: 0 loads every line, > 0 samples that many), and
#    --max_sentence_length = the longest training line in bytes, at least its default 4192
#    (longer lines are skipped silently otherwise). Its log's "Loaded all N sentences" is
#    printed: N = the non-empty training lines (it drops empty lines) when nothing was skipped.
#    Its vocabulary also holds <s> and </s> (its defaults), tokenmill's does not.
#  - Hugging Face (npm tokenizers 0.23.2, scripts/hf_unigram.cjs train): the default
#    UnigramTrainer (NFKC, Metaspace; vocab 8000, no <unk>, no coverage, no byte fallback), with
#    RAYON_NUM_THREADS=T. The npm binding takes no trainer options, so it runs only when V=8000.
# Each run is one whole process timed by /usr/bin/time -v (wall clock, maximum resident set
# size), RUNS runs (default 3) alternating the tools' order; medians. --timeout S stops a peer's
# run (SentencePiece, Hugging Face; not tokenmill) after S seconds (timeout -k 10): shown as
# "> S s (stopped)" with the peak RSS it had reached as "≥ M", and that peer's later runs on the
# corpus are skipped.
# Compression = held-out bytes (newlines included) / tokens. spm_encode reads lines without
# their "\n" (SentencePiece never sees newlines), so the compared count has no newlines for any
# tool: each held-out line without its "\n", encoded by SentencePiece (spm_encode --output_format=id
# | wc -w), and by tokenmill's and Hugging Face's tokenizer.json through Hugging Face's runtime
# (hf_unigram.cjs encode --no-newline --count; for tokenmill's file this equals `tokenmill
# encode`, which hf_unigram_parity.sh checks, and which the script checks here on the lines
# with their "\n": `tokenmill encode | wc -w` against HF's count, a warning when they differ).
# The counts with newlines (tokenmill encode | wc -w, and HF's) are shown as well. HF's default
# model has no <unk>: a held-out line with a character it never saw is counted with <unk>
# appended to a copy of it, and the number of such lines and <unk>s is shown.
# Ratios: SentencePiece (and HF) wall time / tokenmill's, and tokenmill's bytes/token ÷ theirs
# (> 1: tokenmill compresses better). Markdown tables. Exit 1 when a run failed (not stopped).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
runs=3
vocab=8000
train_bytes=0
heldout_bytes=1000000
threads=$(nproc)
limit=0
corpora=()
while (($# > 0)); do
  case "$1" in
    --tokenmill) tm=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --vocab-size) vocab=$2; shift 2 ;;
    --train-bytes) train_bytes=$2; shift 2 ;;
    --heldout-bytes) heldout_bytes=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    -h|--help) sed -n '2,45p' "$0"; exit 0 ;;
    -*) echo "unigram_bench.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || corpora=(brown linux_docs)
for corpus in "${corpora[@]}"; do
  [[ -f $corpus || -f "$root/../shared/corpora/$corpus.txt.zst" ]] ||
    { echo "unigram_bench.sh: no corpus $corpus (a file, or ../shared/corpora/NAME.txt.zst)" >&2; exit 2; }
done
if ! command -v spm_train >/dev/null || ! command -v spm_encode >/dev/null; then
  echo "unigram_bench.sh: needs Debian's sentencepiece (spm_train, spm_encode)" >&2; exit 2
fi
[[ -x "$tm" ]] || { echo "unigram_bench.sh: no tokenmill at $tm (scripts/build.sh, or --tokenmill)" >&2; exit 2; }
hf="$root/scripts/hf_unigram.cjs"
[[ -d "$root/scripts/.peers/node_modules/tokenizers" ]] || bash "$root/scripts/install_peers.sh" >&2
tools=(tm spm)
((vocab == 8000)) && tools+=(hf)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "-"; else print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
name_of() {
  case $1 in
    tm) echo "tokenmill train --algorithm unigram" ;;
    spm) echo "SentencePiece spm_train unigram" ;;
    hf) echo "Hugging Face UnigramTrainer (default)" ;;
  esac
}
# run_one TOOL: one training run; appends "wall_s rss_kb status" to $work/runs_TOOL (status: ok,
# stopped, failed); a finished run's model becomes $work/model_TOOL.*.
run_one() {
  local tool=$1 rc=0 cmd=()
  local stop=()
  ((limit > 0)) && [[ $tool != tm ]] && stop=(timeout -k 10 "$limit")
  rm -f "$work"/run_"$tool".*
  case $tool in
    tm) cmd=("$tm" train --algorithm unigram --vocab-size "$vocab" --threads "$threads" --quiet
             --checkpoint none --output "$work/run_tm.json" "$work/train.txt") ;;
    spm) cmd=(spm_train --input="$work/train.txt" --model_prefix="$work/run_spm" --model_type=unigram
              --vocab_size="$vocab" --character_coverage=0.9995 --byte_fallback=true
              --num_threads="$threads" --normalization_rule_name=nmt_nfkc --add_dummy_prefix=true
              --input_sentence_size=0 --max_sentence_length="$max_line") ;;
    hf) cmd=(env RAYON_NUM_THREADS="$threads" node "$hf" train "$work/train.txt" "$work/run_hf.json") ;;
  esac
  /usr/bin/time -v -o "$work/time.out" "${stop[@]}" "${cmd[@]}" > "$work/out_$tool" 2> "$work/err_$tool" || rc=$?
  local outcome=ok
  if ((rc == 124 || rc == 137)) && ((${#stop[@]} > 0)); then
    outcome=stopped
  elif ((rc != 0)); then
    outcome=failed
    echo "unigram_bench.sh: $(name_of "$tool") failed (exit $rc): $(tail -n 3 "$work/err_$tool")" >&2
  fi
  awk -F': ' -v s="$outcome" '
    /Elapsed \(wall clock\)/ {n = split($NF, t, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + t[i]}
    /Maximum resident set size/ {m = $NF}
    END {printf "%.2f %d %s\n", w, m, s}' "$work/time.out" >> "$work/runs_$tool"
  if [[ $outcome == ok ]]; then
    case $tool in
      tm) mv "$work/run_tm.json" "$work/model_tm.json" ;;
      spm) mv "$work/run_spm.model" "$work/model_spm.model"; mv "$work/run_spm.vocab" "$work/model_spm.vocab"
           cp "$work/err_spm" "$work/log_spm" ;;
      hf) mv "$work/run_hf.json" "$work/model_hf.json" ;;
    esac
  fi
  [[ $outcome == ok ]]
}
ratio() {  # ratio A B: A / B to 3 places, "–" when either is missing
  if [[ -n ${1:-} && -n ${2:-} ]]; then awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; else echo "–"; fi
}
json_vocab() { /usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1], encoding='utf-8'))['model']['vocab']))" "$1"; }
count_field() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p"; }
echo "tokenmill $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') ($tm), $(nproc) cores," \
  "$threads threads each, $runs runs each (alternating), medians; vocab $vocab;" \
  "$(spm_train --version 2>&1 | head -n 1); HF tokenizers" \
  "$(node -p "require('$root/scripts/.peers/node_modules/tokenizers/package.json').version")"
((vocab == 8000)) || echo "Hugging Face skipped: its npm binding trains only its default vocab, 8000."
summary=()
for corpus in "${corpora[@]}"; do
  name=$(basename "$corpus" .txt)
  src=$corpus
  [[ -f $src ]] || src="$root/../shared/corpora/$corpus.txt.zst"
  if [[ $src == *.zst ]]; then zstd -qdc "$src" > "$work/all.txt"; else cp "$src" "$work/all.txt"; fi
  /usr/bin/python3 "$root/scripts/split_heldout.py" "$work/all.txt" "$work/train.txt" "$work/held.txt" "$train_bytes" "$heldout_bytes"
  rm -f "$work"/all.txt "$work"/runs_* "$work"/model_* "$work"/log_spm
  max_line=$(LC_ALL=C awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$work/train.txt")
  ((max_line < 4192)) && max_line=4192
  train_size=$(stat -c %s "$work/train.txt"); train_lines=$(wc -l < "$work/train.txt")
  nonempty=$(LC_ALL=C grep -c . "$work/train.txt" || true)
  held=$(stat -c %s "$work/held.txt"); held_lines=$(wc -l < "$work/held.txt")
  declare -A gave_up=()
  for ((i = 0; i < runs; i++)); do
    order=("${tools[@]}")
    if ((i % 2 == 1)); then order=(); for ((j = ${#tools[@]} - 1; j >= 0; j--)); do order+=("${tools[j]}"); done; fi
    for tool in "${order[@]}"; do
      [[ -n ${gave_up[$tool]+set} ]] && continue
      run_one "$tool" || { gave_up[$tool]=1; tail -n 1 "$work/runs_$tool" | grep -q failed && status=1; }
    done
  done
  unset gave_up
  echo
  echo "### $name: Unigram training, vocab $vocab"
  echo
  echo "Training: $train_lines lines, $train_size bytes. Held out: the last $held_lines lines, $held bytes."
  if [[ -f $work/log_spm ]]; then
    loaded=$(sed -n 's/.*Loaded all \([0-9]*\) sentences.*/\1/p' "$work/log_spm" | tail -n 1)
    skipped=$(sed -n 's/.*Skipped \([0-9]*\) too long sentences.*/\1/p' "$work/log_spm" | tail -n 1)
    echo "SentencePiece (--max_sentence_length=$max_line, --input_sentence_size=0) loaded ${loaded:-?} sentences" \
      "of the $nonempty non-empty training lines${skipped:+, skipped $skipped as too long}."
  fi
  echo
  echo "| trainer | wall s (median) | peak RSS MB (median) | vocab | held-out tokens, no newlines | bytes/token | tokens with newlines | bytes/token |"
  echo "|---|---|---|---|---|---|---|---|"
  declare -A wall=() tokens=()
  for tool in "${tools[@]}"; do
    file="$work/runs_$tool"
    w="–"; m="–"
    if grep -q stopped "$file"; then
      w="> $limit s (stopped)"
      m="≥ $(awk '$3 == "stopped" {if ($2 > r) r = $2} END {printf "%.0f", r / 1024}' "$file")"
    elif grep -q failed "$file"; then
      w="failed: $(tail -n 1 "$work/err_$tool" | tr '|' '/' | cut -c1-100)"
    else
      w=$(awk '$3 == "ok" {print $1}' "$file" | median)
      m=$(awk '$3 == "ok" {print $2}' "$file" | median | awk '{printf "%.0f", $1 / 1024}')
      wall[$tool]=$w
    fi
    v="–"; nl_free="–"; bpt="–"; with_nl="–"; bpt_nl="–"; note=""
    case $tool in
      tm)
        if [[ -f $work/model_tm.json ]]; then
          v=$(json_vocab "$work/model_tm.json")
          if ! with_nl=$("$tm" encode --tokenizer "$work/model_tm.json" "$work/held.txt" | wc -w); then
            echo "unigram_bench.sh: tokenmill encode failed on the held-out lines" >&2; with_nl="–"; status=1
          fi
          if counts=$(node "$hf" encode "$work/model_tm.json" "$work/held.txt" --no-newline --count 2> "$work/err_count"); then
            nl_free=$(count_field tokens <<< "$counts")
            hf_nl=$(node "$hf" encode "$work/model_tm.json" "$work/held.txt" --count | count_field tokens) || hf_nl="?"
            if [[ $with_nl != "–" && $hf_nl != "$with_nl" ]]; then
              echo "WARNING: Hugging Face counts $hf_nl tokens on the held-out lines with tokenmill's tokenizer.json," \
                "tokenmill encode $with_nl: the newline-free count (HF's) may be off; see hf_unigram_parity.sh" >&2
              note=" (HF's count with newlines: $hf_nl)"
            fi
          else
            echo "WARNING: Hugging Face cannot load tokenmill's tokenizer.json ($(tail -n 1 "$work/err_count")):" \
              "no newline-free count" >&2
          fi
        fi ;;
      spm)
        if [[ -f $work/model_spm.model ]]; then
          v=$(wc -l < "$work/model_spm.vocab")
          if ! nl_free=$(spm_encode --model="$work/model_spm.model" --output_format=id < "$work/held.txt" | wc -w); then
            echo "unigram_bench.sh: spm_encode failed on the held-out lines" >&2; nl_free="–"; status=1
          fi
        fi ;;
      hf)
        if [[ -f $work/model_hf.json ]]; then
          v=$(json_vocab "$work/model_hf.json")
          if counts=$(node "$hf" encode "$work/model_hf.json" "$work/held.txt" --no-newline --count) &&
             with_nl=$(node "$hf" encode "$work/model_hf.json" "$work/held.txt" --count | count_field tokens); then
            nl_free=$(count_field tokens <<< "$counts")
            unk_lines=$(count_field unk_lines <<< "$counts")
          else
            echo "unigram_bench.sh: Hugging Face could not encode the held-out lines" >&2
            with_nl="–"; unk_lines=0; status=1
          fi
          ((unk_lines == 0)) || note=" (held-out lines with a character it never saw: $unk_lines, $(count_field unk_tokens <<< "$counts") <unk>)"
        fi ;;
    esac
    [[ $nl_free == "–" ]] || { bpt=$(ratio "$held" "$nl_free"); tokens[$tool]=$nl_free; }
    [[ $with_nl == "–" ]] || bpt_nl=$(ratio "$held" "$with_nl")
    echo "| $(name_of "$tool") | $w | $m | $v | $nl_free$note | $bpt | $with_nl | $bpt_nl |"
  done
  spm_time=$(ratio "${wall[spm]:-}" "${wall[tm]:-}"); spm_comp=$(ratio "${tokens[spm]:-}" "${tokens[tm]:-}")
  if [[ $spm_time == "–" && -n ${wall[tm]:-} ]] && grep -q stopped "$work/runs_spm"; then
    spm_time="> $(ratio "$limit" "${wall[tm]}")"
  fi
  hf_time="–"; hf_comp="–"
  if [[ " ${tools[*]} " == *" hf "* ]]; then
    hf_time=$(ratio "${wall[hf]:-}" "${wall[tm]:-}"); hf_comp=$(ratio "${tokens[hf]:-}" "${tokens[tm]:-}")
    if [[ $hf_time == "–" && -n ${wall[tm]:-} ]] && grep -q stopped "$work/runs_hf"; then
      hf_time="> $(ratio "$limit" "${wall[tm]}")"
    fi
  fi
  summary+=("| $name | $spm_time | $spm_comp | $hf_time | $hf_comp |")
  unset wall tokens
done
echo
echo "### Ratios (compression: newline-free tokens, i.e. tokenmill's bytes/token ÷ the peer's)"
echo
echo "| corpus | SentencePiece s / tokenmill s | tokenmill ÷ SentencePiece bytes/token | Hugging Face s / tokenmill s | tokenmill ÷ Hugging Face bytes/token |"
echo "|---|---|---|---|---|"
printf '%s\n' "${summary[@]}"
exit "$status"
