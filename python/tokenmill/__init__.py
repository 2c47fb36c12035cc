"""tokenmill: fast, exact subword tokenizer training and encoding on a C++ core.

    import tokenmill
    tok = tokenmill.train(["corpus.txt"], vocab_size=30000, preset="cl100k")
    ids = tok.encode("hello world")
    tok.save("tokenizer.json")

See python/README.md (or help(tokenmill.train)) for every argument and the differences from
Hugging Face tokenizers.
"""
from ._tokenmill import Error, Tokenizer, __version__, resume, train, train_from_iterator

__all__ = ["Error", "Tokenizer", "__version__", "resume", "train", "train_from_iterator"]
