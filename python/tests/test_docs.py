# SPDX-License-Identifier: Apache-2.0
"""The Python examples of docs/python.md, run as written, in order, in one
namespace (as a reader pasting them into one session would); and README.md's
(those that need pyspark run in test_spark.py, under make test-spark)."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "python.md"
README = ROOT / "README.md"


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), re.S)


def test_examples_run_as_written(capsys):
    blocks = python_blocks(DOC)
    assert len(blocks) >= 6
    ns: dict = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC.name} example {i + 1}", "exec"), ns)


def test_readme_examples_run_as_written():
    # Only the pyspark blocks are left to test_spark.py; at least the
    # package's own example must be here, so that a renamed fence does not
    # make this test pass on nothing.
    blocks = [b for b in python_blocks(README) if "pyspark" not in b]
    assert len(blocks) >= 1
    ns: dict = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{README.name} example {i + 1}", "exec"), ns)
