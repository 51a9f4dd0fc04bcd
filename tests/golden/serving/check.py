#!/usr/bin/env python3
"""Runs every case of cases.txt through the opscope binary and compares its stdout with the
recorded file byte for byte (issue 11: refactors keep every output identical).
Usage: check.py OPSCOPE_BINARY [--record]   (run from anywhere; paths are the repo's)"""
import difflib
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", "..", ".."))


def cases():
    with open(os.path.join(here, "cases.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, ext, *args = line.split()
            yield f"{name}.{ext}", args


def main():
    binary = os.path.abspath(sys.argv[1])
    record = "--record" in sys.argv[2:]
    failed = []
    for file, args in cases():
        run = subprocess.run([binary, *args], cwd=root, capture_output=True, timeout=300)
        if run.returncode != 0:
            failed.append(file)
            print(f"{file}: exit {run.returncode}: {run.stderr.decode(errors='replace')}")
            continue
        path = os.path.join(here, file)
        if record:
            with open(path, "wb") as f:
                f.write(run.stdout)
            continue
        with open(path, "rb") as f:
            want = f.read()
        if run.stdout != want:
            failed.append(file)
            diff = difflib.unified_diff(want.decode(errors="replace").splitlines(),
                                        run.stdout.decode(errors="replace").splitlines(),
                                        "recorded", "now", lineterm="", n=1)
            print(f"{file}: differs from the recorded output (opscope {' '.join(args)})")
            for i, line in enumerate(diff):
                if i >= 40:
                    print("  ...")
                    break
                print("  " + line)
    if failed:
        print(f"{len(failed)} case(s) differ: {' '.join(failed)}")
        return 1
    print("all cases match" if not record else "recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
