"""The package installs as the README says and imports from any directory:
 * `cmake --install build --component python` (what scripts/build.sh runs for Debian's python3)
   puts the package in one folder that works on its own, away from the build tree;
 * `python3 -m venv --system-site-packages V && V/bin/pip install --no-build-isolation
   --no-index .` builds a wheel offline with Debian's packages only (pyproject.toml, setup.py),
   here from a copy of the package's files and reusing this build tree's CMake build
   (OPSCOPE_CMAKE_BUILD_DIR) rather than building the C++ a second time.
Both are checked by a fresh interpreter, in an empty directory, against the command line."""
import json
import os
import shutil
import subprocess
import sys

from conftest import ROOT, cli_json

BUILD = os.environ.get("OPSCOPE_BUILD_DIR", os.path.join(ROOT, "build"))
CHECK = ("import json, opscope; r = opscope.llm('llama-3.1-8b'); "
         "print(json.dumps([opscope.__file__, r['llm']['step_time_s']]))")


def imported_from(python, cwd, env=None):
    out = subprocess.run([python, "-c", CHECK], cwd=cwd, capture_output=True, text=True,
                         env=env, check=True).stdout
    return json.loads(out)


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.update(extra)
    return env


def test_cmake_install_component(tmp_path):
    stage = tmp_path / "stage"
    subprocess.run(["cmake", "--install", BUILD, "--component", "python"], check=True,
                   capture_output=True, env=clean_env(DESTDIR=str(stage)))
    packages = [p for p, _, files in os.walk(stage) if "__init__.pyi" in files]
    assert len(packages) == 1, packages
    site = os.path.dirname(packages[0])
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    path, step_time_s = imported_from(sys.executable, empty, clean_env(PYTHONPATH=site))
    assert path.startswith(str(stage))
    assert step_time_s == cli_json("llm", "llama-3.1-8b")["llm"]["step_time_s"]


def test_pip_installs_into_a_venv_offline(tmp_path):
    source = tmp_path / "source"
    for name in ("pyproject.toml", "setup.py", "docs/python.md", "src/python/opscope"):
        src, dst = os.path.join(ROOT, name), source / name
        if os.path.isdir(src):
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            os.makedirs(dst.parent, exist_ok=True)
            shutil.copyfile(src, dst)
    venv = tmp_path / "V"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--no-index",
                    "--quiet", str(source)],
                   check=True, capture_output=True, env=clean_env(OPSCOPE_CMAKE_BUILD_DIR=BUILD))
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    path, step_time_s = imported_from(str(venv / "bin" / "python"), empty, clean_env())
    assert path.startswith(str(venv))
    assert step_time_s == cli_json("llm", "llama-3.1-8b")["llm"]["step_time_s"]
