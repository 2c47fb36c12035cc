#!/usr/bin/env bash
# CI hardening job (on 2 cores: tsan about 6 minutes from scratch - 2 to build oneTBB and Abseil
# with TSan, cached after, 3 to build the tests, 1 to run them; fuzz 60 s per target, 2 at a time):
#  1. ThreadSanitizer: builds the tests of the parallel stages with -fsanitize=thread and runs
#     them (corpus reader, counting, word-count tables and files, trainer with 1/2/8 threads and
#     batched merges, batch encoding, special-token matching from many threads, Unigram's
#     parallel seeds, E-step and pruning), and the CLI's
#     training, checkpointing (background writes) and interrupt/resume tests, which run the
#     TSan-built tokenmill binary.
#  2. Each libFuzzer target (tests/fuzz) for FUZZ_SECONDS (default 60), two at a time, from its
#     seed corpus: any crash, sanitizer report or broken property fails the job.
# Usage: scripts/ci_hardening.sh [tsan|fuzz|all]
# Env: FUZZ_SECONDS, TSAN_BUILD_DIR, TSAN_DEPS_DIR, FUZZ_BUILD_DIR.
# Step 1 links against oneTBB and Abseil built with -fsanitize=thread (scripts/build_tsan_deps.sh,
# from Debian's sources of the installed versions, cached in TSAN_DEPS_DIR, default
# build-tsan-deps/): Debian's own libtbb and libabsl_* are not instrumented, so TSan would not
# see oneTBB's synchronization nor absl::Mutex and would report false races at every hand-off
# between workers (e.g. the serial BatchReader::NextTicket stage run by different workers in
# turn, the Hyperscan scratch pool of SpecialTokenMatcher). The job checks with ldd that every
# test executable loads the instrumented libraries. The normal builds keep Debian's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
what=${1:-all}
start=$(date +%s)

# Test executables and CTest name filters of the parallel stages.
TSAN_TARGETS=(corpus_reader_test count_corpus_test count_documents_test count_word_counts_test
              count_file_test train_test encode_bpe_test pretokenize_special_tokens_test
              checkpoint_resume_test train_cli_test training_run_test pretokenize_custom_test
              wordpiece_train_test unigram_train_test model_tiktoken_test encode_corpus_test
              vocab_cache_test encode_corpus_cli_test)
TSAN_FILTER='^((BatchReader|CountCorpus|EncodeCorpus|CountDocuments|WordCounts|CountsFile|TrainBpe|Encoder|SpecialTokens|Resume|Seeds/InterruptedTraining|TrainCli|TrainingRun|CustomPattern|FromTiktoken|FromHfJson|VocabCache)\.|WordPieceTrain\.SameModelWithOneTwoAndFourThreads$|UnigramTrain\.SameModelWithOneTwoAndFourThreadsOnRandomCorpora$|EncodeCorpusCli\.InterruptedEncodeLeavesNoFile$)'

if [[ $what == tsan || $what == all ]]; then
  echo "== ThreadSanitizer: parallel stages"
  tsan_dir=${TSAN_BUILD_DIR:-"$root/build-tsan"}
  deps=$(scripts/build_tsan_deps.sh "${TSAN_DEPS_DIR:-$root/build-tsan-deps}")
  generator=()
  if [[ ! -f "$tsan_dir/CMakeCache.txt" ]] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
  fi
  # TBB_DIR and absl_DIR are passed on every run so that a build folder configured before with
  # Debian's libraries switches to the instrumented ones. CMake's build-tree RPATH points the
  # executables at them (checked below).
  # -O1 -g1 (line tables) as for ASan in .ci/run: 528 s of compiler time instead of 678 s,
  # the tests 200 s instead of 174 s.
  cmake -S "$root" -B "$tsan_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTOKENMILL_SANITIZE=thread -DTOKENMILL_BUILD_BENCHMARKS=OFF \
    -DTBB_DIR="$deps/lib/cmake/TBB" -Dabsl_DIR="$deps/lib/cmake/absl" >/dev/null
  cmake --build "$tsan_dir" -j "$(nproc)" --target tokenmill "${TSAN_TARGETS[@]}" \
    >"$tsan_dir/tsan-build.log" 2>&1 || { tail -60 "$tsan_dir/tsan-build.log" >&2; exit 1; }
  for exe in tokenmill "${TSAN_TARGETS[@]}"; do
    libs=$(ldd "$tsan_dir/$exe" | awk '$1 ~ /^lib(tbb|absl_)/ {print $1, $3}')
    wrong=$(awk -v lib="$deps/lib/" 'index($2, lib) != 1' <<<"$libs")
    if [[ -z $libs || -n $wrong ]]; then
      echo "== $exe does not load the instrumented libraries in $deps/lib:" >&2
      echo "${wrong:-no libtbb or libabsl at all}" >&2
      exit 1
    fi
  done
  echo "== every TSan executable loads libtbb and libabsl_* from $deps/lib"
  (
    cd "$tsan_dir"
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4 suppressions=$root/tests/tsan.supp" \
      ctest --output-on-failure -j "$(nproc)" -LE large -R "$TSAN_FILTER" --timeout 1800
  )
  echo "== ThreadSanitizer done at $(( $(date +%s) - start )) s"
fi

if [[ $what == fuzz || $what == all ]]; then
  seconds=${FUZZ_SECONDS:-60}
  echo "== libFuzzer targets, $seconds s each"
  # Build once (fuzz.sh would build each target on first use).
  targets=()
  for source in "$root"/tests/fuzz/*_fuzz.cc; do
    name=$(basename "$source" .cc)
    targets+=("${name%_fuzz}")
  done
  FUZZ_JOBS=$(nproc) scripts/fuzz.sh "${targets[0]}" 1 >/dev/null  # configures and builds one
  flock "${FUZZ_BUILD_DIR:-$root/build-fuzz}/.fuzz-build.lock" \
    cmake --build "${FUZZ_BUILD_DIR:-$root/build-fuzz}" -j "$(nproc)" >/dev/null
  failed=0
  for ((i = 0; i < ${#targets[@]}; i += 2)); do
    pids=()
    for t in "${targets[@]:i:2}"; do
      scripts/fuzz.sh "$t" "$seconds" &
      pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  done
  if ((failed)); then
    echo "== a fuzz target found a problem (see above)" >&2
    exit 1
  fi
fi
echo "== hardening finished in $(( $(date +%s) - start )) s"
