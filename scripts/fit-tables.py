#!/usr/bin/env python3
"""docs/accuracy.md's kernel-fit tables, from the committed fit reports.

scripts/fit-profiles.sh writes data/engines/fit/{trtllm,vllm,sglang}.txt (`opscope calibrate`'s
report: 5-fold held-out |error| per device x kernel class x variant); this rewrites, from them,
the table under each engine's heading in "## Kernel fits (held-out)" and the summary line
(median over groups of the per-group median |error|, and of the roofline median), so the page
cannot drift from the fit. Usage: scripts/fit-tables.py (fit-profiles.sh runs it).
"""
import os
import re
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "accuracy.md")
ENGINES = ("trtllm", "vllm", "sglang")
# device, kernel, variant (may hold spaces: "one_shot, two_shot, ring"), samples, folds,
# median %, p90 %, roofline median %
ROW = re.compile(r"^(\S+)\s+(\S+)\s+(.+?)\s+(\d+)\s+(\d+)\s+([\d.]+)%\s+([\d.]+)%\s+([\d.]+)%\s*$")


def fit_rows(engine):
    with open(os.path.join(ROOT, "data", "engines", "fit", f"{engine}.txt"), encoding="utf-8") as f:
        return [m.groups() for m in map(ROW.match, f) if m]


def table(rows):
    lines = ["| device | kernel | variant | samples | median | p90 | roofline median |",
             "|---|---|---|---:|---:|---:|---:|"]
    lines += [f"| {d} | {k} | {v} | {n} | {med}% | {p90}% | {roof}% |"
              for d, k, v, n, _, med, p90, roof in rows]
    return "\n".join(lines) + "\n"


def main():
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    for engine in ENGINES:
        rows = fit_rows(engine)
        if not rows:
            raise SystemExit(f"data/engines/fit/{engine}.txt: no fitted groups")
        section = re.compile(r"(### " + re.escape(engine) + r"\n\n)\| device \| kernel.*?\n(?=\n|\Z)",
                             re.S)
        doc, n = section.subn(lambda m, rows=rows: m.group(1) + table(rows), doc)
        if n != 1:
            raise SystemExit(f"docs/accuracy.md: no '### {engine}' fit table to rewrite")
        median = statistics.median(float(r[5]) for r in rows)
        roofline = statistics.median(float(r[7]) for r in rows)
        summary = re.compile(r"^\| " + re.escape(engine) + r" \| \d+ \| [\d.]+ % \| [\d.]+ % \|$",
                             re.M)
        doc, n = summary.subn(f"| {engine} | {len(rows)} | {median:.1f} % | {roofline:.1f} % |", doc)
        if n != 1:
            raise SystemExit(f"docs/accuracy.md: no summary line for {engine}")
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
