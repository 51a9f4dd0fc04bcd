"""Nodes and sweep points as columns: a pandas.DataFrame with the JSON fields as columns in
their order and fixed dtypes, built on the arrays the core filled (a 65,536-point sweep's rows
are copied once); without pandas, a dict of numpy arrays with the same columns."""
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd

import opscope
from opscope import _opscope

NODE_DTYPES = {
    "name": "object", "op": "category", "source_op": "object", "costed": "bool",
    "bytes_read": "int64", "bytes_written": "int64", "bytes_weights": "int64",
    "bytes_state": "int64", "bytes": "int64", "bytes_link": "int64", "flops": "int64",
    "intensity": "float64", "mma_class": "category", "time_s": "float64", "bound": "category",
    # The device's default engine predicts every llm run (llm.predicted).
    "predicted_time_s": "float64",
}
POINT_DTYPES = {
    "model": "category", "device": "category", "recipe": "category", "phase": "category",
    "tp": "int64", "ep": "int64", "pp": "int64", "dp_attention": "int64", "devices": "int64",
    "batch": "int64", "context": "int64", "step_time_s": "float64", "tokens_per_s": "float64",
    "tpot_s": "float64", "ttft_s": "float64", "bound": "category", "max_batch": "int64",
    "fits": "bool",
}


def dtypes(df):
    return {c: str(t) for c, t in df.dtypes.items()}


def test_nodes_are_a_dataframe_of_the_json_node_fields():
    r = opscope.llm("llama-3.1-8b")
    nodes = r["nodes"]
    assert isinstance(nodes, pd.DataFrame)
    assert dtypes(nodes) == NODE_DTYPES  # the JSON node object's fields, in its order
    assert len(nodes) == r["totals"]["nodes"]
    assert nodes["bytes"].sum() == r["totals"]["bytes"]
    assert nodes["flops"].sum() == r["totals"]["flops"]
    # A node that moves no bytes has no intensity: NaN here, null in JSON.
    no_bytes = nodes[nodes["bytes"] == 0]
    assert no_bytes["intensity"].isna().all()


def test_points_are_a_dataframe_of_the_csv_columns():
    result = opscope.sweep("llama-3.1-8b", batch=[1, 2], context=[128], phase="prefill")
    points = result["points"]
    assert dtypes(points) == POINT_DTYPES
    assert points["tpot_s"].isna().all()       # prefill: no time per output token
    assert not points["ttft_s"].isna().any()
    assert list(points["bound"].cat.categories) == ["memory", "compute"]


def test_a_large_sweep_is_copied_once():
    core = _opscope.sweep(
        model="llama-2-7b-hf", batch="1..16", context="512..4607", device="h100-sxm",
        weights=[None], phase="decode", tp=None, ep=None, pp=None, activations=None,
        kv_dtype=None, state_dtype=None, gen_len=None, mem_util=0.9, dp_attention=None,
        gpus_per_node=None, micro_batches=None, model_type=None, engine=None, disagg=None,
        prefill_tp=None, decode_tp=None, lengths=None, speculative=None, acceptance=None,
        draft_model=None)
    assert core["points"]["rows"] == 65536
    df = opscope._table(core["points"])
    arrays = core["points"]["data"]
    for column in ("batch", "step_time_s", "tokens_per_s", "fits", "max_batch"):
        assert np.shares_memory(df[column].to_numpy(), arrays[column]), column
    assert np.shares_memory(df["device"].cat.codes.to_numpy(), arrays["device"][0])


WITHOUT_PANDAS = """
import json, sys
sys.modules["pandas"] = None  # as if it were not installed
import numpy as np, opscope
r = opscope.llm("llama-3.1-8b")
p = opscope.sweep("llama-3.1-8b", batch=[1, 2], context=[1024])["points"]
print(json.dumps({
    "nodes": {k: [type(v).__name__, str(v.dtype)] for k, v in r["nodes"].items()},
    "points": {k: [type(v).__name__, str(v.dtype)] for k, v in p.items()},
    "device": list(p["device"]), "batch": p["batch"].tolist()}))
"""


def test_without_pandas_tables_are_dicts_of_numpy_arrays():
    out = subprocess.run([sys.executable, "-c", WITHOUT_PANDAS], capture_output=True, text=True,
                         env=dict(os.environ), check=True).stdout
    got = json.loads(out)
    for table, expected in (("nodes", NODE_DTYPES), ("points", POINT_DTYPES)):
        assert list(got[table]) == list(expected)
        for column, want in expected.items():
            kind, dtype = got[table][column]
            assert kind == "ndarray"
            assert dtype == ("object" if want == "category" else want), (table, column)
    assert got["device"] == ["h100-sxm", "h100-sxm"]
    assert got["batch"] == [1, 2]


def test_help_is_useful():
    doc = opscope.llm.__doc__
    for option in ("device", "batch", "context", "phase", "weights", "kv_dtype", "gen_len", "tp"):
        assert option in doc
    assert "opscope.Error" in doc
    import inspect
    params = inspect.signature(opscope.sweep).parameters
    assert list(params)[:3] == ["model", "batch", "context"]
    stub = os.path.join(os.path.dirname(opscope.__file__), "__init__.pyi")
    assert os.path.exists(stub)
