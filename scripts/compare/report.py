#!/usr/bin/env python3
"""Helpers of scripts/compare.sh (standard library only).

  report.py timev FILE               wall s, CPU s (user+sys), peak RSS kB, exit status of one
                                     `/usr/bin/time -v -o FILE` record, tab-separated
  report.py vocab FILE               vocabulary size of a tokenizer.json or a SentencePiece .vocab
  report.py train RUNS.tsv... OUTDIR Markdown tables (medians, ratios peer/tokenmill, seed users'
                                     table) to stdout and OUTDIR/table.md; chart data and the
                                     gnuplot chart OUTDIR/compare.png; several RUNS.tsv (from
                                     separate compare.sh runs) are reported together
  report.py encode RUNS.tsv OUTDIR   Markdown table of encoding throughput to stdout and
                                     OUTDIR/encode_table.md
"""

import json
import os
import statistics
import subprocess
import sys

TOOL_LABELS = {
    "tokenmill": "tokenmill",
    "tokenmill-byte": "tokenmill byte-level",
    "hf": "HF tokenizers 0.23.2",
    "spm": "SentencePiece BPE",
}
SHORT_LABELS = {"tokenmill": "tokenmill", "tokenmill-byte": "tokenmill byte", "hf": "HF", "spm": "SPM"}
TRAIN_FIELDS = ["corpus", "bytes", "words", "tool", "run", "status", "limit_s", "wall_s",
                "cpu_s", "rss_kb", "vocab"]
ENCODE_FIELDS = ["corpus", "bytes", "tool", "tokenizer", "run", "status", "wall_s", "cpu_s",
                 "rss_kb", "encode_s", "tokens"]


def parse_timev(path):
    """Returns (wall_s, cpu_s, rss_kb, exit_status) from GNU time's verbose record."""
    wall = cpu = 0.0
    rss = 0
    status = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.strip().rpartition(": ")
            if key.startswith("Elapsed (wall clock) time"):
                seconds = 0.0
                for part in value.split(":"):
                    seconds = seconds * 60 + float(part)
                wall = seconds
            elif key in ("User time (seconds)", "System time (seconds)"):
                cpu += float(value)
            elif key == "Maximum resident set size (kbytes)":
                rss = int(value)
            elif key == "Exit status":
                status = int(value)
            elif line.startswith("Command terminated by signal"):
                status = 128 + int(line.split()[-1])
    return wall, cpu, rss, status


def vocab_size(path):
    if path.endswith(".vocab"):  # SentencePiece: one piece per line
        with open(path, encoding="utf-8", errors="replace") as f:
            return sum(1 for _ in f)
    with open(path, encoding="utf-8") as f:
        tokenizer = json.load(f)
    vocab = tokenizer["model"]["vocab"]
    extra = [t for t in tokenizer.get("added_tokens", []) if t["content"] not in vocab]
    return len(vocab) + len(extra)


def read_tsv(paths, fields):
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip() or line.startswith("corpus\t"):
                    continue
                rows.append(dict(zip(fields, line.rstrip("\n").split("\t"))))
    return rows


def ordered_unique(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def fmt(x, digits=3):
    """Three significant figures, no exponent for the ranges we print."""
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    if x >= 1:
        return f"{x:.2f}"
    return f"{x:.{digits}f}"


class Summary:
    """Medians of one (corpus, tool) group of runs."""

    def __init__(self, rows):
        self.runs = len(rows)
        ok = [r for r in rows if r["status"] == "ok"]
        self.ok = len(ok)
        self.timeouts = sum(1 for r in rows if r["status"] == "timeout")
        self.failures = sum(1 for r in rows if r["status"] == "fail")
        self.limit = float(rows[0].get("limit_s") or 0)
        self.bytes = int(rows[0]["bytes"])
        self.words = int(rows[0].get("words") or 0)
        if ok:
            self.wall = statistics.median(float(r["wall_s"]) for r in ok)
            self.cpu = statistics.median(float(r["cpu_s"]) for r in ok)
            self.rss_mb = statistics.median(int(r["rss_kb"]) for r in ok) / 1024
            self.vocab = ok[-1]["vocab"]
        # CPU time and peak RSS reached before a time limit are lower bounds worth showing.
        self.rss_any_mb = max(int(r["rss_kb"] or 0) for r in rows) / 1024
        self.cpu_any = max(float(r["cpu_s"] or 0) for r in rows)

    @property
    def finished(self):
        return self.ok > 0 and self.timeouts == 0 and self.failures == 0

    def status_note(self):
        if self.timeouts:
            return f"did not finish in {self.limit:.0f} s ({self.timeouts} of {self.runs} runs)"
        if self.failures:
            return f"failed ({self.failures} of {self.runs} runs; see logs/)"
        return ""


def train_report(runs_paths, outdir):
    rows = read_tsv(runs_paths, TRAIN_FIELDS)
    corpora = ordered_unique(r["corpus"] for r in rows)
    tools = [t for t in ("tokenmill", "tokenmill-byte", "hf", "spm") if any(r["tool"] == t for r in rows)]
    summaries = {}
    for corpus in corpora:
        for tool in tools:
            group = [r for r in rows if r["corpus"] == corpus and r["tool"] == tool]
            if group:
                summaries[corpus, tool] = Summary(group)

    out = []
    out.append("| corpus | tool | runs | wall s | CPU s | cores busy | peak RSS MB | vocab "
               "| wall × tokenmill | CPU × tokenmill | RSS × tokenmill |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for corpus in corpora:
        base = summaries.get((corpus, "tokenmill"))
        mb = summaries[corpus, tools[0]].bytes / 1e6 if (corpus, tools[0]) in summaries else 0
        for tool in tools:
            s = summaries.get((corpus, tool))
            if s is None:
                continue
            name = f"{corpus} ({mb:.1f} MB)" if mb < 10 else f"{corpus} ({mb:.0f} MB)"
            if not s.finished:
                rss = f"≥ {s.rss_any_mb:.0f}" if s.timeouts else "–"
                cpu = f"≥ {fmt(s.cpu_any)}" if s.timeouts else "–"
                ratio = cpu_ratio = rss_ratio = "–"
                if s.timeouts and base is not None and base.finished:
                    ratio = f"> {s.limit / base.wall:.0f}×"
                    cpu_ratio = f"> {s.cpu_any / base.cpu:.0f}×"
                    rss_ratio = f"> {s.rss_any_mb / base.rss_mb:.1f}×" if s.rss_any_mb > base.rss_mb else "–"
                out.append(f"| {name} | {TOOL_LABELS[tool]} | {s.runs} | {s.status_note()} | {cpu} | – "
                           f"| {rss} | – | {ratio} | {cpu_ratio} | {rss_ratio} |")
                continue
            wall_ratio = cpu_ratio = rss_ratio = "1" if tool == "tokenmill" else "–"
            if tool != "tokenmill" and base is not None and base.finished:
                wall_ratio = f"{s.wall / base.wall:.1f}×"
                cpu_ratio = f"{s.cpu / base.cpu:.1f}×"
                rss_ratio = f"{s.rss_mb / base.rss_mb:.1f}×"
            out.append(f"| {name} | {TOOL_LABELS[tool]} | {s.runs} | {fmt(s.wall)} | {fmt(s.cpu)} "
                       f"| {s.cpu / s.wall:.2f} | {s.rss_mb:.0f} | {s.vocab} | {wall_ratio} | {cpu_ratio} "
                       f"| {rss_ratio} |")
    out.append("")
    out.append("Seed users' table (medians; words = GPT-2 pre-tokenizer pieces, each line a document):")
    out.append("")
    out.append("| corpus | tool | vocab | MB/s | words/s | peak RSS MB |")
    out.append("|---|---|---|---|---|---|")
    for corpus in corpora:
        for tool in tools:
            s = summaries.get((corpus, tool))
            if s is None:
                continue
            if not s.finished:
                out.append(f"| {corpus} | {TOOL_LABELS[tool]} | – | {s.status_note()} | – | – |")
                continue
            out.append(f"| {corpus} | {TOOL_LABELS[tool]} | {s.vocab} | {fmt(s.bytes / 1e6 / s.wall)} "
                       f"| {s.words / s.wall / 1e6:.2f} M | {s.rss_mb:.0f} |")
    text = "\n".join(out) + "\n"
    with open(os.path.join(outdir, "table.md"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)
    write_chart(corpora, tools, summaries, outdir)


def write_chart(corpora, tools, summaries, outdir):
    """Two panels (wall time, peak RSS; log scales), one cluster of bars per corpus."""
    data = os.path.join(outdir, "chart.dat")
    with open(data, "w", encoding="utf-8") as f:
        f.write("label " + " ".join(f'"{TOOL_LABELS[t]}"' for t in tools) + "\n")
        for corpus in corpora:
            # Finished: medians. Hit the time limit: the limit and the peak RSS reached, drawn
            # hatched as lower bounds. Failed: nothing ("?"), named under the corpus.
            walls, rsses, dnf_walls, dnf_rsses, notes = [], [], [], [], []
            for tool in tools:
                s = summaries.get((corpus, tool))
                finished = s is not None and s.finished
                timed_out = s is not None and s.timeouts > 0
                walls.append(f"{s.wall:.3f}" if finished else "?")
                rsses.append(f"{s.rss_mb:.1f}" if finished else "?")
                dnf_walls.append(f"{s.limit:.0f}" if timed_out else "?")
                dnf_rsses.append(f"{s.rss_any_mb:.1f}" if timed_out and s.rss_any_mb > 0 else "?")
                if s is not None and not finished and not timed_out:
                    notes.append(f"{SHORT_LABELS[tool]}: failed")
            mb = next(s.bytes for (c, _), s in summaries.items() if c == corpus) / 1e6
            label = f"{corpus}\\n{mb:.1f} MB" if mb < 10 else f"{corpus}\\n{mb:.0f} MB"
            label += "".join(f"\\n{n}" for n in notes)
            f.write(f'"{label}" ' + " ".join(walls + rsses + dnf_walls + dnf_rsses) + "\n")
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chart.gp")
    png = os.path.join(outdir, "compare.png")
    # A tool that finished on no corpus leaves an empty column; gnuplot warns about it.
    done = subprocess.run(["gnuplot", "-e", f"datafile='{data}'; outfile='{png}'; ntools={len(tools)}",
                           script], stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stderr)
        raise SystemExit(f"gnuplot failed (exit {done.returncode})")
    print(f"chart: {png}", file=sys.stderr)


def encode_report(runs_paths, outdir):
    rows = read_tsv(runs_paths, ENCODE_FIELDS)
    corpora = ordered_unique(r["corpus"] for r in rows)
    out = ["| corpus | tokenizer | encoder | runs | encode s | MB/s | M tokens/s | tokens | peak RSS MB "
           "| time × tokenmill |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for corpus in corpora:
        for tokenizer in ordered_unique(r["tokenizer"] for r in rows if r["corpus"] == corpus):
            group = [r for r in rows if r["corpus"] == corpus and r["tokenizer"] == tokenizer]
            medians = {}
            tokenmill_tokens = None
            # tokenmill first: the peers' speed-up column divides by its median.
            for tool in sorted(ordered_unique(r["tool"] for r in group), key=lambda t: t != "tokenmill"):
                runs = [r for r in group if r["tool"] == tool]
                ok = [r for r in runs if r["status"] == "ok"]
                if len(ok) < len(runs) or not ok:
                    medians[tool] = None
                    out.append(f"| {corpus} | {tokenizer} | {tool} | {len(runs)} | failed "
                               f"({len(runs) - len(ok)} of {len(runs)} runs; see logs/) | – | – | – | – | – |")
                    continue
                seconds = statistics.median(float(r["encode_s"]) for r in ok)
                medians[tool] = seconds
                size = int(ok[0]["bytes"])
                tokens = int(ok[0]["tokens"])
                rss = statistics.median(int(r["rss_kb"]) for r in ok) / 1024
                base = medians.get("tokenmill")
                ratio = "1" if tool == "tokenmill" else (f"{seconds / base:.1f}×" if base else "–")
                if tool == "tokenmill":
                    tokenmill_tokens = tokens
                    count = f"{tokens}"
                elif tokenmill_tokens is None:
                    count = f"{tokens}"
                else:
                    count = f"{tokens} ({'same' if tokens == tokenmill_tokens else 'DIFFERS'})"
                out.append(f"| {corpus} | {tokenizer} | {tool} | {len(ok)} | {fmt(seconds)} "
                           f"| {fmt(size / 1e6 / seconds)} | {tokens / seconds / 1e6:.2f} | {count} "
                           f"| {rss:.0f} | {ratio} |")
    text = "\n".join(out) + "\n"
    with open(os.path.join(outdir, "encode_table.md"), "w", encoding="utf-8") as f:
        f.write(text)
    sys.stdout.write(text)


def main(argv):
    if len(argv) >= 2 and argv[0] == "timev":
        wall, cpu, rss, status = parse_timev(argv[1])
        print(f"{wall:.2f}\t{cpu:.2f}\t{rss}\t{status}")
    elif len(argv) >= 2 and argv[0] == "vocab":
        print(vocab_size(argv[1]))
    elif len(argv) >= 3 and argv[0] == "train":
        train_report(argv[1:-1], argv[-1])
    elif len(argv) >= 3 and argv[0] == "encode":
        encode_report(argv[1:-1], argv[-1])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
