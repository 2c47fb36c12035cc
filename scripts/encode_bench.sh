#!/usr/bin/env bash
# Corpus encoding benchmarks (issue 24), every tool in the same run, alternating, on a quiet
# machine. For each corpus and each of OpenAI's vocabularies (cl100k_base, o200k_base):
#  - `tokenmill encode --output-format u32 --output F` with --threads 2 and --threads 1: wall time
#    of the whole process (start to file closed and renamed; a microsecond clock around the
#    command: bash's EPOCHREALTIME, read by the shell itself, so that no process of the clock's
#    is timed with it, as `date +%s%N` was: about 1.8 ms more on every run), median of RUNS;
#    each writes a new file (the last run's output deleted before the clock starts), as a
#    corpus's first encode does; and with 2 threads replacing the last
#    run's output (of the same size), which costs more: the kernel frees the old file's pages
#    inside the rename. A `sync` before each timed run: the kernel's writeback of the files
#    earlier runs wrote (hundreds of MB, due 30 s after they were written) is not charged to a
#    later run. The vocabulary cache (model/vocab_cache.h) is a folder of this run's, filled by
#    an untimed encode before the timed ones, so they read the vocabulary's tables from it as
#    any run after a vocabulary's first does; a fourth 2-thread run with the cache off
#    (TOKENMILL_CACHE_DIR=off: the tables built from the .tiktoken, as a first run does less
#    the writing of the entry) shows what it saves;
#  - the in-process encoder on the same lines, 2 threads, no I/O: tokenmill_bench's
#    BM_EncodeBatchCold (Encoder::EncodeBatch over the corpus's lines held in memory, a new
#    Encoder each repetition, so its piece caches start cold as a process's do; no start-up)
#    and BM_EncodeBatch (one Encoder, caches warm after the first pass), median of RUNS
#    repetitions each; BM_EncodeBatchCold with 1 thread too, for the encoder's own scaling
#    from 1 to 2 threads (no start-up, no I/O), beside the whole process's; and
#    BM_EncodeLinesCold, the way `tokenmill encode` calls the encoder since 56dfbbf (slices of
#    about 4 MB of whole lines, one Encoder::EncodeLines call each, in parallel; cold caches),
#    2 and 1 threads: the "end to end ÷ in-process" ratios are against both;
#  - the peers on the same lines and vocabulary: npm tiktoken's encode per line and Hugging
#    Face's encodeBatch (npm tokenizers, on tokenmill's tokenizer.json of the vocabulary), their
#    encode calls alone (scripts/peer_encode_batch.cjs: their best case), median of PEER_RUNS.
#
#   scripts/encode_bench.sh [--runs N] [--peer-runs N] [CORPUS...]  (default linux_docs linux_c_100m poetry)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
bench="$root/build/tokenmill_bench"
runs=3
peer_runs=1
corpora=()
while (($# > 0)); do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --peer-runs) peer_runs=$2; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    -*) echo "encode_bench.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || corpora=(linux_docs linux_c_100m poetry)
vocab="$root/build/test_vocab/vocab"
"$root/scripts/install_peers.sh"  # npm tiktoken and tokenizers into scripts/.peers, once
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
corpus_index() { case $1 in linux_docs) echo 0;; poetry) echo 1;; brown) echo 2;; linux_c_100m) echo 3;; esac; }
for enc in cl100k_base o200k_base; do "$tm" convert "$vocab/$enc.tiktoken" "$work/$enc.json" 2>/dev/null; done
echo "tokenmill $(git -C "$root" rev-parse --short HEAD), $(nproc) cores, $runs runs (peers $peer_runs), medians"
echo
export TOKENMILL_CACHE_DIR="$work/vocab_cache"
for enc in cl100k_base o200k_base; do  # the cache's entries, before any clock
  "$tm" encode --tokenizer "$vocab/$enc.tiktoken" --output-format u32 --output "$work/warm.u32" \
    --progress none < /dev/null
done
rm -f "$work/warm.u32"
echo "| corpus | vocabulary | encode u32, 2 threads | 1 thread | 2 ÷ 1 threads | 2 threads, replacing the output | 2 threads, vocabulary cache off | in-process EncodeBatch, 2 threads, cold / warm caches | in-process EncodeBatch cold, 2 ÷ 1 threads | end to end ÷ in-process EncodeBatch cold | in-process EncodeLines, 2 threads, cold | its 2 ÷ 1 threads | end to end ÷ in-process EncodeLines | tiktoken (npm) | HF encodeBatch (npm) | tokenmill ÷ tiktoken | tokenmill ÷ HF |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for corpus in "${corpora[@]}"; do
  zstd -qdc "$root/../shared/corpora/$corpus.txt.zst" > "$work/all.txt"
  sync  # the decompressed corpus written back before any clock starts
  bytes=$(stat -c %s "$work/all.txt")
  ci=$(corpus_index "$corpus")
  for e in 0 1; do
    enc=$([[ $e == 0 ]] && echo cl100k_base || echo o200k_base)
    rm -f "$work"/t_*
    for ((i = 0; i < runs; i++)); do
      jobs=(t2 t1 r2 o2)
      ((i % 2 == 1)) && jobs=(t1 t2 o2 r2)
      ((i < peer_runs)) && jobs+=(tt hf)
      for job in "${jobs[@]}"; do
        case $job in
          t2|t1|r2|o2)
            # r2: replaces the output the run before it wrote; o2: the vocabulary cache off
            [[ $job == r2 ]] || rm -f "$work/out.u32"
            cache=$TOKENMILL_CACHE_DIR
            [[ $job == o2 ]] && cache=off
            sync  # the runs before: their output's writeback is theirs, not this run's
            start=$EPOCHREALTIME
            TOKENMILL_CACHE_DIR=$cache "$tm" encode --tokenizer "$vocab/$enc.tiktoken" \
              --output-format u32 --output "$work/out.u32" --threads "${job:1}" --progress none "$work/all.txt"
            end=$EPOCHREALTIME
            echo "$end - $start" | bc >> "$work/t_$job" ;;
          tt) sync; node "$root/scripts/peer_encode_batch.cjs" tiktoken "$enc" "$work/all.txt" 1 |
                $py -c "import json,sys; print(json.loads(sys.stdin.readline())['seconds'])" >> "$work/t_tt" ;;
          hf) sync; node "$root/scripts/peer_encode_batch.cjs" hf "$work/$enc.json" "$work/all.txt" 1 |
                $py -c "import json,sys; print(json.loads(sys.stdin.readline())['seconds'])" >> "$work/t_hf" ;;
        esac
      done
    done
    in_process() {  # BENCHMARK_NAME [THREADS]: its median MB/s over RUNS repetitions
      sync
      "$bench" --benchmark_filter="$1/$ci/$e/${2:-2}/real_time\$" --benchmark_repetitions="$runs" \
        --benchmark_format=json 2> /dev/null > "$work/bench.json"
      $py -c "
import json, statistics, sys
runs = [b for b in json.load(open(sys.argv[1]))['benchmarks'] if b.get('run_type') == 'iteration']
print(statistics.median(b['bytes_per_second'] for b in runs) / 1e6)" "$work/bench.json"
    }
    inproc=$(in_process BM_EncodeBatchCold)
    warm=$(in_process BM_EncodeBatch)
    inproc1=$(in_process BM_EncodeBatchCold 1)
    lines=$(in_process BM_EncodeLinesCold)
    lines1=$(in_process BM_EncodeLinesCold 1)
    mbs() { echo "$bytes / $1 / 1000000" | bc -l; }
    t2=$(median < "$work/t_t2"); t1=$(median < "$work/t_t1"); r2=$(median < "$work/t_r2"); o2=$(median < "$work/t_o2"); tt=$(median < "$work/t_tt"); hf=$(median < "$work/t_hf")
    printf '| %s | %s | %.0f MB/s (%.4f s) | %.0f MB/s (%.4f s) | %.3f× | %.0f MB/s (%.3f s) | %.0f MB/s (%.4f s) | %.0f / %.0f MB/s | %.2f× | %.2f | %.0f MB/s | %.2f× | %.2f | %.1f MB/s | %.1f MB/s | %.0f× | %.0f× |\n' \
      "$corpus" "$enc" "$(mbs "$t2")" "$t2" "$(mbs "$t1")" "$t1" "$(echo "$t1 / $t2" | bc -l)" "$(mbs "$r2")" "$r2" "$(mbs "$o2")" "$o2" "$inproc" "$warm" \
      "$(echo "$inproc / $inproc1" | bc -l)" "$(echo "$(mbs "$t2") / $inproc" | bc -l)" \
      "$lines" "$(echo "$lines / $lines1" | bc -l)" "$(echo "$(mbs "$t2") / $lines" | bc -l)" "$(mbs "$tt")" "$(mbs "$hf")" \
      "$(echo "$tt / $t2" | bc -l)" "$(echo "$hf / $t2" | bc -l)"
  done
done
