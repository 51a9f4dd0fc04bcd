"""Shared helpers of the Python package's tests: the opscope binary run as a user runs it,
and results brought to the JSON report's form (tables as lists of records) for comparison.

Run by CTest (tests/CMakeLists.txt) with PYTHONPATH at the build tree's package and
OPSCOPE_BINARY at the binary built beside it, from the source tree."""
import json
import math
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.environ.get("OPSCOPE_BINARY", os.path.join(ROOT, "build", "opscope"))


def run_cli(*args):
    """The binary with ARGS from the source tree: (exit status, stdout, stderr)."""
    p = subprocess.run([BINARY, *args], cwd=ROOT, capture_output=True, text=True,
                       stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def cli_json(*args):
    status, out, err = run_cli(*args, "--format", "json")
    assert status == 0, err
    return json.loads(out)


def cli_error(*args):
    """The message the binary prints after 'opscope: error: ' (exit status 2)."""
    status, _, err = run_cli(*args)
    assert status == 2, err
    first = err.splitlines()[0]
    assert first.startswith("opscope: error: "), err
    return first[len("opscope: error: "):]


def plain(value):
    """A number or label from a table cell as JSON has it (NaN: null)."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def records(table):
    """A DataFrame, or a dict of numpy arrays, as JSON's list of records."""
    if hasattr(table, "to_dict") and hasattr(table, "columns"):
        names = list(table.columns)
        columns = {n: list(table[n]) for n in names}
    else:
        names = list(table)
        columns = {n: list(table[n]) for n in names}
    rows = len(columns[names[0]]) if names else 0
    return [{n: plain(columns[n][i]) for n in names} for i in range(rows)]


def as_json(result):
    """A report or sweep from the package with its tables as records (JSON's form)."""
    out = dict(result)
    for key in ("nodes", "points"):
        if key in out:
            out[key] = records(out[key])
    return out


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(autouse=True)
def in_source_tree(monkeypatch):
    """Relative paths name the same files for the package as for the binary."""
    monkeypatch.chdir(ROOT)
