"""opscope: how an ML model performs on an accelerator, before anything runs.

For every op it computes the bytes that must move, the FLOPs that must happen and the roofline
time max(bytes / bandwidth, FLOPs / peak); for an LLM, the serving figures (step time,
tokens/s, time to first token, memory fit). The functions here are the commands of the
``opscope`` command line, with the same options under the same names (``--kv-dtype`` is
``kv_dtype``), on the same C++ core:

* ``llm(model, ...)``      -- ``opscope llm MODEL``: one engine step of an LLM
* ``analyze(path, ...)``   -- ``opscope analyze MODEL``: any graph (graph JSON, ONNX, GGUF)
* ``sweep(model, ...)``    -- ``opscope sweep llm MODEL``: ``llm`` over a grid, one row a point
* ``devices()``            -- ``opscope devices``: the device database
* ``presets()``            -- ``opscope llm --list``: the built-in model presets

Results have the structure of the command's JSON report (``--format json``): dicts and lists
with the same field names (``r["llm"]["step_time_s"]``), numbers as ints and floats, JSON's
null as None. The long tables -- a report's ``nodes``, a sweep's ``points`` -- are columns: a
``pandas.DataFrame`` when pandas is installed, else a dict of numpy arrays (labels such as
``op`` and ``device`` as pandas categoricals, or numpy object arrays). Bad input raises
``opscope.Error`` (a ValueError) with the message the command line prints.
"""

import operator
import os

from . import _opscope
from ._opscope import Error

Error.__module__ = __name__  # shown as opscope.Error in tracebacks

__version__ = _opscope.__version__
__all__ = ["Error", "analyze", "devices", "llm", "plan", "presets", "sweep"]

_pandas = None  # the module once imported; False when it is not installed


def _pd():
    global _pandas
    if _pandas is None:
        try:
            import pandas
            _pandas = pandas
        except ImportError:
            _pandas = False
    return _pandas


def _table(columns):
    """The C++ core's columns (src/python/results.h) as a DataFrame, else a dict of arrays.

    The arrays are the ones the core filled from its rows; the DataFrame takes them without a
    copy (copy=False keeps each column its own block), so a sweep's rows are copied once.
    """
    import numpy as np
    data, labels = columns["data"], set(columns["labels"])
    pd = _pd()
    out = {}
    for name in columns["names"]:
        value = data[name]
        if name in labels:
            codes, categories = value
            if pd:
                value = pd.Categorical.from_codes(codes, categories)
            else:
                value = np.asarray(categories, dtype=object)[codes]
        elif isinstance(value, list):
            value = np.asarray(value, dtype=object)
        out[name] = value
    if not pd:
        return out
    return pd.DataFrame(out, copy=False)


def _report(result):
    result["nodes"] = _table(result["nodes"])
    return result


def _path(value):
    return os.fspath(value) if isinstance(value, os.PathLike) else value


def llm(model, device="h100-sxm", batch=1, context=4096, phase="decode", *, prompt=None,
        gen_len=None, weights=None, activations=None, kv_dtype=None, state_dtype=None,
        mem_util=0.9, tp=1, ep=1, pp=1, dp_attention=None, gpus_per_node=None,
        micro_batches=None, model_type=None, engine=None, disagg=None, prefill_tp=None,
        decode_tp=None, speculative=None, acceptance=None, lengths=None, draft_model=None):
    """One engine step of an LLM on a device: ``opscope llm MODEL --format json``.

    model:     a built-in preset ("llama-3.1-8b", see presets()), a Hugging Face config.json,
               a model folder (config.json, hf_quant_config.json, safetensors shards: weights
               at the formats the shards store), or a llama.cpp .gguf file (each weight at its
               tensor's ggml type).
    device:    a device id (see devices()) or a device .json file.
    batch:     sequences in the step (a deployment's: all its devices').
    context:   decode: cached tokens per sequence.
    phase:     "decode" (one token per sequence) or "prefill" (the whole prompt).
    prompt:    prefill: prompt tokens per sequence (default: context).
    gen_len:   also time the whole request: prefill, then this many decode steps.
    weights:   a weight format ("nvfp4", "fp8_e4m3") or llama.cpp file type ("q4_k_m");
               default: the model's own (its files, or the config's dtype and quantization).
    activations, kv_dtype, state_dtype: activation, KV cache and recurrent state formats.
    mem_util:  fraction of device memory weights + KV + state may use (max_batch).
    tp, ep, pp, dp_attention, gpus_per_node, micro_batches: the deployment (see README).
    model_type: read the config as this known model_type.
    engine:    the engine whose calibrated profile predicts the figures ("vllm", "sglang",
               "trtllm", "llama.cpp", "roofline", or a profile .json; default: the device's
               engine, see docs/engines.md). The prediction is the report's ["llm"]["predicted"].
    disagg, prefill_tp, decode_tp: disaggregated serving "P:D" (prefill and decode workers)
               and each worker's tensor-parallel degree.
    speculative, acceptance, draft_model: speculative decoding with acceptance rate R, "mtp:N"
               (the model's MTP modules) or "draft:N" with a draft model (draft_model: a preset,
               config.json or model folder, deployed at the target's tensor parallelism).
    lengths:   "varied" (default) or "fixed": every request exactly prompt and gen_len tokens,
               as a fixed-length benchmark sends them (its requests then move in groups).

    Returns the JSON report as a dict: "model", "device", "workload", "totals", "nodes" (a
    DataFrame, one row per node of the step in graph order), "by_op", "not_costed",
    "no_flop_model", "assumptions", "llm" (params_total, weight_bytes, step_time_s,
    tokens_per_s, ttft_s, max_batch, fits, ...), "parallel" on several devices, and
    "warnings" when there are some. Raises opscope.Error on bad input.

    >>> r = opscope.llm("llama-3.1-8b", batch=8)
    >>> r["llm"]["tokens_per_s"]
    """
    return _report(_opscope.llm(
        model=_path(model), device=_path(device), batch=batch, context=context, phase=phase,
        prompt=prompt, gen_len=gen_len, weights=weights, activations=activations,
        kv_dtype=kv_dtype, state_dtype=state_dtype, mem_util=mem_util, tp=tp, ep=ep, pp=pp,
        dp_attention=dp_attention, gpus_per_node=gpus_per_node, micro_batches=micro_batches,
        model_type=model_type, engine=_path(engine),
        disagg=disagg, prefill_tp=prefill_tp, decode_tp=decode_tp, speculative=speculative,
        acceptance=acceptance, lengths=lengths,
        draft_model=None if draft_model is None else _path(draft_model)))


def _input_text(name, value):
    if isinstance(value, (list, tuple)):
        value = ",".join(str(operator.index(v)) for v in value)
    return f"{name}={value}"


def analyze(path, device="h100-sxm", dims=None, inputs=None):
    """Every node of a model graph costed on a device: ``opscope analyze MODEL --format json``.

    path:    an opscope graph .json, an .onnx model or a .gguf file (its LLM step graph,
             whose symbols n, seqs and ctx are bound with dims).
    device:  a device id (see devices()) or a device .json file.
    dims:    {name: value} binds symbolic dims (--dim NAME=VALUE), e.g. {"n": 1, "ctx": 4096};
             ONNX's unnamed dims as "input:AXIS".
    inputs:  {name: value} gives graph inputs a value (--input NAME=VALUE): an int, a float
             or a list of ints; decides ONNX If branches and shapes.

    Returns the JSON report as a dict ("totals", "nodes" as a DataFrame, "by_op",
    "not_costed", "assumptions", "warnings", ...). A node that cannot be costed is listed in
    "not_costed" with its reason, never guessed. Raises opscope.Error on bad input.
    """
    dims = [(str(k), operator.index(v)) for k, v in (dims or {}).items()]
    inputs = [_input_text(k, v) for k, v in (inputs or {}).items()]
    return _report(_opscope.analyze(path=_path(path), device=_path(device), dims=dims,
                                    inputs=inputs))


def _list(value):
    """A LIST option as the command line takes it: "1,2,4", "1..64", "1024..32768:1024"."""
    if isinstance(value, str):
        return value
    if isinstance(value, range) and len(value) > 1 and value.step > 0:
        step = "" if value.step == 1 else f":{value.step}"
        return f"{value.start}..{value[-1]}{step}"
    if isinstance(value, bool):
        raise TypeError("expected an int or a list of ints, got a bool")
    try:
        return str(operator.index(value))
    except TypeError:
        return ",".join(str(operator.index(v)) for v in value)


def _names(value):
    if isinstance(value, (str, os.PathLike)):
        return _path(value)
    return ",".join(_path(v) for v in value)


def sweep(model, batch, context, device="h100-sxm", weights=None, phase="decode", *, tp=None,
          ep=None, pp=None, activations=None, kv_dtype=None, state_dtype=None, gen_len=None,
          osl=None, mem_util=0.9, dp_attention=None, gpus_per_node=None, micro_batches=None,
          model_type=None, engine=None, disagg=None, prefill_tp=None, decode_tp=None,
          lengths=None, speculative=None, acceptance=None, draft_model=None):
    """``llm`` over a grid, one row per point: ``opscope sweep llm MODEL --format json``.

    batch, context: ints, lists or ranges of ints, or the command line's LIST text
                    ("1..64", "1024..32768:1024"); context is the prompt length in prefill.
    device:         a device id or a list of them.
    weights:        a weight format / llama.cpp file type or a list of them (None in a list:
                    the model's own).
    tp, ep, pp, dp_attention: parallel degrees as ints, lists or LIST text, each an axis
                    (deployments the model or device cannot take are skipped and listed in
                    "skipped").
    gen_len, osl:   whole requests of this many output tokens (the same option, the command
                    line's --gen-len/--osl): an int or a LIST as batch takes it, one axis; adds
                    the column gen_len.
    engine:         also predict every point with this engine's profile (as llm()'s engine):
                    adds the columns predicted_step_time_s, predicted_tokens_per_s,
                    predicted_tpot_s and predicted_ttft_s (the CSV's; llm.predicted's figures).
    disagg:         with engine and gen_len: also predict each point disaggregated, as llm()'s
                    disagg does -- "P:D" prefill and decode workers, or a list of them ("agg":
                    aggregated), one axis; prefill_tp, decode_tp: the workers' tensor-parallel
                    degrees as lists (default: the row's tp). Adds the columns prefill_workers,
                    decode_workers, prefill_tp, decode_tp (NaN on an aggregated row) and
                    predicted_kv_transfer_s (the part of predicted_ttft_s spent moving the KV).
    lengths:        with engine and gen_len: "fixed" predicts every point as a fixed-length
                    benchmark (llm()'s lengths); not with a disaggregated split.
    speculative, acceptance, draft_model: with engine and gen_len: "mtp:N" and R, every
                    point predicted with the model's MTP modules drafting, or "draft:N" with
                    draft_model (a preset, config.json or folder; an EAGLE-3 head too) drafting,
                    as llm()'s; adds the columns predicted_max_batch and predicted_fits, the
                    memory fit with the drafter.
    The other options are llm()'s and apply to every point.

    Returns {"schema_version", "model", "phase", "points", "skipped", "assumptions"}, with
    "points" a DataFrame of the CSV's columns (model, device, recipe, phase, tp, ep, pp,
    dp_attention, devices, batch, context, step_time_s, tokens_per_s, tpot_s, ttft_s, bound,
    max_batch, fits) in grid order; each row equals what llm() gives for that point.

    >>> df = opscope.sweep("llama-3.1-8b", batch=range(1, 65), context=[2048, 8192])["points"]
    >>> df.pivot(index="batch", columns="context", values="tokens_per_s").plot()
    >>> opscope.sweep("llama-3.1-8b", batch=[1, 16], context=2048, device="h200", osl=[128, 512],
    ...               engine="vllm", disagg=["agg", "1:1"])["points"]
    """
    if osl is not None:
        if gen_len is not None:
            raise TypeError("sweep() takes gen_len or osl (the same option), not both")
        gen_len = osl
    if isinstance(disagg, str) or disagg is None:
        disagg_text = disagg
    else:
        disagg_text = ",".join(disagg)
    if weights is None:
        weights = [None]
    elif isinstance(weights, str):
        weights = [weights]
    else:
        weights = list(weights)
    result = _opscope.sweep(
        model=_path(model), batch=_list(batch), context=_list(context), device=_names(device),
        weights=weights, phase=phase, tp=None if tp is None else _list(tp),
        ep=None if ep is None else _list(ep), pp=None if pp is None else _list(pp),
        activations=activations, kv_dtype=kv_dtype, state_dtype=state_dtype,
        gen_len=None if gen_len is None else _list(gen_len), mem_util=mem_util,
        dp_attention=None if dp_attention is None else _list(dp_attention),
        gpus_per_node=gpus_per_node, micro_batches=micro_batches,
        model_type=model_type, engine=_path(engine), disagg=disagg_text,
        prefill_tp=None if prefill_tp is None else _list(prefill_tp),
        decode_tp=None if decode_tp is None else _list(decode_tp), lengths=lengths,
        speculative=speculative, acceptance=acceptance, draft_model=_path(draft_model))
    result["points"] = _table(result["points"])
    return result


def devices():
    """The built-in devices: the "devices" list of ``opscope devices --format json``.

    Each is a dict: name, description, memory_bytes, dram_bytes_per_s, peak_flops_per_s
    ({class: FLOP/s}, dense), l2_bytes, interconnect_bytes_per_s, ..., source.
    """
    return _opscope.devices()


def presets():
    """The built-in model presets: the "presets" list of ``opscope llm --list --format json``
    (name, model_type, layers, reconstructed)."""
    return _opscope.presets()


def plan(model, device="h100-sxm", gpus=8, isl=4096, osl=1024, *, ttft_ms=None, tpot_ms=None,
         rate=None, engine=None, weights=None, disagg=False, price=None, activations=None,
         kv_dtype=None, max_batch=512, mem_util=0.9, model_type=None, lengths=None,
         speculative=None, acceptance=None, draft_model=None):
    """The best deployment under latency targets: ``opscope plan MODEL --format json``.

    gpus:             devices to deploy on (N); isl, osl: prompt and output tokens per request.
    ttft_ms, tpot_ms: the targets (None: none); rate: requests/s to size for.
    engine:           the engine whose profile predicts the figures (None: the device's
                      default; "roofline": the roofline estimate).
    weights:          a weight format or a list of them to search (None: the config's own).
    disagg:           also search disaggregated prefill/decode worker pools.
    price:            USD per device-hour for $/Mtoken (None: the device's list price).
    lengths:          "varied" (None, the default) or "fixed": every request exactly isl and
                      osl tokens, as a fixed-length benchmark sends them (predicted,
                      aggregated points only; ``opscope plan --lengths fixed``).
    speculative, acceptance, draft_model: "mtp:N" and R: every point predicted with the
                      model's MTP modules drafting, or "draft:N" with draft_model (a preset,
                      config.json or folder; an EAGLE-3 head too) drafting at each split's tp,
                      the drafter's memory in each worker's fit (predicted only; ``opscope plan
                      --speculative mtp:N|draft:N --acceptance R [--draft-model M]``).

    Returns the CLI's JSON document as dicts: {"schema_version", "plan": {"model", "device",
    "gpus", "isl", "osl", "targets", "rate", "engine", "estimate", "front": [points], "best",
    "min_gpus_for_rate", "searched", "skipped", "assumptions", ...}}; each front point's
    "reproduce" is the ``opscope llm`` command giving its figures (docs/plan.md).

    >>> p = opscope.plan("llama-3.1-8b", device="h200", gpus=8, ttft_ms=2000, tpot_ms=20)["plan"]
    >>> p["front"][p["best"]]["tokens_per_s_per_device"]
    """
    if weights is not None and not isinstance(weights, str):
        weights = ",".join(weights)
    return _opscope.plan(
        model=_path(model), device=_path(device), gpus=operator.index(gpus),
        isl=operator.index(isl), osl=operator.index(osl), ttft_ms=ttft_ms, tpot_ms=tpot_ms,
        rate=rate, engine=None if engine is None else _path(engine), weights=weights,
        disagg=bool(disagg), price=price, activations=activations, kv_dtype=kv_dtype,
        max_batch=operator.index(max_batch), mem_util=mem_util, model_type=model_type,
        lengths=lengths, speculative=speculative, acceptance=acceptance,
        draft_model=_path(draft_model))
