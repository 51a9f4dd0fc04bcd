#!/usr/bin/env python3
"""Writes data/engines/llama.cpp.json from public llama.cpp scoreboards.

No kernel tables exist for llama.cpp's CUDA and Metal kernels, so its profile comes from
published whole-model figures (data/engines/inputs/llama.cpp-scoreboard.csv, one cited row per
measurement), reduced to the kernel model's parameters with arithmetic anyone can redo:
  bandwidth_efficiency = weight bytes x decode tokens/s / DRAM bytes/s
      (batch-1 decode reads every weight once per token; per-kernel and per-step costs are
      folded in, so overhead_s and the step overheads are 0)
  compute_efficiency  = 2 x params x prompt tokens/s / peak FLOP/s (fp16 class; for a scoreboard
      row measured on a part with fewer GPU cores than the database entry, its share of the peak)
per device and weight type: q4_0 -> variant w4a16, q8_0 -> w8a16, f16 -> bf16 (fp16 falls back
to it). Attention and the other memory-bound kernels take the bf16 (else the widest) row's
figures, attention's compute efficiency at most bf16 / fp16 peak (no faster than the bf16
roofline). Devices of a family (applies_to) take their representative's figures, said in its
source; a weight type a device has no row for is predicted as the predictor's fallbacks say. A
row without a prompt rate (pp_tokens_per_s empty: the source publishes decode only) takes the
compute efficiency of the same weight type on the device its `compute_from` entry names. The
rows used here are fit inputs: docs/accuracy.md evaluates llama.cpp on other
models and sources only.

Usage: scripts/llamacpp-profile.py [REPO_ROOT]   (writes data/engines/llama.cpp.json)
"""
import csv
import json
import math
import os
import sys

VARIANT = {"q4_0": "w4a16", "q4_k": "w4a16", "q8_0": "w8a16", "f16": "bf16"}


def kernel(cls, variant, bw, compute):
    return {"class": cls, "variant": variant, "overhead_s": 0, "bandwidth_efficiency": bw,
            "compute_efficiency": compute, "overlap": 1, "tile_m": 1, "tile_n": 1,
            "wave_exponent": 0, "wave_latency_s": 0}


def round6(x):
    return float(f"{min(1.0, x):.4g}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    inputs = os.path.join(root, "data", "engines", "inputs")
    base = json.load(open(os.path.join(inputs, "llama.cpp.json")))
    devices = {d["name"]: d for d in json.load(open(os.path.join(root, "data", "devices.json")))["devices"]}
    rows = list(csv.DictReader(open(os.path.join(inputs, "llama.cpp-scoreboard.csv"))))
    fits = {}  # device -> variant -> (bw, compute, note)
    for r in rows:
        d = devices[r["device"]]
        bw = float(r["weight_bytes"]) * float(r["tg_tokens_per_s"]) / d["dram_bytes_per_s"]
        peak = d["peak_flops_per_s"]["fp16"]
        if r["gpu_cores_measured"]:
            peak *= float(r["gpu_cores_measured"]) / d["compute_units"]
        decode = (f"{r['quant']} {r['model']}: {r['tg_tokens_per_s']} tokens/s decode x "
                  f"{float(r['weight_bytes']) / 1e9:.3g} GB / {d['dram_bytes_per_s'] / 1e9:.4g} GB/s = "
                  f"{bw:.3f} of bandwidth")
        if r["pp_tokens_per_s"]:
            compute = round6(2 * float(r["params"]) * float(r["pp_tokens_per_s"]) / peak)
            note = (decode + f"; {r['pp_tokens_per_s']} tokens/s prompt x 2 x "
                    f"{float(r['params']) / 1e9:.3g} B params = {compute:.3f} of the fp16 peak"
                    + (f" of its {r['gpu_cores_measured']} cores" if r["gpu_cores_measured"] else ""))
        else:
            compute = None  # from the compute_from device, below
            note = decode + "; no prompt rate"
        fits.setdefault(r["device"], {})[VARIANT[r["quant"]]] = (
            round6(bw), compute, note + f" ({r['source']})")
    # A row without a prompt rate: the compute efficiency of its weight type on the device
    # compute_from names.
    for device, source_device in base.get("compute_from", {}).items():
        for v, (bw, compute, note) in fits[device].items():
            if compute is None:
                fits[device][v] = (bw, fits[source_device][v][1],
                                   note + f"; prompt compute efficiency {source_device}'s {v}, "
                                   f"{fits[source_device][v][1]:.3f}")

    entries = []
    for rep, members in base["families"].items():
        own = fits[rep]
        kernels = []
        notes = [own[v][2] for v in sorted(own)]
        for v in ("w4a16", "w8a16", "bf16"):
            if v in own:
                kernels.append(kernel("gemm", v, own[v][0], own[v][1]))
        # Attention and memory-bound kernels stream like the widest measured weights.
        stream = own.get("bf16") or own.get("w8a16") or own.get("w4a16")
        # Attention runs its 16-bit matmuls at no more than the bf16 peak: the compute
        # efficiency (a share of the fp16 peak) is capped at bf16 / fp16 (0.5 on GeForce parts,
        # 1 on Apple and GB10). Only a quantized row's prompt rate, which runs on llama.cpp's
        # integer MMQ kernels, exceeds it (rtx-3060).
        peaks = devices[rep]["peak_flops_per_s"]
        attn_cap = min(1.0, peaks["bf16"] / peaks["fp16"])
        attn_compute = min(stream[1], math.floor(attn_cap * 1e4) / 1e4)  # rounded down
        kernels.append(kernel("attention_decode", "bf16", stream[0], attn_compute))
        kernels.append(kernel("attention_prefill", "bf16", stream[0], attn_compute))
        kernels.append(kernel("memory", "default", stream[0], 1))
        source = ("public scoreboard figures, not a kernel fit (scripts/llamacpp-profile.py): "
                  + "; ".join(notes) + ". Attention and other memory-bound kernels take the "
                  + ("bf16" if "bf16" in own else "quantized") + " row's figures"
                  + (f" (attention's compute capped at the bf16 / fp16 peak ratio, {attn_compute:g})"
                     if attn_compute < stream[1] else "") + ". "
                  + base["family_notes"][rep])
        entries.append({"device": rep, "applies_to": members, "basis": "public",
                        "source": source.strip(), "kernels": kernels, "collectives": []})
        if not members:
            del entries[-1]["applies_to"]
    profile = {k: base[k] for k in ("schema_version", "engine", "description", "version",
                                     "defaults", "overheads", "fused_ops", "default_for")}
    profile["devices"] = entries
    with open(os.path.join(root, "data", "engines", "llama.cpp.json"), "w") as f:
        json.dump(profile, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
