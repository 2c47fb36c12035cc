"""pip install ./python: builds tokenmill._tokenmill with the repository's CMake build.

Offline on Debian 12: needs cmake, g++, the library's -dev packages (scripts/setup.sh installs
them), pybind11-dev and python3-dev; nothing is downloaded (there is no pyproject.toml, so pip
builds with the installed setuptools instead of fetching one).
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = Path(os.environ.get("TOKENMILL_PYTHON_BUILD", ROOT / "build-python"))
        args = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                "-DTOKENMILL_PYTHON=ON", "-DTOKENMILL_BUILD_TESTS=OFF",
                "-DTOKENMILL_BUILD_BENCHMARKS=OFF", f"-DPython_EXECUTABLE={sys.executable}"]
        if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
            args += ["-G", "Ninja"]
        subprocess.check_call(args)
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_tokenmill",
                               "-j", str(os.cpu_count() or 1)])
        built = sorted((build / "python" / "tokenmill").glob("_tokenmill*.so"))
        if not built:
            raise RuntimeError(f"the build left no _tokenmill*.so in {build}/python/tokenmill")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[-1], target)


setup(
    name="tokenmill",
    version="0.1.0",
    description="Fast, exact subword tokenizer training and encoding (BPE, WordPiece, Unigram)",
    packages=["tokenmill"],
    ext_modules=[Extension("tokenmill._tokenmill", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.11",
    zip_safe=False,
)
