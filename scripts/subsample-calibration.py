#!/usr/bin/env python3
"""Makes data/calibration/ from the kernel calibration set (../shared/calibration/, itself a
subsample of NVIDIA aiconfigurator's perf database; its README says how).

Keeps what `opscope calibrate` fits and no more, so the repository stays small:
  * kernel-level tables only (the *_module tables time whole attention modules: not fitted);
  * the rows a served step runs: all-reduce replayed from CUDA graphs (no *_eager backends),
    16-bit NCCL all-reduce, MoE with balanced routing and gated experts;
  * at most CAP calls per file. A call is a row's shape (every column but kernel_source,
    backend and latency); every implementation measured for a kept call is kept, since the fit
    takes the fastest. Calls are kept when frac(i * 0.6180339887) < CAP / calls, i their
    index in sorted order, which spreads the kept calls over every sweep axis;
  * the single-valued columns the source set removed (listed in its index.csv) are put back,
    so every file carries the columns `opscope calibrate` needs.
Deterministic: the same input gives the same files byte for byte.

Usage: scripts/subsample-calibration.py SOURCE_DIR OUT_DIR [CAP]
"""
import csv
import io
import os
import sys

CAP = 400
# Columns of the source's constant-column list that describe provenance, not the call.
PROVENANCE = {"framework", "version", "device", "op_name", "model", "architecture", "beam_width"}
NOT_CALL = {"kernel_source", "backend", "implementation", "latency"}


def keep_row(table, row):
    if table.endswith("_module"):
        return False
    if row.get("backend", "").endswith("eager") or row.get("kernel_source", "").endswith("eager"):
        return False
    if row.get("nccl_dtype") == "int8":
        return False
    if table == "moe":
        if row.get("distribution") != "balanced" or "nongated" in row.get("kernel_source", ""):
            return False
    return True


def sort_key(value):
    try:
        return (0, float(value), "")
    except ValueError:
        return (1, 0.0, value)


def subsample(path, constants, cap):
    table = os.path.splitext(os.path.basename(path))[0]
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        columns = list(reader.fieldnames)
        rows = [r for r in reader if keep_row(table, r)]
    # Put the source's removed single-valued columns back, before latency.
    extra = [(k, v) for k, v in constants if k not in PROVENANCE and k not in columns]
    for k, v in extra:
        for r in rows:
            r[k] = v
    columns = [c for c in columns if c != "latency"] + [k for k, _ in extra] + ["latency"]
    call_columns = [c for c in columns if c not in NOT_CALL]
    calls = {}
    for r in rows:
        calls.setdefault(tuple(r[c] for c in call_columns), []).append(r)
    keys = sorted(calls, key=lambda k: [sort_key(v) for v in k])
    p = min(1.0, cap / max(1, len(keys)))
    kept = [k for i, k in enumerate(keys) if (i * 0.6180339887) % 1.0 < p]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for k in kept:
        for r in calls[k]:
            writer.writerow([r[c] for c in columns])
    return out.getvalue(), len(rows), sum(len(calls[k]) for k in kept)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    source, dest = sys.argv[1], sys.argv[2]
    cap = int(sys.argv[3]) if len(sys.argv) > 3 else CAP
    with open(os.path.join(source, "index.csv"), newline="") as f:
        index = list(csv.DictReader(f))
    summary = [["file", "source_rows_kept_by_filter", "rows", "source_path", "source_blob"]]
    for entry in sorted(index, key=lambda e: e["file"]):
        name = entry["file"]
        if name.endswith("_module.csv"):
            continue
        constants = [tuple(kv.split("=", 1)) for kv in entry["constant_columns"].split(";") if kv]
        text, filtered, kept = subsample(os.path.join(source, name), constants, cap)
        if kept == 0:
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, name)), exist_ok=True)
        with open(os.path.join(dest, name), "w", newline="") as f:
            f.write(text)
        summary.append([name, filtered, kept, entry["source_path"], entry["source_blob"]])
    with open(os.path.join(dest, "files.txt"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(summary)


if __name__ == "__main__":
    main()
