# SPDX-License-Identifier: Apache-2.0
"""The Python examples of docs/python.md, run as written, in order, in one
namespace (as a reader pasting them into one session would)."""
import pathlib
import re

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "python.md"


def test_examples_run_as_written(capsys):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) >= 6
    ns: dict = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"{DOC.name} example {i + 1}", "exec"), ns)
