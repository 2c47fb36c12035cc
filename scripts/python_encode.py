#!/usr/bin/env python3
"""The Python side of scripts/python_bench.sh (run by /usr/bin/python3 with tokenmill importable).

  python_encode.py batch TOKENIZER FILE [RUNS]   every line of FILE (with its newline, as str)
      through Tokenizer.encode_batch; prints one JSON line per run:
      {"seconds": S, "tokens": N, "bytes": B} (the call alone: reading and decoding the file
      into str objects is not timed)
  python_encode.py overhead TOKENIZER            the cost of one encode() call on short strings:
      {"short_us": ..., "empty_us": ..., "len_us": ...} (per call, best of 5 rounds of 200000)
  python_encode.py iterator FILE VOCAB           train_from_iterator on a generator over FILE's
      lines (bytes, each with its newline), checkpoints off: the process's wall time is measured
      outside, as for `tokenmill train`.
"""
import json
import sys
import time

import tokenmill


def batch(tokenizer, path, runs):
    tok = tokenmill.Tokenizer.from_file(tokenizer)
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    size = sum(len(line.encode("utf-8")) for line in lines)
    for _ in range(runs):
        start = time.perf_counter()
        ids = tok.encode_batch(lines)
        seconds = time.perf_counter() - start
        print(json.dumps({"seconds": seconds, "tokens": sum(map(len, ids)), "bytes": size}), flush=True)
        del ids


def overhead(tokenizer):
    tok = tokenmill.Tokenizer.from_file(tokenizer)
    encode = tok.encode
    n = 200000
    def best(fn, arg):
        times = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                fn(arg)
            times.append(time.perf_counter() - start)
        return min(times) / n * 1e6
    print(json.dumps({"short_us": best(encode, "hello world"), "empty_us": best(encode, ""),
                      "len_us": best(len, "hello world")}))


def iterator(path, vocab):
    def lines():
        with open(path, "rb") as f:
            yield from f
    tok = tokenmill.train_from_iterator(lines(), vocab_size=int(vocab), checkpoint="none",
                                        progress=False)
    print(json.dumps({"vocab_size": tok.vocab_size}))


if __name__ == "__main__":
    kind = sys.argv[1]
    if kind == "batch":
        batch(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    elif kind == "overhead":
        overhead(sys.argv[2])
    elif kind == "iterator":
        iterator(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown kind {kind}")
