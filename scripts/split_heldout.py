#!/usr/bin/python3
"""Splits a text corpus for held-out compression figures (char_compression.sh, unigram_bench.sh).

    split_heldout.py SRC TRAIN HELD TRAIN_BYTES HELD_BYTES

HELD gets the last whole lines of SRC that fit in HELD_BYTES; TRAIN the lines before them, or,
with TRAIN_BYTES > 0, the first whole lines of those that fit in TRAIN_BYTES. Every line keeps
its newline (a last line without one gets one).
"""
import sys

src, train, held, train_bytes, held_bytes = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
lines = open(src, 'rb').read().split(b'\n')
if lines and lines[-1] == b'':
    lines.pop()
lines = [l + b'\n' for l in lines]
size, cut = 0, len(lines)
while cut > 0 and size + len(lines[cut - 1]) <= held_bytes:
    cut -= 1
    size += len(lines[cut])
rest = lines[:cut]
if train_bytes > 0:
    kept, total = [], 0
    for l in rest:
        if total + len(l) > train_bytes:
            break
        kept.append(l)
        total += len(l)
    rest = kept
open(train, 'wb').write(b''.join(rest))
open(held, 'wb').write(b''.join(lines[cut:]))
