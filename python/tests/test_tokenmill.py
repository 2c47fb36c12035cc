"""The Python API against the CLI (the same library through another front end), and the
behaviour issue 23 asks for: streaming from an iterator, Ctrl-C, the GIL, errors."""
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import tokenmill


def run_cli(cli, *args, stdin=None):
    return subprocess.run([cli, *map(str, args)], input=stdin, capture_output=True, check=True)


def lines_of(path):
    with open(path, "rb") as f:
        return f.readlines()


# ---- the same tokenizer and ids as the CLI ------------------------------------------------------

CASES = [
    ({"vocab_size": 2000}, ["--vocab-size", "2000"]),
    ({"vocab_size": 1500, "preset": "cl100k", "special_tokens": ["<|endoftext|>"]},
     ["--vocab-size", "1500", "--preset", "cl100k", "--special-token", "<|endoftext|>"]),
    ({"vocab_size": 2000, "hf_compat": True, "min_frequency": 3, "max_token_length": 8},
     ["--vocab-size", "2000", "--hf-compat", "--min-frequency", "3", "--max-token-length", "8"]),
    ({"vocab_size": 2500, "pattern": r"\w+|[^\w\s]+|\s+", "normalize": "nfkc", "lowercase": True},
     ["--vocab-size", "2500", "--pattern", r"\w+|[^\w\s]+|\s+", "--normalize", "nfkc", "--lowercase"]),
    # The sample holds about 5000 distinct characters (English, Chinese, code), each a token.
    ({"vocab_size": 6000, "unit": "char"}, ["--vocab-size", "6000", "--unit", "char"]),
    ({"vocab_size": 6000, "algorithm": "wordpiece"}, ["--vocab-size", "6000", "--algorithm", "wordpiece"]),
    ({"vocab_size": 6000, "algorithm": "unigram"}, ["--vocab-size", "6000", "--algorithm", "unigram"]),
]


@pytest.mark.parametrize("kwargs,flags", CASES, ids=lambda c: str(c)[:40])
def test_train_gives_the_cli_tokenizer_and_ids(cli, sample, tmp_path, kwargs, flags):
    ours = tmp_path / "py.json"
    theirs = tmp_path / "cli.json"
    tok = tokenmill.train(str(sample), progress=False, **kwargs)
    tok.save(ours)
    run_cli(cli, "train", *flags, "--quiet", "--checkpoint", "none", "--output", theirs, sample)
    assert ours.read_bytes() == theirs.read_bytes()
    # Also written by train(output=...) itself.
    direct = tmp_path / "direct.json"
    tokenmill.train(sample, progress=False, output=str(direct), checkpoint="none", **kwargs)
    assert direct.read_bytes() == theirs.read_bytes()
    lines = lines_of(sample)[:300]
    cli_ids = run_cli(cli, "encode", "--tokenizer", theirs, stdin=b"".join(lines)).stdout.decode()
    expected = [[int(x) for x in line.split()] for line in cli_ids.splitlines()]
    # The CLI encodes each line with its newline.
    texts = lines
    assert tok.encode_batch(texts) == expected
    assert [tok.encode(t) for t in texts[:50]] == expected[:50]
    loaded = tokenmill.Tokenizer.from_file(theirs)
    assert loaded.encode_batch(texts) == expected


def test_cl100k_encodes_hello_as_openai_does(vocab_dir):
    tok = tokenmill.Tokenizer.from_file(vocab_dir / "cl100k_base.tiktoken")
    assert tok.encode("hello") == [15339]
    assert tok.vocab_size == 100261  # entries, as Hugging Face counts them (ids have gaps)
    # Special tokens above the entry count are in the vocabulary; a gap id names no token.
    assert len(tok.get_vocab()) == 100261
    assert tok.token_to_id("<|endofprompt|>") == 100276 and tok.id_to_token(100276) == "<|endofprompt|>"
    assert tok.id_to_token(100256) is None
    assert tok.decode(tok.encode("héllo wörld <|endoftext|>")) == "héllo wörld <|endoftext|>"
    assert tok.encode("<|endoftext|>") == [100257]
    assert tok.encode("<|endoftext|>", allowed_special="none") != [100257]
    with pytest.raises(ValueError, match="which `allowed_special` refuses"):
        tok.encode("<|endoftext|>", allowed_special="raise")


# ---- train_from_iterator ------------------------------------------------------------------------

@pytest.mark.parametrize("threads", [1, 2, 4])
def test_train_from_iterator_equals_train_on_the_same_lines(sample, tmp_path, threads):
    want = tmp_path / "file.json"
    tokenmill.train(sample, vocab_size=3000, threads=threads, progress=False).save(want)

    def lines():  # a generator: each line, with its newline, as the file reading takes it
        with open(sample, encoding="utf-8") as f:
            yield from f

    got = tmp_path / "iter.json"
    tokenmill.train_from_iterator(lines(), vocab_size=3000, threads=threads, progress=False).save(got)
    assert got.read_bytes() == want.read_bytes()
    # bytes, and batches (lists of texts) as Hugging Face's train_from_iterator takes them
    raw = lines_of(sample)
    batches = [raw[i:i + 100] for i in range(0, len(raw), 100)]
    got2 = tmp_path / "batches.json"
    tokenmill.train_from_iterator(iter(batches), vocab_size=3000, threads=threads,
                                  progress=False).save(got2)
    assert got2.read_bytes() == want.read_bytes()


def test_train_from_iterator_unigram_equals_train(sample, tmp_path):
    want = tmp_path / "file.json"
    tokenmill.train(sample, vocab_size=6000, algorithm="unigram", progress=False).save(want)
    got = tmp_path / "iter.json"
    tokenmill.train_from_iterator(lines_of(sample), vocab_size=6000, algorithm="unigram",
                                  progress=False).save(got)
    assert got.read_bytes() == want.read_bytes()


def test_iterator_errors_come_back_as_they_were_raised(sample):
    class Boom(Exception):
        pass

    def failing():
        yield "some text\n"
        raise Boom("from the generator")

    with pytest.raises(Boom, match="from the generator"):
        tokenmill.train_from_iterator(failing(), vocab_size=500, progress=False)
    with pytest.raises(TypeError, match="str or bytes"):
        tokenmill.train_from_iterator(["fine\n", 42], vocab_size=500, progress=False)
    with pytest.raises(ValueError, match="empty"):
        tokenmill.train_from_iterator(iter([]), vocab_size=500, progress=False)


def test_train_from_iterator_writes_a_checkpoint_that_resumes(sample, tmp_path):
    out = tmp_path / "t.json"
    tokenmill.train_from_iterator(lines_of(sample), vocab_size=1500, output=str(out),
                                  progress=False)
    assert (tmp_path / "t.json.ckpt").exists()
    more = tokenmill.resume(tmp_path / "t.json.ckpt", vocab_size=2500, output=str(tmp_path / "u.json"),
                            progress=False)
    direct = tokenmill.train(sample, vocab_size=2500, progress=False)
    assert more.get_vocab() == direct.get_vocab()


# ---- Ctrl-C ---------------------------------------------------------------------------------------

def interrupt_when(path):
    """Sends SIGINT to this process from another thread once `path` exists (the checkpoint
    written after counting), as a user's Ctrl-C would arrive during training."""
    def watch():
        deadline = time.monotonic() + 120
        while not Path(path).exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGINT)
    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("kwargs", [{"vocab_size": 30000}, {"vocab_size": 8000, "algorithm": "unigram"}],
                         ids=["bpe", "unigram"])
def test_ctrl_c_interrupts_and_resume_completes_identically(brown, tmp_path, kwargs):
    full = tmp_path / "full.json"
    tokenmill.train(brown, output=str(full), checkpoint="none", progress=False, **kwargs)

    out = tmp_path / "t.json"
    ckpt = tmp_path / "t.json.ckpt"
    watcher = interrupt_when(ckpt)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        tokenmill.train(brown, output=str(out), progress=False, **kwargs)
    watcher.join()
    assert time.monotonic() - started < 60
    assert ckpt.exists() and not out.exists()
    tokenmill.resume(ckpt, progress=False)
    assert out.read_bytes() == full.read_bytes()


def test_gil_is_released_while_training_and_encoding(sample, vocab_dir):
    ticks = 0
    done = threading.Event()

    def work():
        try:
            tokenmill.train(sample, vocab_size=5000, progress=False, threads=1)
            tok = tokenmill.Tokenizer.from_file(vocab_dir / "cl100k_base.tiktoken")
            texts = [line.decode("utf-8", "replace") for line in lines_of(sample)] * 4
            tok.encode_batch(texts)
        finally:
            done.set()

    thread = threading.Thread(target=work)
    thread.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    thread.join()
    # With the GIL held for the whole run this loop would run a handful of times.
    assert ticks > 50


# ---- the Tokenizer ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small(sample):
    return tokenmill.train(sample, vocab_size=1000, special_tokens=["<|endoftext|>"], progress=False)


def test_vocabulary_accessors_agree(small):
    vocab = small.get_vocab()
    assert len(vocab) == small.vocab_size == small.get_vocab_size() == 1000
    for token, i in list(vocab.items())[:2000]:
        assert small.token_to_id(token) == i
        assert small.id_to_token(i) == token
    assert small.token_to_id("no such token, surely") is None
    assert small.id_to_token(10**6) is None
    assert small.id_to_token(-1) is None
    assert small.special_tokens == ["<|endoftext|>"]
    assert "Tokenizer" in repr(small)


def test_encode_decode_round_trip_and_batches(small, sample):
    texts = [line.decode("utf-8") for line in lines_of(sample)[:200]] + ["", "ünïcödé ✓ 中文", "<|endoftext|>x"]
    batch = small.encode_batch(texts)
    assert batch == [small.encode(t) for t in texts]
    assert small.decode_batch(batch) == texts
    assert [small.decode(ids) for ids in batch] == texts
    assert small.decode_bytes(small.encode(b"\xff\xfe raw")) == b"\xff\xfe raw"
    assert small.decode(small.encode(b"\xff")) == "\ufffd"
    assert small.encode("a<|endoftext|>b")[1] == small.token_to_id("<|endoftext|>")


def test_explain_is_structured_and_matches_encode(small):
    text = "Hello world<|endoftext|> again"
    pieces = small.explain(text)
    assert [i for p in pieces for i in p["ids"]] == small.encode(text)
    assert any(p["special"] == "<|endoftext|>" for p in pieces)
    word = next(p for p in pieces if p["text"] == " world")
    assert word["tokens"] == [small.id_to_token(i) for i in word["ids"]]
    assert all(set(m) == {"left", "right", "result", "priority"} for m in word["merges"])


def test_unigram_explain_has_score_and_runner_up(sample):
    tok = tokenmill.train(sample, vocab_size=6000, algorithm="unigram", progress=False)
    pieces = tok.explain("international")
    assert pieces and all("score" in p and "runner_up" in p for p in pieces)


def test_add_special_tokens(small, sample, tmp_path, cli):
    tok = tokenmill.train(sample, vocab_size=1000, special_tokens=["<|endoftext|>"], progress=False)
    before = tok.encode("plain text")
    assert tok.add_special_tokens(["<|im_start|>", "<|im_end|>", "<|endoftext|>"]) == 2
    assert tok.vocab_size == 1002
    assert tok.token_to_id("<|im_start|>") == 1000 and tok.token_to_id("<|im_end|>") == 1001
    assert tok.encode("<|im_start|>plain text<|im_end|>") == [1000, *before, 1001]
    assert tok.decode([1000, *before, 1001]) == "<|im_start|>plain text<|im_end|>"
    with pytest.raises(ValueError):
        tok.add_special_tokens([""])
    # The CLI's add-special-tokens gives the same file.
    path = tmp_path / "small.json"
    small.save(path)
    run_cli(cli, "add-special-tokens", path, "--special-token", "<|im_start|>",
            "--special-token", "<|im_end|>", "--output", tmp_path / "cli.json")
    tok.save(tmp_path / "py.json")
    assert (tmp_path / "py.json").read_bytes() == (tmp_path / "cli.json").read_bytes()


def test_save_formats(small, tmp_path):
    small.save(tmp_path / "t.tiktoken")
    again = tokenmill.Tokenizer.from_file(tmp_path / "t.tiktoken")
    assert again.encode("some text here") == small.encode("some text here")
    small.save(tmp_path / "x.bin", format="hf")
    assert tokenmill.Tokenizer.from_file(tmp_path / "x.bin").get_vocab() == small.get_vocab()


# ---- bad input: the documented exceptions ------------------------------------------------------------

def test_bad_arguments_raise_the_documented_exceptions(sample, tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword argument 'vocab_sise'"):
        tokenmill.train(sample, vocab_sise=100)
    with pytest.raises(ValueError, match="vocab_size"):
        tokenmill.train(sample, vocab_size="many")
    with pytest.raises(ValueError, match="seed_size"):
        tokenmill.train(sample, seed_size=10, progress=False)
    with pytest.raises(ValueError, match="preset"):
        tokenmill.train(sample, preset="no-such-preset", progress=False)
    with pytest.raises(ValueError, match="not both"):
        tokenmill.train(sample, preset="gpt2", pattern=r"\w+")
    with pytest.raises(FileNotFoundError):
        tokenmill.train(tmp_path / "missing.txt", progress=False)
    assert issubclass(FileNotFoundError, OSError)
    with pytest.raises(FileNotFoundError):
        tokenmill.Tokenizer.from_file(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": {"type": "BPE", "vocab": 7}}')
    with pytest.raises((ValueError, tokenmill.Error)):
        tokenmill.Tokenizer.from_file(bad)
    with pytest.raises(FileNotFoundError):
        tokenmill.resume(tmp_path / "missing.ckpt")
    tok = tokenmill.train(sample, vocab_size=600, progress=False)
    with pytest.raises(ValueError):
        tok.decode([10**9])
    with pytest.raises(ValueError, match="allowed_special"):
        tok.encode("x", allowed_special="some")
    with pytest.raises(TypeError):
        tok.encode(42)
    assert issubclass(tokenmill.Error, Exception)


def test_ctrl_c_while_reading_the_iterator_raises_and_writes_nothing(sample, tmp_path):
    out = tmp_path / "t.json"

    def lines():
        for i, line in enumerate(lines_of(sample)):
            if i == 2000:
                os.kill(os.getpid(), signal.SIGINT)
            yield line

    with pytest.raises(KeyboardInterrupt):
        tokenmill.train_from_iterator(lines(), vocab_size=2000, output=str(out), progress=False)
    assert list(tmp_path.iterdir()) == []


def test_progress_is_reported_as_the_cli_reports_it(sample, capfd):
    tokenmill.train(sample, vocab_size=600, progress="json")
    err = capfd.readouterr().err
    assert '"stage":"train"' in err and '"merges":' in err
    tokenmill.train(sample, vocab_size=600, progress=False)
    assert capfd.readouterr().err == ""
