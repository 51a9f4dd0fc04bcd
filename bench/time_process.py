#!/usr/bin/env python3
"""Times a whole opscope process writing a fresh output file each run.

Usage: bench/time_process.py [--runs N] -- BINARY ARGS...
Each run appends `-o <fresh file>` to ARGS and deletes the file afterwards (outside the
timing), so no run pays for replacing the previous run's output. Prints the median, min and
max wall time and the median CPU time (user + system, all threads) of the child.
"""
import argparse
import os
import resource
import statistics
import subprocess
import tempfile
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"]
    if not command:
        parser.error("give the command after --")
    walls, cpus = [], []
    with tempfile.TemporaryDirectory(prefix="opscope_time_") as tmp:
        for i in range(args.runs):
            out = os.path.join(tmp, f"out_{i}")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(command + ["-o", out], check=True)
            walls.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            os.remove(out)
    print(f"wall median {statistics.median(walls) * 1e3:.1f} ms "
          f"(min {min(walls) * 1e3:.1f}, max {max(walls) * 1e3:.1f}); "
          f"cpu median {statistics.median(cpus) * 1e3:.1f} ms over {args.runs} runs")


if __name__ == "__main__":
    main()
