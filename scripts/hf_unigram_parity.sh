#!/usr/bin/env bash
# Unigram encoding against Hugging Face (npm tokenizers@0.23.2, scripts/hf_unigram.cjs):
# tokenmill trains a Unigram tokenizer on each corpus (`tokenmill train --algorithm unigram`, its
# defaults: SentencePiece's setting, i.e. --unit char --preset metaspace --normalize nfkc,
# character coverage 0.9995, byte fallback, <unk> at id 0) and writes tokenizer.json; HF loads it
# (Tokenizer.fromFile) and encodes every line of the corpus, each with its "\n" (encodeBatch, no
# special tokens added); the ids must equal `tokenmill encode --tokenizer` on the same file, line
# for line (the convention of hf_encode_parity.sh and hf_wordpiece_parity.sh).
#
#   scripts/hf_unigram_parity.sh [--tokenmill BIN] [--slice BYTES] [--vocab-size N] [--threads T]
#                                [CORPUS...]
#
# CORPUS: a shared corpus name (../shared/corpora/NAME.txt.zst) or a path to a text file;
# default: brown linux_docs poetry. --slice: the corpus's first BYTES bytes, whole lines only
# (default 0: all of it); the same text is trained on and encoded. --vocab-size: default 8000
# (SentencePiece's and HF's default). --threads: passed to tokenmill train (default: its own).
# Prints a markdown table: corpus, bytes, lines, ids compared, what tokenizer.json holds (model,
# pieces, unk_id, byte fallback, normalizer, pre-tokenizer; "unexpected" when it is not the
# setting above), lines that differ, and the first difference (line number, its text, both id
# lists). Exit status 1 when any line differs or a step fails.
# A known trap: HF's Unigram matches a byte piece's text ("<0x10>") in the input like any other
# piece (its vocabulary has no piece types), SentencePiece never does ("<0x3C> 0 x 10 <0x3E>");
# linux_docs has three such lines (`reg = <0x10>;`, `<0x50>`, `<0x60>`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tm="$root/build/tokenmill"
slice_bytes=0
vocab=8000
threads=()
corpora=()
while (($# > 0)); do
  case "$1" in
    --tokenmill) tm=$2; shift 2 ;;
    --slice) slice_bytes=$2; shift 2 ;;
    --vocab-size) vocab=$2; shift 2 ;;
    --threads) threads=(--threads "$2"); shift 2 ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    -*) echo "hf_unigram_parity.sh: unknown flag $1" >&2; exit 2 ;;
    *) corpora+=("$1"); shift ;;
  esac
done
((${#corpora[@]} > 0)) || corpora=(brown linux_docs poetry)
hf="$root/scripts/hf_unigram.cjs"
[[ -d "$root/scripts/.peers/node_modules/tokenizers" ]] || bash "$root/scripts/install_peers.sh" >&2
[[ -x "$tm" ]] || { echo "hf_unigram_parity.sh: no tokenmill at $tm (scripts/build.sh, or --tokenmill)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
text() {  # text CORPUS OUT: the corpus (a shared name or a file), or its first $slice_bytes bytes' whole lines
  local src=$1
  [[ -f $src ]] || src="$root/../shared/corpora/$1.txt.zst"
  [[ -f $src ]] || { echo "hf_unigram_parity.sh: no corpus $1" >&2; return 1; }
  local cat=(cat "$src")
  [[ $src == *.zst ]] && cat=(zstd -qdc "$src")
  if ((slice_bytes > 0)); then
    # zstd ends on SIGPIPE when head has its bytes; a cut last line is dropped.
    { "${cat[@]}" 2>/dev/null || true; } | head -c "$slice_bytes" > "$2"
    if [[ -s $2 && -n $(tail -c 1 "$2") ]]; then sed -i '$d' "$2"; fi
  else
    "${cat[@]}" > "$2"
  fi
}
describe() {  # describe TOKENIZER.json: one table cell saying what the tokenizer is
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
t = json.load(open(sys.argv[1], encoding="utf-8"))
m, n, p, d = t.get("model") or {}, t.get("normalizer") or {}, t.get("pre_tokenizer") or {}, t.get("decoder") or {}
vocab = m.get("vocab") or []
cell = (f"{m.get('type')} {len(vocab)} pieces, unk_id {m.get('unk_id')}"
        f"{', byte fallback' if m.get('byte_fallback') else ''}, {n.get('type')}, {p.get('type')} "
        f"{p.get('prepend_scheme')}{' split' if p.get('split') else ''}, decoder {d.get('type')}")
bytes_ = sum(1 for piece, _ in vocab if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"))
expected = (m.get("type") == "Unigram" and m.get("unk_id") == 0 and vocab[:1] and vocab[0][0] == "<unk>"
            and m.get("byte_fallback") is True and bytes_ == 256 and n.get("type") == "NFKC"
            and p.get("type") == "Metaspace" and p.get("prepend_scheme") == "always" and p.get("split") is True
            and d.get("type") == "Sequence")
print(cell + ("" if expected else f" (**unexpected**; {bytes_} <0xNN> pieces)"))
PY
}
compare() {  # compare HF.ids TOKENMILL.ids TEXT: "ids|differing|first difference", exit 1 when they differ
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import sys
hf_path, tm_path, text_path = sys.argv[1:]
def cell(s, n=80):
    s = s if len(s) <= n else s[:n] + "…"
    # A table cell: "|" escaped (also inside a code span), no backquote, control characters shown.
    return (s.replace("|", "\\|").replace("`", "'").replace("\t", "\\t").replace("\r", "\\r"))
from itertools import zip_longest
ids = differing = 0
first = "–"
def shown(v):
    if v is None:
        return "(no line)"
    v = v.split()
    return " ".join(v[:16]) + (" …" if len(v) > 16 else "")
with open(hf_path) as fa, open(tm_path) as fb, open(text_path, "rb") as ft:
    for n, (x, y, line) in enumerate(zip_longest(fa, fb, ft), 1):
        if line is None and x is None and y is None:
            break
        if y is not None:
            ids += len(y.split())
        if x != y:
            if differing == 0:
                line = (line or b"").decode("utf-8", "replace").rstrip("\n")
                first = (f"line {n} `{cell(line)}`: HF {cell(shown(x), 120)}; "
                         f"tokenmill {cell(shown(y), 120)}")
            differing += 1
print(f"{ids}|{differing}|{first}")
sys.exit(1 if differing else 0)
PY
}
for corpus in "${corpora[@]}"; do
  [[ -f $corpus || -f "$root/../shared/corpora/$corpus.txt.zst" ]] ||
    { echo "hf_unigram_parity.sh: no corpus $corpus (a file, or ../shared/corpora/NAME.txt.zst)" >&2; exit 2; }
done
last_error() { tail -n 1 "$work/err" | tr '|' '/'; }
echo "tokenmill $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), Unigram vocab $vocab," \
  "HF tokenizers $(node -p "require('$root/scripts/.peers/node_modules/tokenizers/package.json').version")"
echo
echo "| corpus | bytes | lines | ids compared | tokenmill's tokenizer.json | differing lines | first difference |"
echo "|---|---|---|---|---|---|---|"
for corpus in "${corpora[@]}"; do
  name=$(basename "$corpus" .txt)
  text "$corpus" "$work/text"
  bytes=$(stat -c %s "$work/text")
  lines=$(wc -l < "$work/text")
  row() { echo "| $name | $bytes | $lines | $1 |"; }
  if ! "$tm" train --algorithm unigram --vocab-size "$vocab" "${threads[@]}" --quiet --checkpoint none \
      --output "$work/tm.json" "$work/text" 2> "$work/err"; then
    row "– | – | – | tokenmill train failed: $(last_error)"; status=1; continue
  fi
  about=$(describe "$work/tm.json")
  if ! "$tm" encode --tokenizer "$work/tm.json" "$work/text" > "$work/tm.ids" 2> "$work/err"; then
    row "– | $about | – | tokenmill encode failed: $(last_error)"; status=1; continue
  fi
  if ! node "$hf" encode "$work/tm.json" "$work/text" > "$work/hf.ids" 2> "$work/err"; then
    row "– | $about | – | HF failed: $(last_error)"; status=1; continue
  fi
  result=$(compare "$work/hf.ids" "$work/tm.ids" "$work/text") || status=1
  IFS='|' read -r ids differing first <<< "$result"
  row "$ids | $about | $differing | $first"
done
echo
if ((status == 0)); then
  echo "hf_unigram_parity.sh: Hugging Face encodes every line as tokenmill does"
else
  echo "hf_unigram_parity.sh: DIFFERENCES (above)"
fi
exit "$status"
