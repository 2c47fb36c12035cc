#!/usr/bin/env bash
# Parity of `tokenmill encode` with OpenAI's tiktoken (npm package `tiktoken`, the real encoder)
# for gpt2, cl100k_base and o200k_base from ../shared/vocab, line by line and whole-file.
#
#   scripts/tiktoken_parity.sh [--build DIR] [--encodings "gpt2 cl100k_base o200k_base"]
#                              [--corpora "brown linux_docs linux_c_100m poetry"]
#       Compares on the shared corpora; prints one line per (encoding, corpus, mode) with the
#       number of ids compared and the number of lines whose ids differ; exit 1 on any difference.
#   scripts/tiktoken_parity.sh --make-expected
#       Regenerates tests/data/tiktoken_expected/ (the small sample CI checks): inputs.txt (every
#       50th line of tests/data/sample.txt plus hand-picked corner cases) and, per encoding,
#       tiktoken's ids for each line (ENC.lines.ids) and for the whole file (ENC.whole.ids).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared="$root/../shared"
build="$root/build"
encodings="gpt2 cl100k_base o200k_base"
corpora="brown linux_docs linux_c_100m poetry"
make_expected=0
while (($# > 0)); do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --encodings) encodings=$2; shift 2 ;;
    --corpora) corpora=$2; shift 2 ;;
    --make-expected) make_expected=1; shift ;;
    *) echo "tiktoken_parity.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
"$root/scripts/install_peers.sh"
peer() { node "$root/scripts/peer_encode.cjs" tiktoken "$@"; }

if ((make_expected)); then
  out="$root/tests/data/tiktoken_expected"
  mkdir -p "$out"
  python3 - "$root/tests/data/sample.txt" "$out/inputs.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8", newline="").read().splitlines(keepends=True)
picked = lines[::50]
corner = [
    "hello", "Hello world", "  leading spaces", "trailing spaces   ", "tabs\tand\t\ttabs",
    "CRLF line\r", "\r\r\r", "I'm sure you'll've done it; they'RE, we'VE, she'S", "don't DON'T",
    "1 12 123 1234 12345 123456 3.14159 1,000,000", "٣٤٥ ½ Ⅻ ²³", "    \t  x", "x      ",
    "naïve café résumé — “quotes” ‘single’", "Ελληνικά Русский текст עברית العربية",
    "中文字符和English混合 123 4567", "日本語のテキストとカタカナ", "한국어 텍스트",
    "emoji 👩‍👩‍👧 and ZWJ 🇫🇷 flags 👍🏽", "e\u0301 combining a\u0308\u0304", "\u00a0nbsp\u2003em space",
    "<|endoftext|> in the middle <|endoftext|>", "<|endoftext", "a/b//c///d", "path/to/file.c:12:34",
    "CamelCaseWordsHere and lowerUPPER and ÀÉÎõü", "!!!???...,,,;;;", "    def f(x):\treturn x**2",
    "x" * 300, "ab" * 200, "🙂" * 60, " " * 70 + "end", "1" * 40,
    "\u3000全角空格\u3000", "\ufeffBOM at start", "ﬁ ligature and ｆｕｌｌｗｉｄｔｈ",
]
with open(sys.argv[2], "w", encoding="utf-8", newline="") as f:
    for line in picked:
        f.write(line if line.endswith("\n") else line + "\n")
    for line in corner:
        f.write(line + "\n")
PY
  for enc in $encodings; do
    peer "$enc" "$out/inputs.txt" > "$out/$enc.lines.ids"
    peer "$enc" "$out/inputs.txt" --whole > "$out/$enc.whole.ids"
  done
  wc -l "$out"/*
  exit 0
fi

[[ -x "$build/tokenmill" ]] || { echo "tiktoken_parity.sh: build first (scripts/build.sh $build)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
compare() {  # label, expected file, actual file
  python3 - "$@" <<'PY' || status=1
import sys
label, a, b = sys.argv[1:]
ids = differing = 0
with open(a) as fa, open(b) as fb:
    for n, (x, y) in enumerate(zip(fa, fb), 1):
        ids += x.count(" ") + (x.strip() != "")
        if x != y:
            if differing == 0:
                print(f"  first difference at output line {n}:\n    tiktoken:  {x[:200].strip()}\n    tokenmill: {y[:200].strip()}")
            differing += 1
    rest_a, rest_b = fa.read(), fb.read()
    if rest_a or rest_b:
        differing += max(rest_a.count("\n"), rest_b.count("\n"))
print(f"{label}: {ids} ids compared, {differing} lines differ")
sys.exit(1 if differing else 0)
PY
}
for corpus in $corpora; do
  zstd -dc "$shared/corpora/$corpus.txt.zst" > "$tmp/text"
  for enc in $encodings; do
    for mode in lines whole; do
      flag=(); [[ $mode == whole ]] && flag=(--whole)
      peer "$enc" "$tmp/text" "${flag[@]}" > "$tmp/expected"
      "$build/tokenmill" encode --tokenizer "$shared/vocab/$enc.tiktoken" "${flag[@]}" "$tmp/text" > "$tmp/actual"
      compare "$enc $corpus $mode" "$tmp/expected" "$tmp/actual"
    done
  done
done
exit $status
