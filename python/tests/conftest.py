import os
import shutil
import signal
from pathlib import Path

import pytest

# The Ctrl-C tests send SIGINT to this process and expect KeyboardInterrupt, which needs Python's
# own handler. Python installs it only when SIGINT is not ignored at start-up, and a shell
# without job control starts background commands (`cmd &`, nohup runs of the test script) with
# SIGINT ignored: the tests then failed for the launcher, not the code.
signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(os.environ.get("TOKENMILL_SOURCE_DIR", Path(__file__).resolve().parents[2]))
SAMPLE = ROOT / "tests" / "data" / "sample.txt"
SHARED = ROOT.parent / "shared"


def _cli():
    path = os.environ.get("TOKENMILL_CLI") or shutil.which("tokenmill")
    if not path:
        for candidate in (ROOT / "build" / "tokenmill", ROOT / "build-python" / "tokenmill"):
            if candidate.exists():
                path = str(candidate)
    return path


@pytest.fixture(scope="session")
def cli():
    path = _cli()
    if not path:
        pytest.skip("the tokenmill CLI is not built (set TOKENMILL_CLI)")
    return path


@pytest.fixture(scope="session")
def sample():
    return SAMPLE


@pytest.fixture(scope="session")
def vocab_dir():
    path = os.environ.get("TOKENMILL_VOCAB_DIR")
    if not path or not Path(path, "cl100k_base.tiktoken").exists():
        pytest.skip("OpenAI's vocabularies are not extracted (set TOKENMILL_VOCAB_DIR)")
    return Path(path)


@pytest.fixture(scope="session")
def brown():
    """The shared brown corpus (5 MB, zstd: the library reads it as it is)."""
    path = SHARED / "corpora" / "brown.txt.zst"
    if not path.exists():
        pytest.skip(f"{path} is missing")
    return path
