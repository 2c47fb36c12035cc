#!/usr/bin/env bash
# Side-by-side comparison of tokenmill with the trainers and encoders people use today, on your
# own files, on one machine, in one session. Installs its peers if missing (Debian 12, as root or
# with sudo): Hugging Face tokenizers 0.23.2 and tiktoken from npm into scripts/.peers, Debian's
# sentencepiece, gnuplot-nox and time.
#
# Training (default):
#   scripts/compare.sh CORPUS... [--vocab-size N] [--runs K] [--threads T] [flags]
# trains a byte-level BPE tokenizer on each CORPUS with tokenmill, Hugging Face tokenizers and
# SentencePiece BPE, the tools alternating run by run (the first tool rotates), each pinned to the
# same T cores with taskset and told to use T threads. Records wall time, CPU time and peak RSS
# (/usr/bin/time -v) and the vocabulary each produced; prints a Markdown table of medians and
# ratios (peer / tokenmill), and writes OUT/compare.png (gnuplot: time and memory per corpus).
#
# Encoding (--encode):
#   scripts/compare.sh --encode CORPUS... [--runs K] [--vocab-size N]
# encodes each CORPUS whole, on one core: tokenmill `encode --whole` vs npm tiktoken with
# cl100k_base, and tokenmill vs npm tokenizers (HF) on the same tokenizer.json (trained on the
# corpus by tokenmill first, untimed). The peers' time is their encode call alone; tokenmill's
# is its whole process (start, loading, reading, writing the ids), so the ratio favours the peers.
#
# CORPUS: a file (.zst files are decompressed to a temporary folder first) or the name of a
# shared corpus: brown, linux_docs, linux_c_100m, poetry (../shared/corpora/NAME.txt.zst).
#
# Flags:
#   --vocab-size N      vocabulary size (default 30000; Hugging Face's npm API trains only at
#                       its default 30000, so with another N the HF column is skipped)
#   --runs K            runs per tool and corpus (default 3); medians are reported
#   --threads T         cores and threads for every tool (default: all cores, `nproc`)
#   --tools LIST        comma-separated subset of tokenmill,hf,spm (default: all three)
#   --time-limit S      per-run limit in seconds (default 900); a run that hits it is reported as
#                       "did not finish in S s", never dropped, and that tool's further runs on
#                       that corpus are skipped (they would only hit the limit again)
#   --spm-runs K        runs for SentencePiece (default: --runs); its BPE trainer is slow
#   --spm-time-limit S  per-run limit for SentencePiece (default: --time-limit)
#   --tokenmill-mode M  hf-compat (default: the same alphabet, ids and tie-break as Hugging Face,
#                       so both learn the same merges) or native (tokenmill's own rule)
#   --unit char         character-level BPE with byte fallback (SentencePiece/Llama style):
#                       tokenmill --unit char --preset metaspace --normalize nfkc (its own rule,
#                       coverage 0.9995); Hugging Face with the Metaspace pre-tokenizer and NFKC;
#                       SentencePiece --model_type=bpe --character_coverage=0.9995
#                       --byte_fallback=true (its defaults otherwise). The tool tokenmill-byte
#                       (in --tools) adds tokenmill's byte-level native run for comparison.
#   --char-flags "F"    with --unit char: tokenmill's flags after --unit char instead of
#                       "--preset metaspace --normalize nfkc" (e.g. "--preset gpt2", the
#                       byte-level runs' pre-tokenizer)
#   --build-dir DIR     tokenmill build folder (default build/); built (incrementally) first
#   --tokenmill BIN     use this tokenmill binary as it is (no build)
#   --out DIR           results folder (default out/compare/<date>-<time>)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
here="$root/scripts/compare"
peers="$root/scripts/.peers"
shared_corpora="$root/../shared/corpora"

mode=train
vocab_size=30000
runs=3
threads=$(nproc)
tools_arg=tokenmill,hf,spm
time_limit=900
spm_runs=""
spm_time_limit=""
tokenmill_mode=hf-compat
unit=byte
char_flags="--preset metaspace --normalize nfkc"
build_dir="$root/build"
tokenmill=""
out_dir="$root/out/compare/$(date +%Y%m%d-%H%M%S)"
corpora=()

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
  exit 2
}
die() { echo "compare.sh: error: $*" >&2; exit 2; }

while (($# > 0)); do
  case "$1" in
    --encode) mode=encode ;;
    --vocab-size) vocab_size=${2:?--vocab-size needs a value}; shift ;;
    --runs) runs=${2:?--runs needs a value}; shift ;;
    --threads) threads=${2:?--threads needs a value}; shift ;;
    --tools) tools_arg=${2:?--tools needs a value}; shift ;;
    --time-limit) time_limit=${2:?--time-limit needs a value}; shift ;;
    --tokenmill-mode) tokenmill_mode=${2:?--tokenmill-mode needs a value}; shift ;;
    --unit) unit=${2:?--unit needs a value}; shift ;;
    --char-flags) char_flags=${2:?--char-flags needs a value}; shift ;;
    --build-dir) build_dir=${2:?--build-dir needs a value}; shift ;;
    --tokenmill) tokenmill=${2:?--tokenmill needs a value}; shift ;;
    --spm-runs) spm_runs=${2:?--spm-runs needs a value}; shift ;;
    --spm-time-limit) spm_time_limit=${2:?--spm-time-limit needs a value}; shift ;;
    --out) out_dir=${2:?--out needs a value}; shift ;;
    --vocab-size=*|--runs=*|--threads=*|--tools=*|--time-limit=*|--tokenmill-mode=*|--build-dir=*|--tokenmill=*|--spm-runs=*|--spm-time-limit=*|--out=*)
      set -- "${1%%=*}" "${1#*=}" "${@:2}"; continue ;;
    -h|--help) usage ;;
    -*) die "unknown flag $1 (see --help)" ;;
    *) corpora+=("$1") ;;
  esac
  shift
done
((${#corpora[@]} > 0)) || usage
[[ $vocab_size =~ ^[0-9]+$ ]] || die "--vocab-size must be a number, got '$vocab_size'"
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive number, got '$runs'"
[[ $time_limit =~ ^[1-9][0-9]*$ ]] || die "--time-limit must be a positive number of seconds, got '$time_limit'"
spm_runs=${spm_runs:-$runs}
spm_time_limit=${spm_time_limit:-$time_limit}
[[ $spm_runs =~ ^[1-9][0-9]*$ ]] || die "--spm-runs must be a positive number, got '$spm_runs'"
[[ $spm_time_limit =~ ^[1-9][0-9]*$ ]] || die "--spm-time-limit must be a positive number of seconds, got '$spm_time_limit'"
[[ $threads =~ ^[1-9][0-9]*$ ]] && ((threads <= $(nproc))) ||
  die "--threads must be between 1 and $(nproc) (this machine's cores), got '$threads'"
[[ $unit == byte || $unit == char ]] || die "--unit must be byte or char, got '$unit'"
[[ $tokenmill_mode == hf-compat || $tokenmill_mode == native ]] ||
  die "--tokenmill-mode must be hf-compat or native, got '$tokenmill_mode'"
IFS=, read -r -a tools <<<"$tools_arg"
for tool in "${tools[@]}"; do
  [[ $tool == tokenmill || $tool == tokenmill-byte || $tool == hf || $tool == spm ]] ||
    die "--tools: unknown tool '$tool' (tokenmill, tokenmill-byte, hf, spm)"
done
if [[ $mode == train && $vocab_size != 30000 ]]; then
  kept=()
  for tool in "${tools[@]}"; do
    if [[ $tool == hf ]]; then
      echo "compare.sh: note: skipping Hugging Face: its npm API (0.23.2) trains only with its default vocab size 30000" >&2
    else
      kept+=("$tool")
    fi
  done
  tools=("${kept[@]}")
fi

# ---- peers and tools, installed when missing ------------------------------------------------
apt_install() {
  local missing=()
  local pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  ((${#missing[@]} > 0)) || return 0
  echo "compare.sh: installing ${missing[*]} (apt)" >&2
  local sudo=""
  [[ $(id -u) -eq 0 ]] || sudo=sudo
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

npm_package_version() {  # prints the installed version of npm package $1 in scripts/.peers, or nothing
  local json="$peers/node_modules/$1/package.json"
  [[ -f $json ]] && node -e 'console.log(require(process.argv[1]).version)' "$json"
}

ensure_peers() {
  local packages=(time zstd python3 util-linux coreutils)
  [[ $mode == train ]] && packages+=(gnuplot-nox)
  [[ $mode == train && " ${tools[*]} " == *" spm "* ]] && packages+=(sentencepiece)
  if [[ $mode == encode || " ${tools[*]} " == *" hf "* ]]; then
    command -v node >/dev/null 2>&1 || packages+=(nodejs)
    command -v npm >/dev/null 2>&1 || packages+=(npm)
  fi
  apt_install "${packages[@]}"
  if [[ $mode == encode || " ${tools[*]} " == *" hf "* ]]; then
    local wanted=()
    [[ $(npm_package_version tokenizers) == 0.23.2 ]] || wanted+=(tokenizers@0.23.2)
    [[ $mode == encode && -z $(npm_package_version tiktoken) ]] && wanted+=(tiktoken)
    if ((${#wanted[@]} > 0)); then
      echo "compare.sh: installing ${wanted[*]} into scripts/.peers (npm)" >&2
      mkdir -p "$peers"
      npm install --prefix "$peers" --no-audit --no-fund --loglevel=error "${wanted[@]}" >&2
    fi
  fi
}

ensure_peers
tokenmill_given=$tokenmill
if [[ -z $tokenmill ]]; then
  "$root/scripts/setup.sh"
  "$root/scripts/build.sh" "$build_dir" >/dev/null
  tokenmill="$build_dir/tokenmill"
fi
[[ -f $tokenmill && -x $tokenmill ]] || die "no tokenmill executable at $tokenmill"
tokenmill=$(realpath "$tokenmill")

mkdir -p "$out_dir/logs"
out_dir=$(cd "$out_dir" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tokenmill-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- inputs: plain text files, with their size and word count -------------------------------
declare -A corpus_file corpus_bytes corpus_words
names=()
for corpus in "${corpora[@]}"; do
  file=$corpus
  if [[ ! -e $file && -f "$shared_corpora/$corpus.txt.zst" ]]; then file="$shared_corpora/$corpus.txt.zst"; fi
  [[ -f $file && -r $file ]] || die "corpus '$corpus': not a readable file nor a shared corpus name"
  name=$(basename "$file")
  name=${name%.zst}
  name=${name%.txt}
  [[ -z ${corpus_file[$name]+set} ]] || die "corpus '$corpus': two inputs are named '$name'"
  if [[ $file == *.zst ]]; then
    echo "compare.sh: decompressing $file" >&2
    zstd -q -d -c "$file" >"$work/$name.txt"
    file="$work/$name.txt"
  fi
  corpus_file[$name]=$(realpath "$file")
  corpus_bytes[$name]=$(stat -c %s "$file")
  corpus_words[$name]=0
  if [[ $mode == train ]]; then
    read -r _ corpus_words[$name] < <(node "$here/count_words.js" "$file")
  fi
  names+=("$name")
done

cpus="0-$((threads - 1))"
# Runs "$@" pinned to the chosen cores under GNU time, limited to $run_limit s; sets run_status
# (ok, timeout or fail) and run_wall/run_cpu/run_rss_kb. Output goes to $log.
measure() {
  local timefile=$1 log=$2
  shift 2
  local rc=0
  /usr/bin/time -v -o "$timefile" taskset -c "$cpus" timeout -k 10 "$run_limit" "$@" >"$log" 2>&1 || rc=$?
  IFS=$'\t' read -r run_wall run_cpu run_rss_kb _ < <(python3 "$here/report.py" timev "$timefile")
  case $rc in
    0) run_status=ok ;;
    124|137) run_status=timeout ;;
    *) run_status=fail; echo "compare.sh: run failed (exit $rc), log: $log" >&2; tail -n 3 "$log" >&2 ;;
  esac
}

describe_machine() {
  {
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GB RAM", $2/1048576}' /proc/meminfo)"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
    if [[ -n $tokenmill_given ]]; then
      echo "tokenmill: $tokenmill (given with --tokenmill)"
    else
      echo "tokenmill: $tokenmill (built from git $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet HEAD -- lib trainer 2>/dev/null || echo ', with uncommitted changes'))"
    fi
    [[ -n $(npm_package_version tokenizers) ]] && echo "hf: npm tokenizers $(npm_package_version tokenizers), node $(node --version)"
    [[ -n $(npm_package_version tiktoken) ]] && echo "tiktoken: npm tiktoken $(npm_package_version tiktoken)"
    command -v spm_train >/dev/null 2>&1 && echo "spm: Debian sentencepiece $(dpkg-query -W -f='${Version}' sentencepiece 2>/dev/null)"
    echo "command: scripts/compare.sh ${original_args[*]}"
  } | tee "$out_dir/machine.txt" >&2
}
original_args=("${corpora[@]}")
if [[ $mode == encode ]]; then
  original_args=(--encode "${original_args[@]}" --vocab-size "$vocab_size" --runs "$runs")
else
  original_args+=(--vocab-size "$vocab_size" --runs "$runs" --threads "$threads" --tools "$(IFS=,; echo "${tools[*]}")"
    --time-limit "$time_limit" --spm-runs "$spm_runs" --spm-time-limit "$spm_time_limit" --tokenmill-mode "$tokenmill_mode" --unit "$unit" --char-flags "$char_flags")
fi

# ---- training --------------------------------------------------------------------------------
train_one() {  # tool corpus run
  local tool=$1 name=$2 run=$3
  local file=${corpus_file[$name]} base="$out_dir/logs/$name.$tool.$run"
  local output vocab=""
  run_limit=$time_limit
  [[ $tool == spm ]] && run_limit=$spm_time_limit
  case $tool in
    tokenmill)
      output="$work/$name.tokenmill.json"
      local mode_flags=()
      [[ $tokenmill_mode == hf-compat && $unit == byte ]] && mode_flags=(--hf-compat)
      # shellcheck disable=SC2206  # the flags are words
      [[ $unit == char ]] && mode_flags=(--unit char $char_flags)
      measure "$base.time" "$base.log" "$tokenmill" train --vocab-size "$vocab_size" --threads "$threads" \
        "${mode_flags[@]}" --output "$output" "$file"
      ;;
    tokenmill-byte)
      output="$work/$name.tokenmill-byte.json"
      measure "$base.time" "$base.log" "$tokenmill" train --vocab-size "$vocab_size" --threads "$threads" \
        --output "$output" "$file"
      ;;
    hf)
      output="$work/$name.hf.json"
      local hf_args=()
      [[ $unit == char ]] && hf_args=(metaspace nfkc)
      RAYON_NUM_THREADS=$threads measure "$base.time" "$base.log" \
        node "$here/hf_train.js" "$peers/node_modules" "$file" "$output" "${hf_args[@]}"
      ;;
    spm)
      output="$work/$name.spm.vocab"
      if [[ $unit == char ]]; then
        # The issue's setting: SentencePiece's own normalization (nmt_nfkc), dummy prefix,
        # coverage 0.9995, byte fallback.
        measure "$base.time" "$base.log" spm_train --input="$file" --model_prefix="$work/$name.spm" \
          --model_type=bpe --vocab_size="$vocab_size" --num_threads="$threads" \
          --character_coverage=0.9995 --byte_fallback=true --minloglevel=1
      else
      # No normalization, no dummy prefix, whitespace kept, every character covered with byte
      # fallback, no line dropped for length: the same text tokenmill and HF learn from.
      measure "$base.time" "$base.log" spm_train --input="$file" --model_prefix="$work/$name.spm" \
        --model_type=bpe --vocab_size="$vocab_size" --num_threads="$threads" \
        --character_coverage=1.0 --byte_fallback=true --normalization_rule_name=identity \
        --add_dummy_prefix=false --remove_extra_whitespaces=false --max_sentence_length=1000000 \
        --input_sentence_size=0 --hard_vocab_limit=false --minloglevel=1
      fi
      ;;
  esac
  if [[ $run_status == ok ]]; then vocab=$(python3 "$here/report.py" vocab "$output"); fi
  rm -f "$output"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${corpus_bytes[$name]}" \
    "${corpus_words[$name]}" "$tool" "$run" "$run_status" "$run_limit" "$run_wall" "$run_cpu" \
    "$run_rss_kb" "$vocab" >>"$out_dir/runs.tsv"
  printf 'compare.sh: %-14s %-9s run %d: %s, %s s wall, %s s CPU, %s MB peak RSS, vocab %s\n' "$name" "$tool" \
    "$run" "$run_status" "$run_wall" "$run_cpu" "$((run_rss_kb / 1024))" "${vocab:--}" >&2
}

run_training() {
  printf 'corpus\tbytes\twords\ttool\trun\tstatus\tlimit_s\twall_s\tcpu_s\trss_kb\tvocab\n' >"$out_dir/runs.tsv"
  local name run i tool n=${#tools[@]} max_runs=$runs
  ((spm_runs > max_runs)) && max_runs=$spm_runs
  declare -A gave_up=()
  for name in "${names[@]}"; do
    for ((run = 1; run <= max_runs; run++)); do
      for ((i = 0; i < n; i++)); do
        tool=${tools[(i + run - 1) % n]}
        if [[ $tool == spm ]] && ((run > spm_runs)); then continue; fi
        if [[ $tool != spm ]] && ((run > runs)); then continue; fi
        if [[ -n ${gave_up[$name.$tool]+set} ]]; then
          echo "compare.sh: $name $tool run $run skipped: an earlier run hit the time limit" >&2
          continue
        fi
        train_one "$tool" "$name" "$run"
        [[ $run_status == timeout ]] && gave_up[$name.$tool]=1
      done
    done
  done
  python3 "$here/report.py" train "$out_dir/runs.tsv" "$out_dir"
}

# ---- encoding --------------------------------------------------------------------------------
encode_one() {  # tool tokenizer-label corpus run
  local tool=$1 label=$2 name=$3 run=$4
  local file=${corpus_file[$name]} base="$out_dir/logs/$name.encode.$label.$tool.$run"
  local encode_s="" tokens=""
  run_limit=$time_limit
  cpus=0  # single thread: one core for every encoder
  case $tool in
    tokenmill)
      local tokenizer="$work/$name.tokenmill.json"
      [[ $label == cl100k_base ]] && tokenizer="$root/../shared/vocab/cl100k_base.tiktoken"
      measure "$base.time" "$base.log" bash -c '"$1" encode --whole --tokenizer "$2" "$3" >"$4"' _ \
        "$tokenmill" "$tokenizer" "$file" "$work/ids.txt"
      if [[ $run_status == ok ]]; then
        encode_s=$run_wall
        tokens=$(wc -w <"$work/ids.txt")
      fi
      rm -f "$work/ids.txt"
      ;;
    tiktoken|hf)
      local tokenizer="$work/$name.tokenmill.json"
      [[ $tool == tiktoken ]] && tokenizer=$label
      RAYON_NUM_THREADS=1 measure "$base.time" "$base.log" \
        node "$here/encode_peer.js" "$peers/node_modules" "$tool" "$tokenizer" "$file"
      if [[ $run_status == ok ]]; then
        read -r encode_s tokens < <(python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print("%.3f" % r["seconds"], r["tokens"])' "$base.log")
      fi
      ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${corpus_bytes[$name]}" "$tool" "$label" \
    "$run" "$run_status" "$run_wall" "$run_cpu" "$run_rss_kb" "$encode_s" "$tokens" >>"$out_dir/encode_runs.tsv"
  printf 'compare.sh: %-14s %-12s %-9s run %d: %s, encode %s s, %s tokens\n' "$name" "$label" "$tool" "$run" \
    "$run_status" "${encode_s:--}" "${tokens:--}" >&2
}

run_encoding() {
  printf 'corpus\tbytes\ttool\ttokenizer\trun\tstatus\twall_s\tcpu_s\trss_kb\tencode_s\ttokens\n' >"$out_dir/encode_runs.tsv"
  local name run
  for name in "${names[@]}"; do
    local label="tokenmill-${vocab_size}"
    echo "compare.sh: training the $label tokenizer on $name for the HF comparison (untimed)" >&2
    "$tokenmill" train --quiet --vocab-size "$vocab_size" --output "$work/$name.tokenmill.json" "${corpus_file[$name]}"
    for ((run = 1; run <= runs; run++)); do
      if ((run % 2)); then
        encode_one tokenmill cl100k_base "$name" "$run"; encode_one tiktoken cl100k_base "$name" "$run"
        encode_one tokenmill "$label" "$name" "$run"; encode_one hf "$label" "$name" "$run"
      else
        encode_one tiktoken cl100k_base "$name" "$run"; encode_one tokenmill cl100k_base "$name" "$run"
        encode_one hf "$label" "$name" "$run"; encode_one tokenmill "$label" "$name" "$run"
      fi
    done
  done
  python3 "$here/report.py" encode "$out_dir/encode_runs.tsv" "$out_dir"
}

describe_machine
if [[ $mode == train ]]; then
  echo "compare.sh: training, vocab $vocab_size, $runs runs, $threads threads (cores $cpus), tools ${tools[*]}, tokenmill mode $tokenmill_mode, limit $time_limit s (SentencePiece: $spm_runs runs, limit $spm_time_limit s)" >&2
  run_training
else
  echo "compare.sh: encoding, single thread (core 0), $runs runs" >&2
  run_encoding
fi
echo "compare.sh: results in $out_dir" >&2
