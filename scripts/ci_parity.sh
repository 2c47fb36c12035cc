#!/usr/bin/env bash
# Parity against the real peers, on slices small enough for every CI run: installs them itself
# (npm tokenizers@0.23.2 and tiktoken, scripts/install_peers.sh) and checks
#   1. --hf-compat merges and vocabulary equal Hugging Face's BpeTrainer's (BPE.empty(), the
#      ByteLevel pre-tokenizer with the GPT-2 regex, the default trainer, vocab 30000);
#   2. --hf-compat --hf-all-bytes: all 256 bytes, and merges equal to HF's as far as they go
#      (an unseen byte is in no pair and keeps the other ids in order, so ties fall the same);
#   3. gpt2, cl100k_base and o200k_base ids equal tiktoken's, line by line and whole-file;
#   4. tokenizer.json files tokenmill wrote (trained; converted from cl100k_base; trained with a
#      custom --pattern) encode to the same ids in Hugging Face;
#   5. text with bytes a --hf-compat vocabulary lacks: `encode --unknown-bytes=drop` gives
#      Hugging Face's ids;
#   6. character level (issue 20): `--unit char --hf-compat --byte-fallback=false` merges and
#      vocabulary equal Hugging Face's BpeTrainer's with the Metaspace and the Whitespace
#      pre-tokenizer; char-level tokenizer.json files (byte fallback with Metaspace + NFKC, <unk>
#      with NFKC + lowercase + split digits, word-boundary markers) encode to the same ids in
#      Hugging Face, unseen characters included;
#   7. BERT's text side (issue 21): `pretokenize --preset bert` (with and without --lowercase and
#      --strip-accents) prints Hugging Face's bertNormalizer + bertPreTokenizer pieces
#      (scripts/hf_bert_pieces.cjs) on the slices and on random Unicode text, and on every code
#      point alone differs exactly where tests/data/bert_hf_differences.txt says (characters
#      newer than Hugging Face's Unicode tables); tokenizer.json files trained with --preset bert
#      (char and byte level) encode to the same ids in Hugging Face;
#   8. WordPiece (issue 21, scripts/hf_wordpiece_parity.sh on 2 MB slices): `--algorithm
#      wordpiece --wordpiece-score frequency --hf-compat` with --hf-symbol-order equals Hugging
#      Face's default WordPieceTrainer's vocabulary, ids included (brown, linux_docs); Hugging Face
#      encodes with tokenmill's likelihood-trained tokenizer.json and vocab.txt to the same ids
#      (brown, linux_docs, poetry);
#   9. Unigram (issue 22, scripts/hf_unigram_parity.sh on 2 MB slices): Hugging Face loads
#      tokenmill's Unigram tokenizer.json (byte fallback, NFKC, Metaspace) and encodes every line
#      to tokenmill's ids (brown, linux_docs, poetry; vocab 8000, poetry's slice at 10000 for its
#      alphabet).
#  10. Added special tokens (issue 23, scripts/hf_add_special_tokens.sh on a 2 MB slice of brown):
#      `add-special-tokens` on byte- and char-level BPE, WordPiece, Unigram and cl100k_base gives
#      the ids Hugging Face's addSpecialTokens gives on the original tokenizer.json, and texts
#      with the new tokens encode and decode alike in both.
# Slices: the bundled sample, and the first few MB of brown, linux_docs and poetry from
# ../shared/corpora (missing corpora fail the run: CI has them).
#
#   scripts/ci_parity.sh [BUILD_DIR]     (default build; needs BUILD_DIR/tokenmill and the test
#                                         vocabularies CMake unpacked into BUILD_DIR/test_vocab)
# Prints one line per check; exit 1 on any difference.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
tm="$build/tokenmill"
vocab="$build/test_vocab/vocab"
corpora="$root/../shared/corpora"
[[ -x "$tm" ]] || { echo "ci_parity.sh: no $tm (build first)" >&2; exit 2; }
[[ -f "$vocab/cl100k_base.tiktoken" ]] || { echo "ci_parity.sh: no $vocab (configure with tests on)" >&2; exit 2; }
"$root/scripts/install_peers.sh"
command -v node >/dev/null || { echo "ci_parity.sh: node is missing (apt-get install nodejs)" >&2; exit 2; }
py=/usr/bin/python3
modules="$root/scripts/.peers/node_modules"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

# Slices at line boundaries.
cp "$root/tests/data/sample.txt" "$tmp/sample.txt"
slice() {  # corpus, megabytes
  [[ -f "$corpora/$1.txt.zst" ]] || { echo "ci_parity.sh: missing $corpora/$1.txt.zst" >&2; exit 2; }
  zstd -dc "$corpora/$1.txt.zst" 2>/dev/null | head -c "$(($2 * 1000000))" | sed '$d' > "$tmp/$1.txt" || true
}
slice brown 3
slice linux_docs 3
slice poetry 2
texts="sample brown linux_docs poetry"

same_ids() {  # label, expected (peer), actual (tokenmill)
  "$py" - "$@" <<'PY' || status=1
import sys
label, a, b = sys.argv[1:]
x = open(a).read().split("\n")
y = open(b).read().split("\n")
ids = sum(len(l.split()) for l in x)
diff = [i for i in range(max(len(x), len(y))) if i >= len(x) or i >= len(y) or x[i] != y[i]]
print(f"{'ok  ' if not diff and ids > 0 else 'FAIL'} {label}: {ids} ids, {len(diff)} lines differ")
if diff:
    i = diff[0]
    print(f"     first at line {i + 1}: peer {x[i][:120] if i < len(x) else None!r}")
    print(f"     {' ' * (13 + len(str(i + 1)))}tokenmill {y[i][:120] if i < len(y) else None!r}")
sys.exit(1 if diff or ids == 0 else 0)
PY
}

# 1, 2: training.
for text in sample brown linux_docs; do
  node "$root/scripts/compare/hf_train.js" "$modules" "$tmp/$text.txt" "$tmp/$text.hf.json" >/dev/null
  "$tm" train --hf-compat --vocab-size 30000 --preset gpt2 --checkpoint=none --quiet \
    --output "$tmp/$text.tm.json" "$tmp/$text.txt"
  "$tm" train --hf-compat --hf-all-bytes --vocab-size 30000 --preset gpt2 --checkpoint=none \
    --quiet --output "$tmp/$text.all.json" "$tmp/$text.txt"
  "$py" - "$text" "$tmp/$text.hf.json" "$tmp/$text.tm.json" "$tmp/$text.all.json" <<'PY' || status=1
import json, sys
name, hf_path, tm_path, all_path = sys.argv[1:]
def load(path):
    m = json.load(open(path, encoding="utf-8"))["model"]
    return [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]], m["vocab"]
hf_m, hf_v = load(hf_path)
tm_m, tm_v = load(tm_path)
all_m, all_v = load(all_path)
ok = hf_m == tm_m and hf_v == tm_v and len(hf_m) > 0
print(f"{'ok  ' if ok else 'FAIL'} hf-compat training {name}: {len(hf_m)} merges (HF) vs {len(tm_m)}, "
      f"{sum(hf_v.get(t) != tm_v.get(t) for t in set(hf_v) | set(tm_v))} ids differ")
n = len(all_m)
alphabet = sum(1 for t, i in all_v.items() if i < 256)
ok_all = all_m == hf_m[:n] and alphabet == 256 and (len(all_v) == 30000 or n == len(hf_m))
print(f"{'ok  ' if ok_all else 'FAIL'} hf-compat --hf-all-bytes {name}: 256-byte alphabet {alphabet == 256}, "
      f"its {n} merges are HF's first {n}: {all_m == hf_m[:n]}")
sys.exit(0 if ok and ok_all else 1)
PY
done

# 3: tiktoken.
for enc in gpt2 cl100k_base o200k_base; do
  for text in $texts; do
    node "$root/scripts/peer_encode.cjs" tiktoken "$enc" "$tmp/$text.txt" > "$tmp/expected"
    "$tm" encode --tokenizer "$vocab/$enc.tiktoken" "$tmp/$text.txt" > "$tmp/actual"
    same_ids "tiktoken $enc $text (lines)" "$tmp/expected" "$tmp/actual"
  done
  node "$root/scripts/peer_encode.cjs" tiktoken "$enc" "$tmp/linux_docs.txt" --whole > "$tmp/expected"
  "$tm" encode --tokenizer "$vocab/$enc.tiktoken" --whole "$tmp/linux_docs.txt" > "$tmp/actual"
  same_ids "tiktoken $enc linux_docs (whole)" "$tmp/expected" "$tmp/actual"
done

# 4: tokenmill's tokenizer.json files in Hugging Face.
"$tm" convert "$vocab/cl100k_base.tiktoken" "$tmp/cl100k_base.json" >/dev/null
"$tm" train --vocab-size 30000 --checkpoint=none --quiet --output "$tmp/brown30k.json" "$tmp/brown.txt"
"$tm" train --vocab-size 8000 --checkpoint=none --quiet --output "$tmp/pattern.json" \
  --pattern ' ?\p{L}+| ?\p{N}+| ?[\p{P}\p{S}]+|\s+(?!\S)|\s+' "$tmp/linux_docs.txt"
for tokenizer in cl100k_base brown30k pattern; do
  for text in $texts; do
    node "$root/scripts/peer_encode.cjs" hf "$tmp/$tokenizer.json" "$tmp/$text.txt" > "$tmp/expected"
    "$tm" encode --tokenizer "$tmp/$tokenizer.json" "$tmp/$text.txt" > "$tmp/actual"
    same_ids "Hugging Face encodes tokenmill's $tokenizer.json: $text" "$tmp/expected" "$tmp/actual"
  done
done

# 5: bytes a --hf-compat vocabulary lacks (brown's has no Chinese bytes, few of linux_docs').
for text in linux_docs poetry; do
  node "$root/scripts/peer_encode.cjs" hf "$tmp/brown.tm.json" "$tmp/$text.txt" > "$tmp/expected"
  "$tm" encode --tokenizer "$tmp/brown.tm.json" --unknown-bytes drop "$tmp/$text.txt" > "$tmp/actual"
  same_ids "unseen bytes dropped as Hugging Face drops them: brown's hf-compat vocabulary on $text" \
    "$tmp/expected" "$tmp/actual"
done

# 6: character level.
for pre in metaspace whitespace; do
  for text in sample brown; do
    node "$root/scripts/compare/hf_train.js" "$modules" "$tmp/$text.txt" "$tmp/$text.$pre.hf.json" "$pre" >/dev/null
    "$tm" train --unit char --hf-compat --byte-fallback=false --preset "$pre" --vocab-size 30000 \
      --checkpoint=none --quiet --output "$tmp/$text.$pre.tm.json" "$tmp/$text.txt"
    "$py" - "char $pre $text" "$tmp/$text.$pre.hf.json" "$tmp/$text.$pre.tm.json" <<'PY' || status=1
import json, sys
label, hf_path, tm_path = sys.argv[1:]
def load(path):
    m = json.load(open(path, encoding="utf-8"))["model"]
    return [tuple(x.split(" ", 1)) if isinstance(x, str) else tuple(x) for x in m["merges"]], m["vocab"]
hf_m, hf_v = load(hf_path)
tm_m, tm_v = load(tm_path)
ok = hf_m == tm_m and hf_v == tm_v and len(hf_m) > 0
print(f"{'ok  ' if ok else 'FAIL'} hf-compat training {label}: {len(hf_m)} merges (HF) vs {len(tm_m)}, "
      f"{sum(hf_v.get(t) != tm_v.get(t) for t in set(hf_v) | set(tm_v))} ids differ")
sys.exit(0 if ok else 1)
PY
  done
done
cat "$tmp/brown.txt" "$tmp/poetry.txt" > "$tmp/mixed.txt"
"$tm" train --unit char --preset metaspace --normalize nfkc --vocab-size 8000 --checkpoint=none \
  --quiet --output "$tmp/char_meta.json" "$tmp/brown.txt"
"$tm" train --unit char --byte-fallback=false --preset metaspace --normalize nfkc --lowercase \
  --split-digits --vocab-size 8000 --checkpoint=none --quiet --output "$tmp/char_unk.json" "$tmp/brown.txt"
"$tm" train --unit char --preset whitespace --continuing-subword-prefix '##' --end-of-word-suffix '</w>' \
  --vocab-size 8000 --checkpoint=none --quiet --output "$tmp/char_marks.json" "$tmp/brown.txt"
for tokenizer in char_meta char_unk char_marks; do
  for text in sample mixed; do
    node "$root/scripts/peer_encode.cjs" hf "$tmp/$tokenizer.json" "$tmp/$text.txt" > "$tmp/expected"
    "$tm" encode --tokenizer "$tmp/$tokenizer.json" "$tmp/$text.txt" > "$tmp/actual"
    same_ids "Hugging Face encodes tokenmill's $tokenizer.json: $text" "$tmp/expected" "$tmp/actual"
  done
done
# 7: BERT's normalizer and pre-tokenizer. The random text leaves out the listed code points.
differences="$root/tests/data/bert_hf_differences.txt"
"$py" - "$differences" "$tmp/bert_stress.txt" "$tmp/bert_every.txt" <<'PY'
import random, sys
listed = set()
for line in open(sys.argv[1], encoding="utf-8"):
    fields = line.split("#")[0].split()
    if fields:
        first, _, last = fields[1].partition("..")
        listed.update(range(int(first, 16), int(last or first, 16) + 1))
# (code points, weight): ASCII, controls, scripts with combining marks, Hangul, kana, BERT's CJK
# ranges and the gap between them, punctuation and spaces, private use, variation selectors,
# specials, emoji, tags, and anything in the astral planes (mostly unassigned).
pools = [(range(0x20, 0x7F), 30), ([0, 1, 9, 10, 11, 12, 13, 0x1C, 0x1F, 0x7F, 0x85, 0x9F], 2),
         (range(0xA0, 0x250), 8), (range(0x300, 0x370), 6), (range(0x370, 0x530), 4),
         (range(0x591, 0x700), 3), (range(0x900, 0xE00), 3), (range(0x1100, 0x1200), 2),
         (range(0x1E00, 0x2000), 4), (range(0x2000, 0x2070), 3), (range(0x20A0, 0x2200), 2),
         (range(0x3000, 0x3100), 3), (range(0x3400, 0x4DC0), 2), (range(0x4E00, 0xA000), 8),
         (range(0xAC00, 0xD7A4), 4), (range(0xE000, 0xE100), 1), (range(0xF900, 0xFB00), 1),
         (range(0xFE00, 0xFE10), 1), (range(0xFE30, 0x10000), 2), (range(0x10000, 0x110000), 2),
         (range(0x1D400, 0x1D800), 1), (range(0x1F300, 0x1FA00), 2), (range(0x20000, 0x2FA20), 3),
         (range(0x2B800, 0x2B940), 1), (range(0xE0000, 0xE0080), 1)]
rng = random.Random(21)
weights = [w for _, w in pools]
lines = []
while len(lines) < 20000:
    chars = []
    for _ in range(rng.randrange(80)):
        cp = rng.choice(rng.choices(pools, weights)[0][0])
        if not 0xD800 <= cp < 0xE000 and cp not in listed:
            chars.append(chr(cp))
    lines.append("".join(chars) + rng.choice(["\n", "\n", "\r\n"]))
open(sys.argv[2], "w", encoding="utf-8", newline="").write("".join(lines))
with open(sys.argv[3], "w", encoding="utf-8", newline="") as out:
    for cp in range(0x110000):
        if not 0xD800 <= cp < 0xE000:
            out.write(f"<L>x{chr(cp)}y\n")
PY
same_pieces() {  # label, expected (peer), actual (tokenmill)
  "$py" - "$@" <<'PY' || status=1
import sys
label, a, b = sys.argv[1:]
x = open(a, "rb").read().split(b"\n")
y = open(b, "rb").read().split(b"\n")
i = next((i for i in range(max(len(x), len(y))) if i >= len(x) or i >= len(y) or x[i] != y[i]), None)
print(f"{'ok  ' if i is None and len(x) > 1 else 'FAIL'} {label}: {len(x) - 1} pieces"
      + ("" if i is None else f", first difference at piece {i + 1}: peer {x[i][:80] if i < len(x) else None!r}, "
                              f"tokenmill {y[i][:80] if i < len(y) else None!r}"))
sys.exit(0 if i is None and len(x) > 1 else 1)
PY
}
for text in sample brown linux_docs poetry bert_stress; do
  for flags in "" "--lowercase" "--strip-accents" "--lowercase --strip-accents"; do
    # shellcheck disable=SC2086  # the flags are words
    node "$root/scripts/hf_bert_pieces.cjs" "$tmp/$text.txt" $flags > "$tmp/expected"
    # shellcheck disable=SC2086
    "$tm" pretokenize --preset bert $flags "$tmp/$text.txt" > "$tmp/actual"
    same_pieces "bert pieces $text${flags:+ $flags}" "$tmp/expected" "$tmp/actual"
  done
done
for flags in "" "--lowercase --strip-accents"; do
  # shellcheck disable=SC2086
  node "$root/scripts/hf_bert_pieces.cjs" "$tmp/bert_every.txt" $flags --special-token '<L>' > "$tmp/expected"
  # shellcheck disable=SC2086
  "$tm" pretokenize --preset bert $flags --special-token '<L>' "$tmp/bert_every.txt" > "$tmp/actual"
  "$py" - "$differences" "$tmp/expected" "$tmp/actual" "$flags" <<'PY' || status=1
import sys
listed_path, a, b, flags = sys.argv[1:]
key = ",".join(f.lstrip("-") for f in flags.split()) or "none"
listed = set()
for line in open(listed_path, encoding="utf-8"):
    fields = line.split("#")[0].split()
    if fields and fields[0] == key:
        first, _, last = fields[1].partition("..")
        listed.update(range(int(first, 16), int(last or first, 16) + 1))
def per_code_point(path):  # the pieces after each "<L>"
    groups = []
    for line in open(path, "rb").read().split(b"\n")[:-1]:
        if line == b"\\special <L>":
            groups.append([])
        else:
            groups[-1].append(line)
    return groups
cps = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
x, y = per_code_point(a), per_code_point(b)
ok = len(x) == len(y) == len(cps)
differ = {cps[i] for i in range(len(cps)) if x[i] != y[i]} if ok else set()
ok = ok and differ == listed and len(listed) > 0
print(f"{'ok  ' if ok else 'FAIL'} bert pieces of every code point ({key}): {len(differ)} differ, "
      f"{len(listed)} listed in bert_hf_differences.txt")
for name, cps_ in (("differ, not listed", differ - listed), ("listed, the same", listed - differ)):
    if cps_:
        print(f"     {name}: " + " ".join(f"{c:04X}" for c in sorted(cps_)[:20]))
sys.exit(0 if ok else 1)
PY
done
"$tm" train --unit char --preset bert --lowercase --strip-accents --vocab-size 8000 \
  --checkpoint=none --quiet --output "$tmp/bert_char.json" "$tmp/brown.txt"
"$tm" train --preset bert --vocab-size 8000 --checkpoint=none --quiet \
  --output "$tmp/bert_byte.json" "$tmp/brown.txt"
for tokenizer in bert_char bert_byte; do
  for text in sample mixed bert_stress; do
    node "$root/scripts/peer_encode.cjs" hf "$tmp/$tokenizer.json" "$tmp/$text.txt" > "$tmp/expected"
    "$tm" encode --tokenizer "$tmp/$tokenizer.json" "$tmp/$text.txt" > "$tmp/actual"
    same_ids "Hugging Face encodes tokenmill's $tokenizer.json: $text" "$tmp/expected" "$tmp/actual"
  done
done
# 8: WordPiece.
bash "$root/scripts/hf_wordpiece_parity.sh" --tokenmill "$tm" --bytes 2000000 |
  grep -v '^hf_wordpiece_parity.sh:' || status=1
# 9: Unigram.
for spec in "brown 8000" "linux_docs 8000" "poetry 10000"; do
  read -r corpus vocab <<<"$spec"
  bash "$root/scripts/hf_unigram_parity.sh" --tokenmill "$tm" --slice 2000000 --vocab-size "$vocab" \
    "$corpus" | grep -v '^hf_unigram_parity.sh:' || status=1
done
# 10: added special tokens ($vocab is a vocabulary size by now).
bash "$root/scripts/hf_add_special_tokens.sh" --tokenmill "$tm" --vocab "$build/test_vocab/vocab" \
  --bytes 2000000 brown | grep -E '^(ok|FAIL|skip)|DIFF' || status=1
if ((status == 0)); then echo "ci_parity.sh: every check equals the peers"; else echo "ci_parity.sh: DIFFERENCES (above)"; fi
exit "$status"
