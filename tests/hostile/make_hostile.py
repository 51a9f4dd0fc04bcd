#!/usr/bin/env python3
"""Writes the hostile-input corpus (tests/hostile/): one file per case and cases.txt.

Run from anywhere: python3 tests/hostile/make_hostile.py. ONNX cases are written as protobuf
text and encoded with protoc (Debian protobuf-compiler) against /usr/include/onnx/onnx.proto,
or raw bytes where the point is a malformed wire format. Each case is (file, expected exit
status, a fragment the error line must contain, extra arguments). hostile_test.cc runs every
case through the real binary with `-o OUT` and checks: the exit status, that stderr is exactly
one line "opscope: error: ..." containing the fragment (exit 2), that OUT was not written, and
that it finished within seconds (and, outside sanitizer builds, within a 1 GiB address space).
"""
import copy
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
cases = []  # (relative path, exit, fragment, extra args)


def write(rel, data, exit_code, fragment, args=""):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    with open(path, "wb") as f:
        f.write(data)
    cases.append((rel, exit_code, fragment, args))


# ---------------------------------------------------------------- graph JSON (opscope analyze)
BASE = {
    "name": "hostile",
    "dims": {"hidden": 64},
    "tensors": [
        {"name": "x", "shape": ["n", "hidden"], "format": "bf16", "role": "input"},
        {"name": "w", "shape": [128, "hidden"], "format": "bf16", "role": "weight"},
        {"name": "y", "shape": ["n", 128], "format": "bf16"},
        {"name": "z", "shape": ["n", 128], "format": "bf16", "role": "output"},
    ],
    "nodes": [
        {"name": "mm", "op": "Linear", "inputs": ["x", "w"], "outputs": ["y"]},
        {"name": "act", "op": "Relu", "inputs": ["y"], "outputs": ["z"], "attrs": {"alpha": 1}},
    ],
}
BASE_TEXT = json.dumps(BASE, indent=1)


def g(name, mutate, fragment, exit_code=2, args="--dim n=2"):
    doc = copy.deepcopy(BASE)
    mutate(doc)
    write("graph/" + name + ".json", json.dumps(doc, indent=1), exit_code, fragment, args)


def graw(name, text, fragment, exit_code=2, args="--dim n=2"):
    write("graph/" + name + ".json", text, exit_code, fragment, args)


def tset(i, key, value):
    def m(d):
        d["tensors"][i][key] = value
    return m


def nset(i, key, value):
    def m(d):
        d["nodes"][i][key] = value
    return m


def rset(key, value):
    def m(d):
        d[key] = value
    return m


# Truncations at structural boundaries.
for label, marker in [("after_open_brace", "{"), ("inside_tensors", '"tensors": ['),
                      ("inside_tensor", '"name": "w"'), ("inside_shape", '"shape": ['),
                      ("inside_nodes", '"nodes": ['), ("inside_string", '"Line')]:
    cut = BASE_TEXT.index(marker) + len(marker)
    graw("truncated_" + label, BASE_TEXT[:cut], "graph/truncated_" + label + ".json: not valid JSON")
graw("truncated_before_last_brace", BASE_TEXT.rstrip()[:-1],
     "graph/truncated_before_last_brace.json: not valid JSON")
graw("empty", "", "graph/empty.json: empty document")
graw("whitespace_only", "  \n\t ", "graph/whitespace_only.json: empty document")
graw("trailing_garbage", BASE_TEXT + " }", "graph/trailing_garbage.json: not valid JSON")
graw("two_documents", BASE_TEXT + BASE_TEXT, "graph/two_documents.json: not valid JSON")
graw("not_an_object", "[1, 2, 3]", "graph/not_an_object.json: not an opscope graph")
graw("bare_number", "42", "graph/bare_number.json: not an opscope graph")
graw("hf_config_given", json.dumps({"model_type": "llama", "hidden_size": 8}),
     "unknown field 'model_type' (this looks like a Hugging Face config: use 'opscope llm')")

# Wrong types for every field.
g("type_name", rset("name", 5), "field 'name': expected a string")
g("type_dims", rset("dims", [64]), "field 'dims': expected an object")
g("type_dims_value", rset("dims", {"hidden": "64"}), "dims: 'hidden': expected a non-negative integer")
g("type_dims_value_float", rset("dims", {"hidden": 64.5}), "dims: 'hidden': expected a non-negative integer")
g("type_tensors", rset("tensors", {"x": 1}), "field 'tensors': expected an array")
g("type_tensor_item", rset("tensors", [5]), "tensors[0]: expected an object")
g("type_tensor_name", tset(0, "name", 1), "tensors[0].name: expected a string")
g("type_tensor_shape", tset(0, "shape", "n"), "tensor 'x'.shape: expected an array")
g("type_shape_item_bool", tset(0, "shape", [True, 4]), "tensor 'x': shape[0]: expected an integer or a dim expression string")
g("type_shape_item_null", tset(0, "shape", [None]), "tensor 'x': shape[0]: expected an integer or a dim expression string")
g("type_shape_item_object", tset(0, "shape", [{}]), "tensor 'x': shape[0]: expected an integer or a dim expression string")
g("type_shape_item_fraction", tset(0, "shape", [1.5, 64]), "tensor 'x': shape[0]: expected a non-negative integer that fits 64 bits")
g("type_tensor_format", tset(0, "format", 16), "tensor 'x'.format: expected a string")
g("type_tensor_role", tset(0, "role", ["input"]), "tensor 'x'.role: expected a string")
g("type_nodes", rset("nodes", "mm"), "field 'nodes': expected an array")
g("type_node_item", rset("nodes", [None]), "nodes[0]: expected an object")
g("type_node_name", nset(0, "name", 3), "nodes[0].name: expected a string")
g("type_node_op", nset(0, "op", 4), "node 'mm'.op: expected a string")
g("type_node_inputs", nset(0, "inputs", "x"), "node 'mm'.inputs: expected an array of tensor names")
g("type_node_input_item", nset(0, "inputs", [0]), "node 'mm'.inputs: expected tensor names")
g("type_node_outputs", nset(0, "outputs", {"y": 1}), "node 'mm'.outputs: expected an array of tensor names")
g("type_node_attrs", nset(1, "attrs", [1]), "node 'act'.attrs: expected an object")
g("type_attr_object", nset(1, "attrs", {"alpha": {}}), "node 'act': attribute 'alpha': expected a number, a string or an array of integers")
g("type_attr_array_of_strings", nset(1, "attrs", {"alpha": ["a"]}), "node 'act': attribute 'alpha': expected integers")
g("type_attr_bool", nset(1, "attrs", {"alpha": True}), "node 'act': attribute 'alpha': expected a number, a string or an array of integers")
g("type_source_op", nset(0, "source_op", 1), "node 'mm'.source_op: expected a string")
g("missing_tensors", lambda d: d.pop("tensors"), "node 'mm': input 'x' is not a declared tensor")
graw("missing_tensors_no_nodes", '{"nodes": []}', "not an opscope graph: missing field 'tensors'")
g("missing_nodes", lambda d: d.pop("nodes"), "missing field 'nodes'")
g("missing_tensor_name", lambda d: d["tensors"][1].pop("name"), "tensors[1]: missing field 'name'")
g("missing_tensor_shape", lambda d: d["tensors"][1].pop("shape"), "tensor 'w': missing field 'shape'")
g("missing_node_op", lambda d: d["nodes"][0].pop("op"), "node 'mm': missing field 'op'")
g("missing_node_outputs", lambda d: d["nodes"][0].pop("outputs"), "node 'mm': missing field 'outputs'")
g("empty_tensor_name", tset(0, "name", ""), "tensors[0].name: empty tensor name")
g("empty_node_name", nset(0, "name", ""), "nodes[0].name: empty node name")
g("empty_op", nset(0, "op", ""), "node 'mm'.op: empty op name")
g("unknown_root_field", rset("edges", []), "unknown field 'edges'")
g("unknown_tensor_field", tset(0, "dtype", "bf16"), "tensor 'x': unknown field 'dtype'")
g("unknown_node_field", nset(0, "input", ["x"]), "node 'mm': unknown field 'input'")

# Negative and overflowing dims.
g("negative_dim", tset(1, "shape", [-1, "hidden"]), "tensor 'w': shape[0]: negative dim -1")
g("negative_dims_entry", rset("dims", {"hidden": -64}), "dims: 'hidden': negative dim -64")
g("negative_expr", tset(1, "shape", ["0 - 5", "hidden"]), "tensor 'w': shape[0]: '0 - 5' is negative (-5)")
g("dim_uint64", tset(1, "shape", [9223372036854775808, "hidden"]), "tensor 'w': shape[0]: expected a non-negative integer that fits 64 bits")
g("dim_double_huge", tset(1, "shape", [1e30, "hidden"]), "tensor 'w': shape[0]: expected a non-negative integer that fits 64 bits")
g("dims_entry_uint64", rset("dims", {"hidden": 18446744073709551615}), "dims: 'hidden': expected a non-negative integer")
g("element_count_overflow", tset(1, "shape", [4294967296, 4294967296, 4]), "tensor 'w': element count overflows 64 bits")
g("byte_size_overflow", tset(1, "shape", [4611686018427387904, 4]), "tensor 'w': element count overflows 64 bits")
g("byte_size_overflow_f64", lambda d: d["tensors"][1].update(shape=[1152921504606846976, 4], format="f64"), "tensor 'w': byte size overflows 64 bits")
g("expr_overflow", tset(1, "shape", ["9223372036854775807 + 1", "hidden"]), "tensor 'w': shape[0]: invalid dim expression '9223372036854775807 + 1': value overflows 64 bits")
g("expr_int_out_of_range", tset(1, "shape", ["99999999999999999999 * n", "hidden"]), "integer out of range")
g("attr_uint64", nset(1, "attrs", {"alpha": 18446744073709551615}), "node 'act': attribute 'alpha': integer does not fit 64 bits")
# Huge but representable shapes are costed analytically, never allocated.
g("huge_but_valid", lambda d: d["dims"].update(hidden=1 << 30), "", exit_code=0,
  args="--dim n=1048576")
g("huge_flops_overflow", lambda d: d["dims"].update(hidden=1 << 30), "node 'mm' (Linear): FLOP count overflows 64 bits",
  args="--dim n=1073741824")
g("bound_dim_overflows_bytes", lambda d: None, "tensor 'x': element count overflows 64 bits", exit_code=2,
  args="--dim n=9223372036854775807")

# Expressions.
g("expr_unparsable", tset(0, "shape", ["n +", "hidden"]), "tensor 'x': shape[0]: invalid dim expression 'n +': unexpected end")
g("expr_inexact", tset(1, "shape", ["7 / 2", "hidden"]), "invalid dim expression '7 / 2': 7 is not divisible by 2")
g("expr_unknown_function", tset(1, "shape", ["foo(1, 2)", "hidden"]), "unknown function 'foo'")
g("expr_too_deep", tset(1, "shape", ["(" * 100 + "1" + ")" * 100, "hidden"]), "nested deeper than 64 levels")
g("expr_too_long", tset(1, "shape", [" + ".join(["n"] * 2000), "hidden"]), "expression longer than 4096 characters")
g("expr_divide_by_zero", tset(1, "shape", ["4 / 0", "hidden"]), "4 divided by zero")
g("expr_empty", tset(1, "shape", ["", "hidden"]), "invalid dim expression '': empty")
g("dims_key_not_symbol", rset("dims", {"a b": 1}), "dims: 'a b' is not a symbol name")

# Block mismatch on concrete dims; unknown enum values.
g("block_mismatch", lambda d: d["tensors"][1].update(shape=[128, 17], format="nvfp4"),
  "tensor 'w': last dim 17 is not a multiple of nvfp4's 16-element block")
g("unknown_format", tset(0, "format", "f33"), "tensor 'x': unknown format 'f33'")
g("unknown_role", tset(0, "role", "bias"), "tensor 'x': unknown role 'bias'")
g("unknown_op_strict", nset(1, "op", "Frobnicate"), "", exit_code=1, args="--dim n=2 --strict")
g("unbound_symbol_strict", lambda d: None, "", exit_code=1, args="--strict")

# Cycles, order and duplicate names.
def cycle(d):
    d["nodes"] = [
        {"name": "a", "op": "Relu", "inputs": ["z"], "outputs": ["y"]},
        {"name": "b", "op": "Relu", "inputs": ["y"], "outputs": ["z"]},
    ]
g("cycle", cycle, "node 'a'")
g("self_loop", lambda d: d["nodes"][1].update(inputs=["z"]), "node 'act'")
def order(d):
    d["nodes"].reverse()
g("wrong_order", order, "node 'act'")
g("duplicate_tensor", lambda d: d["tensors"].append(dict(d["tensors"][0])), "duplicate tensor name 'x'")
g("duplicate_node", lambda d: d["nodes"].append({"name": "mm", "op": "Relu", "inputs": ["x"], "outputs": ["w"]}), "duplicate node name 'mm'")
g("produced_twice", lambda d: d["nodes"].append({"name": "again", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}), "'y'")
g("writes_weight", lambda d: d["nodes"].append({"name": "clobber", "op": "Relu", "inputs": ["y"], "outputs": ["w"]}), "'w'")
g("undefined_input", nset(0, "inputs", ["x", "nope"]), "node 'mm': input 'nope' is not a declared tensor")
graw("duplicate_root_field", '{"name": "a", "name": "b", "tensors": [], "nodes": []}', "duplicate field 'name'")
graw("duplicate_tensor_field", '{"tensors": [{"name": "x", "shape": [1], "shape": [2]}], "nodes": []}', "tensor 'x': duplicate field 'shape'")
graw("duplicate_dims_key", '{"dims": {"k": 1, "k": 2}, "tensors": [], "nodes": []}', "dims: duplicate dim 'k'")
graw("duplicate_attr", '{"tensors": [{"name": "x", "shape": [1], "role": "input"}, {"name": "y", "shape": [1]}], "nodes": [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"], "attrs": {"a": 1, "a": 2}}]}', "node 'r': attribute 'a' is given twice")
graw("tensors_after_nodes", '{"nodes": [], "tensors": []}', "'tensors' must come before 'nodes'")

# Invalid UTF-8, escapes and odd characters.
graw("utf8_invalid_byte", BASE_TEXT.replace('"mm"', '"m\udcffm"'), "graph/utf8_invalid_byte.json: not valid JSON")
graw("utf8_overlong", BASE_TEXT.replace('"mm"', '"m\udcc0\udcafm"'), "graph/utf8_overlong.json: not valid JSON")
graw("utf8_truncated_sequence", BASE_TEXT.replace('"mm"', '"m\udce2\udc82"'), "graph/utf8_truncated_sequence.json: not valid JSON")
graw("utf8_lone_surrogate_escape", BASE_TEXT.replace('"mm"', '"m\\ud800m"'), "graph/utf8_lone_surrogate_escape.json: not valid JSON")
graw("utf8_valid_names", BASE_TEXT.replace('"mm"', '"m\u00e9\u4e2d\U0001f600"'), "", exit_code=0)
graw("nul_escape_in_name", BASE_TEXT.replace('"mm"', '"m\\u0000m"'), "", exit_code=0)
graw("control_char_raw", BASE_TEXT.replace('"mm"', '"m\tm"'), "graph/control_char_raw.json: not valid JSON")
graw("bom_prefix", "\ufeff" + BASE_TEXT, "", exit_code=0)  # RFC 8259 §8.1: ignored
graw("bom_inside", BASE_TEXT.replace("[", "[\ufeff", 1), "graph/bom_inside.json: not valid JSON")

# NaN / Infinity where numbers are expected (not JSON: rejected by the parser).
graw("nan_dim", BASE_TEXT.replace('128,', 'NaN,', 1), "graph/nan_dim.json: not valid JSON")
graw("infinity_dim", BASE_TEXT.replace('"hidden": 64', '"hidden": Infinity'), "graph/infinity_dim.json: not valid JSON")
graw("nan_attr", BASE_TEXT.replace('"alpha": 1', '"alpha": NaN'), "graph/nan_attr.json: not valid JSON")
graw("overflowing_double_attr", BASE_TEXT.replace('"alpha": 1', '"alpha": 1e999'), "graph/overflowing_double_attr.json: not valid JSON")

# Deep nesting (the parser's depth limit), in every position.
graw("deep_root", "[" * 5000 + "]" * 5000, "graph/deep_root.json: not an opscope graph (expected a JSON object with 'tensors' and 'nodes'), got an array")
graw("deep_attr", BASE_TEXT.replace('"alpha": 1', '"alpha": ' + "[" * 3000 + "]" * 3000), "graph/deep_attr.json: node 'act': attribute 'alpha': expected integers, got an array")
graw("deep_shape_ok_depth", BASE_TEXT.replace('"alpha": 1', '"alpha": [[[[1]]]]'), "node 'act': attribute 'alpha': expected integers")
g("rank_too_high", tset(1, "shape", [1] * 65 + ["hidden"]), "tensor 'w': rank above 64")
g("long_name", lambda d: (d["tensors"][0].update(name="x" * 100000, format="f33"), d["nodes"][0].update(inputs=["x" * 100000, "w"])),
  "unknown format 'f33'")
g("long_duplicate_name", lambda d: d["tensors"].append(dict(d["tensors"][0], name="w" * 100000)) or d["tensors"].append(dict(d["tensors"][0], name="w" * 100000)),
  "duplicate tensor name '" + "w" * 80 + "...'")

# ---------------------------------------------------------------- device files (--device FILE)
DEV = {
    "name": "hostile-gpu",
    "description": "a device file for the hostile corpus",
    "memory_bytes": 80e9,
    "dram_bytes_per_s": 3.35e12,
    "peak_flops_per_s": {"fp32": 67e12, "bf16": 989e12, "fp8": 1979e12},
    "source": "tests",
}
DEV_TEXT = json.dumps(DEV, indent=1)
GRAPH = "tests/golden/matmul.json"


def d(name, mutate, fragment, exit_code=2):
    doc = copy.deepcopy(DEV)
    mutate(doc)
    write("device/" + name + ".json", json.dumps(doc, indent=1), exit_code, fragment,
          "analyze @GRAPH --dim n=4 --device @FILE")


def draw(name, text, fragment, exit_code=2):
    write("device/" + name + ".json", text, exit_code, fragment, "analyze @GRAPH --dim n=4 --device @FILE")


def dset(key, value):
    def m(doc):
        doc[key] = value
    return m


def pset(key, value):
    def m(doc):
        doc["peak_flops_per_s"][key] = value
    return m


d("valid", lambda doc: None, "", exit_code=0)
draw("truncated_mid_object", DEV_TEXT[:DEV_TEXT.index('"peak_flops_per_s"') + 5], "device/truncated_mid_object.json")
draw("truncated_peaks", DEV_TEXT[:DEV_TEXT.index('"fp32"')], "device/truncated_peaks.json")
draw("empty", "", "device/empty.json")
draw("not_an_object", "[]", "device/not_an_object.json")
d("type_name", dset("name", 7), "'name'")
d("type_bandwidth", dset("dram_bytes_per_s", "fast"), "'dram_bytes_per_s'")
d("type_memory", dset("memory_bytes", [80]), "'memory_bytes'")
d("type_peaks", dset("peak_flops_per_s", [1e12]), "'peak_flops_per_s'")
d("type_peak_value", pset("bf16", "lots"), "bf16")
d("type_description", dset("description", None), "'description'")
d("type_source", dset("source", 1), "'source'")
d("negative_bandwidth", dset("dram_bytes_per_s", -1e12), "'dram_bytes_per_s'")
d("zero_bandwidth", dset("dram_bytes_per_s", 0), "'dram_bytes_per_s'")
d("negative_peak", pset("fp8", -5), "fp8")
d("zero_memory", dset("memory_bytes", 0), "'memory_bytes'")
# Finite and positive, so accepted; the times overflow to infinity and print as null.
d("tiny_bandwidth", dset("dram_bytes_per_s", 5e-324),
  "field 'dram_bytes_per_s': expected 1 to 1e+21 bytes/s, got 5e-324")
draw("nan_bandwidth", DEV_TEXT.replace("3350000000000.0", "NaN"), "device/nan_bandwidth.json")
draw("infinity_peak", DEV_TEXT.replace("67000000000000.0", "Infinity"), "device/infinity_peak.json")
draw("overflowing_double", DEV_TEXT.replace("3350000000000.0", "1e400"), "device/overflowing_double.json")
d("missing_bandwidth", lambda doc: doc.pop("dram_bytes_per_s"), "'dram_bytes_per_s'")
d("missing_name", lambda doc: doc.pop("name"), "'name'")
d("unknown_field", dset("hbm_gb", 80), "'hbm_gb'")
d("unknown_class", pset("fp7", 1e12), "fp7")
d("no_peaks", dset("peak_flops_per_s", {}), "node 'mm' (MatMul) runs at fp32, which device 'hostile-gpu' has no peak for")
d("empty_name", dset("name", ""), "'name'")
draw("two_devices", json.dumps({"devices": [DEV, DEV]}), "device/two_devices.json")
draw("zero_devices", json.dumps({"devices": []}), "device/zero_devices.json")
draw("devices_not_array", json.dumps({"devices": DEV}), "device/devices_not_array.json")
draw("utf8_invalid_name", DEV_TEXT.replace("hostile-gpu", "hostile-\udcffgpu"), "device/utf8_invalid_name.json")
draw("utf8_invalid_source", DEV_TEXT.replace('"tests"', '"te\udcc3sts"'), "device/utf8_invalid_source.json")
draw("deep_nesting", DEV_TEXT.replace('"tests"', "[" * 4000 + "]" * 4000), "device/deep_nesting.json")
draw("duplicate_field", DEV_TEXT.replace('"name": "hostile-gpu",', '"name": "a", "name": "b",'), "'name'")
d("huge_string", dset("description", "d" * 200000), "", exit_code=0)

# ---------------------------------------------------------------- HF configs (opscope llm)
with open(os.path.join(HERE, "../../data/presets/llama-3.1-8b.json")) as f:
    LLAMA = json.load(f)
LLAMA_TEXT = json.dumps(LLAMA, indent=1)


def h(name, mutate, fragment, exit_code=2, args=""):
    doc = copy.deepcopy(LLAMA)
    mutate(doc)
    write("hf/" + name + ".json", json.dumps(doc, indent=1), exit_code, fragment, args)


def hraw(name, text, fragment, exit_code=2, args=""):
    write("hf/" + name + ".json", text, exit_code, fragment, args)


def hset(key, value):
    def m(doc):
        doc[key] = value
    return m


h("valid", lambda doc: None, "", exit_code=0)
hraw("truncated_mid_object", LLAMA_TEXT[:LLAMA_TEXT.index('"hidden_size"')], "hf/truncated_mid_object.json")
hraw("truncated_mid_value", LLAMA_TEXT[:LLAMA_TEXT.index('"hidden_size"') + 18], "hf/truncated_mid_value.json")
hraw("empty", "", "hf/empty.json")
hraw("not_an_object", '["llama"]', "hf/not_an_object.json")
h("unknown_model_type", hset("model_type", "llama9"), "llama9")
h("type_model_type", hset("model_type", 5), "'model_type'")
h("missing_model_type", lambda doc: doc.pop("model_type"), "model_type")
h("missing_hidden_size", lambda doc: doc.pop("hidden_size"), "'hidden_size'")
h("type_hidden_size_string", hset("hidden_size", "4096"), "'hidden_size'")
h("type_hidden_size_float", hset("hidden_size", 4096.5), "'hidden_size'")
h("type_layers_bool", hset("num_hidden_layers", True), "'num_hidden_layers'")
h("type_tie_embeddings", hset("tie_word_embeddings", "yes"), "'tie_word_embeddings'")
h("type_torch_dtype", hset("torch_dtype", 16), "'torch_dtype'")
h("type_rope_scaling", hset("rope_scaling", "llama3"), "", exit_code=0)  # not a field opscope reads
h("negative_hidden_size", hset("hidden_size", -4096), "'hidden_size': must be positive, got -4096")
h("zero_layers", hset("num_hidden_layers", 0), "'num_hidden_layers': must be positive, got 0")
h("absurd_layers", hset("num_hidden_layers", 10**12), "field 'num_hidden_layers': 1000000000000 is larger than 16777216")
h("absurd_layers_int64_max", hset("num_hidden_layers", 2**63 - 1), "field 'num_hidden_layers': 9223372036854775807 is larger than 16777216")
h("layers_above_limit", hset("num_hidden_layers", 2000), "field 'num_hidden_layers': must be at most 1024, got 2000")
h("layers_uint64", hset("num_hidden_layers", 2**64 - 1), "'num_hidden_layers'")
h("huge_hidden_size", hset("hidden_size", 2**62), "field 'hidden_size': 4611686018427387904 is larger than 16777216")
h("huge_vocab", hset("vocab_size", 2**62), "field 'vocab_size': 4611686018427387904 is larger than 16777216")
h("huge_intermediate", hset("intermediate_size", 2**62), "field 'intermediate_size': 4611686018427387904 is larger than 16777216")
h("largest_accepted_sizes", lambda d: d.update(hidden_size=2**24, intermediate_size=2**24, vocab_size=2**24, num_attention_heads=2**12, num_key_value_heads=2**12), "", exit_code=0)
h("heads_not_dividing", hset("num_key_value_heads", 5), "'num_key_value_heads'")
h("unknown_dtype", hset("torch_dtype", "float128"), "float128")
h("unknown_quant_method", hset("quantization_config", {"quant_method": "magic"}), "magic")
h("type_quantization_config", hset("quantization_config", 4), "'quantization_config'")
with open(os.path.join(HERE, "../../data/presets/qwen3-next-80b-a3b-thinking.json")) as f:
    QWEN_NEXT = json.load(f)


def q(name, mutate, fragment, exit_code=2):
    doc = copy.deepcopy(QWEN_NEXT)
    mutate(doc)
    write("hf/" + name + ".json", json.dumps(doc, indent=1), exit_code, fragment, "")


q("layer_types_wrong_length", hset("layer_types", ["full_attention"]), "field 'layer_types': has 1 entries, num_hidden_layers is 48")
q("layer_types_unknown", hset("layer_types", ["full_attention"] * 47 + ["warp_attention"]), "warp_attention")
q("layer_types_not_strings", hset("layer_types", [1] * 48), "'layer_types'")
q("absurd_experts", hset("num_experts", 2**62), "field 'num_experts': 4611686018427387904 is larger than 16777216")
q("experts_top_k_above_experts", hset("num_experts_per_tok", 1000), "")
hraw("nan_hidden_size", LLAMA_TEXT.replace('"hidden_size": 4096', '"hidden_size": NaN'), "'hidden_size'")
hraw("infinity_layers", LLAMA_TEXT.replace('"num_hidden_layers": 32', '"num_hidden_layers": Infinity'), "'num_hidden_layers'")
hraw("minus_infinity_heads", LLAMA_TEXT.replace('"num_attention_heads": 32', '"num_attention_heads": -Infinity'), "'num_attention_heads'")
hraw("nan_in_unused_field", LLAMA_TEXT.replace('"rms_norm_eps": 1e-05', '"rms_norm_eps": NaN'), "", exit_code=0)
hraw("nan_inside_string_kept", LLAMA_TEXT.replace('"silu"', '"NaN Infinity"'), "", exit_code=0)
hraw("overflowing_double", LLAMA_TEXT.replace('"rope_theta": 500000.0', '"rope_theta": 1e999'), "hf/overflowing_double.json")
hraw("utf8_invalid_model_type", LLAMA_TEXT.replace('"llama"', '"lla\udcffma"'), "hf/utf8_invalid_model_type.json")
hraw("utf8_invalid_unused", LLAMA_TEXT.replace('"silu"', '"si\udcfflu"'), "hf/utf8_invalid_unused.json")
hraw("deep_nesting", LLAMA_TEXT.replace('"silu"', "[" * 5000 + "]" * 5000), "hf/deep_nesting.json")
hraw("duplicate_key_last_wins", LLAMA_TEXT.replace('"hidden_size": 4096', '"hidden_size": 7, "hidden_size": 4096'), "", exit_code=0)
h("text_config_wrong_type", hset("text_config", [1]), "field 'text_config': expected an object, got an array")
h("huge_string", hset("architectures", ["L" * 300000]), "", exit_code=0)

# ---------------------------------------------------------------- CLI (argument files)
def cli(name, argv, exit_code, fragment):
    write("cli/" + name + ".args", "\n".join(argv) + "\n", exit_code, fragment, "@ARGS")


cli("unknown_command", ["frobnicate"], 2, "unknown command 'frobnicate'")
cli("no_command", [], 2, "")
cli("missing_model", ["analyze"], 2, "MODEL is required")
cli("missing_file", ["analyze", "does-not-exist.json"], 2, "does-not-exist.json: cannot open")
cli("directory_model", ["analyze", "tests"], 2, "tests: is a directory")
cli("dev_null_model", ["analyze", "/dev/null"], 2, "/dev/null: is not a regular file")
cli("bad_format", ["analyze", GRAPH, "--format", "xml"], 2, "--format")
cli("bad_top", ["analyze", GRAPH, "--top", "-1"], 2, "--top")
cli("top_overflow", ["analyze", GRAPH, "--top", "99999999999999999999"], 2, "--top")
cli("dim_no_equals", ["analyze", GRAPH, "--dim", "n"], 2, "option '--dim': expected NAME=VALUE, got 'n'")
cli("dim_negative", ["analyze", GRAPH, "--dim", "n=-1"], 2, "'-1' is not a non-negative integer")
cli("dim_overflow", ["analyze", GRAPH, "--dim", "n=99999999999999999999"], 2, "is not a non-negative integer that fits 64 bits")
cli("dim_twice", ["analyze", GRAPH, "--dim", "n=1", "--dim", "n=2"], 2, "'n' given twice")
cli("dim_unknown_symbol", ["analyze", GRAPH, "--dim", "nope=1"], 2, "nope")
cli("unknown_device", ["analyze", GRAPH, "--device", "h900"], 2, "h900")
cli("unknown_option", ["analyze", GRAPH, "--frobnicate"], 2, "--frobnicate")
cli("output_into_missing_dir", ["analyze", GRAPH, "-o", "no/such/dir/report.txt"], 2, "no/such/dir/report.txt: cannot write")
cli("llm_unknown_model", ["llm", "llama-9000"], 2, "model 'llama-9000'")
cli("llm_bad_batch", ["llm", "llama-3.1-8b", "--batch", "0"], 2, "option '--batch': must be positive, got 0")
cli("llm_batch_overflow", ["llm", "llama-3.1-8b", "--batch", "9223372036854775808"], 2,
    "--batch: '9223372036854775808' is outside the 64-bit integer range")
cli("llm_huge_batch_context", ["llm", "llama-3.1-8b", "--batch", "9223372036854775807", "--context", "9223372036854775807"], 2, "overflows")
cli("llm_bad_mem_util_nan", ["llm", "llama-3.1-8b", "--mem-util", "nan"], 2, "--mem-util")
cli("llm_bad_mem_util_inf", ["llm", "llama-3.1-8b", "--mem-util", "inf"], 2, "--mem-util")
cli("llm_bad_weights", ["llm", "llama-3.1-8b", "--weights", "q4_x"], 2, "option '--weights': unknown format 'q4_x'")
cli("llm_bad_phase", ["llm", "llama-3.1-8b", "--phase", "train"], 2, "--phase")
cli("llm_gguf", ["llm", "model.gguf"], 2, "model.gguf")
cli("devices_bad_format", ["devices", "--format", "yaml"], 2, "--format")
cli("invalid_utf8_argument", ["analyze", GRAPH, "--device", "h1\udcff00"], 2, "--device")

# ---------------------------------------------------------------- ONNX (opscope analyze x.onnx)
def protoc_encode(text):
    r = subprocess.run(["protoc", "--encode=onnx.ModelProto", "-I/usr/include", "onnx/onnx.proto"],
                       input=text.encode("utf-8", "surrogateescape"), capture_output=True)
    if r.returncode != 0:
        sys.exit("protoc: " + r.stderr.decode() + "\n" + text)
    return r.stdout


def vi(name, dims, elem=1):
    ds = "".join("dim { %s }" % (("dim_value: %d" % x) if isinstance(x, int) else ("dim_param: \"%s\"" % x)) for x in dims)
    return 'name: "%s" type { tensor_type { elem_type: %d shape { %s } } }' % (name, elem, ds)


def model(nodes, inputs, outputs, inits="", opset=17, extra_graph="", extra_opsets=""):
    return ('ir_version: 8 opset_import { version: %d } %s graph { name: "g" %s %s %s %s %s }'
            % (opset, extra_opsets, nodes, inits, " ".join("input { %s }" % i for i in inputs),
               " ".join("output { %s }" % o for o in outputs), extra_graph))


def o(name, text, fragment, exit_code=2, args=""):
    write("onnx/" + name + ".onnx", protoc_encode(text), exit_code, fragment, args)


def oraw(name, data, fragment, exit_code=2, args=""):
    write("onnx/" + name + ".onnx", data, exit_code, fragment, args)


MATMUL = 'node { name: "mm" op_type: "MatMul" input: "a" input: "b" output: "c" }'
GOOD = model(MATMUL, [vi("a", [2, 3]), vi("b", [3, 4])], [vi("c", [2, 4])])
o("valid", GOOD, "", exit_code=0)
good_bytes = protoc_encode(GOOD)
for cut in (1, 2, 4, len(good_bytes) // 2, len(good_bytes) - 1):
    oraw("truncated_at_%d" % cut, good_bytes[:cut], "onnx/truncated_at_%d.onnx: not an ONNX model" % cut)
oraw("empty", b"", "onnx/empty.onnx: empty file, not an ONNX model")
oraw("text_file", b"this is not a model\n", "onnx/text_file.onnx: not an ONNX model")
oraw("json_file", json.dumps(BASE).encode(), "onnx/json_file.onnx: not an ONNX model")
oraw("varint_too_long", b"\x08" + b"\xff" * 11, "onnx/varint_too_long.onnx: not an ONNX model")
oraw("length_past_end", b"\x08\x08\x3a\xff\xff\xff\xff\xff\xff\xff\xff\x7f", "onnx/length_past_end.onnx: not an ONNX model")
oraw("group_wire_type", b"\x08\x08\x3b", "onnx/group_wire_type.onnx: not an ONNX model")
oraw("field_zero", b"\x00\x01", "onnx/field_zero.onnx: not an ONNX model")
o("no_graph", "ir_version: 8 opset_import { version: 17 }", "onnx/no_graph.onnx: not an ONNX model (no graph)")
o("negative_dim", model(MATMUL, [vi("a", [2, -3]), vi("b", [3, 4])], [vi("c", [2, 4])]), "'a'")
o("huge_dims", model(MATMUL, [vi("a", [2**40, 2**40]), vi("b", [2**40, 4])], [vi("c", [2**40, 4])]), "'a'")
o("dim_int64_max", model(MATMUL, [vi("a", [2**63 - 1, 3]), vi("b", [3, 4])], [vi("c", [2, 4])]), "'a'")
o("absurd_initializer", model(MATMUL, [vi("a", [2, 3])], [vi("c", [2, 4])],
  inits='initializer { name: "b" dims: 1099511627776 dims: 1099511627776 data_type: 1 raw_data: "abcd" }'), "'b'")
o("initializer_claims_many_floats", model(
    'node { name: "r" op_type: "Reshape" input: "a" input: "s" output: "c" }',
    [vi("a", [2, 3])], [vi("c", [6])],
    inits='initializer { name: "s" dims: 1000000000000 data_type: 7 int64_data: 6 }'), "", exit_code=0)
o("range_huge", model(
    'node { name: "k1" op_type: "Constant" output: "start" attribute { name: "value" type: TENSOR t { data_type: 7 int64_data: 0 } } } '
    'node { name: "k2" op_type: "Constant" output: "limit" attribute { name: "value" type: TENSOR t { data_type: 7 int64_data: 9223372036854775807 } } } '
    'node { name: "k3" op_type: "Constant" output: "delta" attribute { name: "value" type: TENSOR t { data_type: 7 int64_data: 1 } } } '
    'node { name: "rg" op_type: "Range" input: "start" input: "limit" input: "delta" output: "c" }',
    [], [vi("c", ["n"], elem=7)]), "tensor 'c': byte size overflows 64 bits")
o("constant_of_shape_huge", model(
    'node { name: "k" op_type: "Constant" output: "shape" attribute { name: "value" type: TENSOR t { dims: 3 data_type: 7 int64_data: 4294967296 int64_data: 4294967296 int64_data: 4294967296 } } } '
    'node { name: "cos" op_type: "ConstantOfShape" input: "shape" output: "c" }',
    [], [vi("c", ["a", "b", "d"])]), "tensor 'c': element count overflows 64 bits")
o("expand_huge", model(
    'node { name: "k" op_type: "Constant" output: "shape" attribute { name: "value" type: TENSOR t { dims: 2 data_type: 7 int64_data: 1099511627776 int64_data: 1099511627776 } } } '
    'node { name: "ex" op_type: "Expand" input: "a" input: "shape" output: "c" }',
    [vi("a", [1, 1])], [vi("c", ["p", "q"])]), "tensor 'c': element count overflows 64 bits")
o("undefined_input", model(MATMUL, [vi("a", [2, 3])], [vi("c", [2, 4])]), "'b'")
o("cycle", model('node { name: "n1" op_type: "Relu" input: "y" output: "x" } node { name: "n2" op_type: "Relu" input: "x" output: "y" }',
  [], [vi("y", [2])]), "'n1'")
o("self_loop", model('node { name: "n1" op_type: "Relu" input: "x" output: "x" }', [], [vi("x", [2])]), "'n1'")
o("duplicate_output", model(
    'node { name: "n1" op_type: "Relu" input: "a" output: "y" } node { name: "n2" op_type: "Relu" input: "a" output: "y" }',
    [vi("a", [2])], [vi("y", [2])]), "'y'")
o("duplicate_input_names", model(MATMUL, [vi("a", [2, 3]), vi("a", [2, 3]), vi("b", [3, 4])], [vi("c", [2, 4])]), "'a'")
o("unknown_opset", model(MATMUL, [vi("a", [2, 3]), vi("b", [3, 4])], [vi("c", [2, 4])], opset=99), "opset")
o("unknown_elem_type_strict", model(MATMUL, [vi("a", [2, 3], elem=99), vi("b", [3, 4])], [vi("c", [2, 4])]), "", exit_code=1, args="--strict")
o("unknown_op", model('node { name: "w" op_type: "Warp" domain: "com.example" input: "a" output: "c" }',
  [vi("a", [2, 3])], [vi("c", [2, 3])], extra_opsets='opset_import { domain: "com.example" version: 1 }'), "", exit_code=1, args="--strict")
o("unknown_domain", model('node { name: "w" op_type: "Warp" domain: "com.example" input: "a" output: "c" }',
  [vi("a", [2, 3])], [vi("c", [2, 3])]), "node 'w' (com.example.Warp): its domain 'com.example' is not imported by the model")
o("utf8_invalid_node_name", model(MATMUL.replace('"mm"', '"m\\377m"'), [vi("a", [2, 3]), vi("b", [3, 4])], [vi("c", [2, 4])]),
  "is not valid UTF-8")
o("utf8_invalid_tensor_name", model(MATMUL.replace('output: "c"', 'output: "c\\300"'),
  [vi("a", [2, 3]), vi("b", [3, 4])], [vi("c\\300", [2, 4])]), "is not valid UTF-8")
o("utf8_invalid_op_type", model(MATMUL.replace('"MatMul"', '"Mat\\377Mul"'), [vi("a", [2, 3]), vi("b", [3, 4])], [vi("c", [2, 4])]),
  "is not valid UTF-8")
o("utf8_invalid_dim_param", model(MATMUL, [vi("a", ["b\\377", 3]), vi("b", [3, 4])], [vi("c", [2, 4])]),
  "is not valid UTF-8")
o("empty_node_name_ok", model(MATMUL.replace('name: "mm" ', ''), [vi("a", [2, 3]), vi("b", [3, 4])], [vi("c", [2, 4])]), "", exit_code=0)
CONV = ('node { name: "conv" op_type: "Conv" input: "x" input: "w" output: "y" '
        'attribute { name: "strides" type: INTS ints: %s ints: 1 } }')
o("conv_stride_zero", model(CONV % "0", [vi("x", [1, 3, 8, 8]), vi("w", [4, 3, 3, 3])], [vi("y", [1, 4, "h", "v"])]),
  "node 'conv' (Conv): attribute 'strides' holds 0 (must be positive)")
o("conv_stride_negative", model(CONV % "-2", [vi("x", [1, 3, 8, 8]), vi("w", [4, 3, 3, 3])], [vi("y", [1, 4, "h", "v"])]),
  "node 'conv' (Conv): attribute 'strides' holds -2 (must be positive)")
o("pool_kernel_zero_in_subgraph", model(
    'node { name: "if" op_type: "If" input: "c" output: "r" attribute { name: "then_branch" type: GRAPH g { name: "t" '
    'node { name: "pool" op_type: "MaxPool" input: "x" output: "p" attribute { name: "kernel_shape" type: INTS ints: 0 ints: 0 } } '
    'output { %s } } } attribute { name: "else_branch" type: GRAPH g { name: "e" node { op_type: "Identity" input: "x" output: "q" } output { %s } } } }'
    % (vi("p", [1, 3, 8, 8]), vi("q", [1, 3, 8, 8])),
    [vi("c", [], elem=9), vi("x", [1, 3, 8, 8])], [vi("r", [1, 3, 8, 8])]),
  "node 'pool' (MaxPool): attribute 'kernel_shape' holds 0 (must be positive)")
o("depth_to_space_blocksize_zero", model(
    'node { name: "d2s" op_type: "DepthToSpace" input: "x" output: "y" attribute { name: "blocksize" type: INT i: 0 } }',
    [vi("x", [1, 4, 2, 2])], [vi("y", [1, 1, 4, 4])]),
  "node 'd2s' (DepthToSpace): attribute 'blocksize' holds 0 (must be positive)")
def const_i64(name, out, values):
    return ('node { name: "%s" op_type: "Constant" output: "%s" attribute { name: "value" type: TENSOR '
            't { dims: %d data_type: 7 %s } } } ' % (name, out, len(values), " ".join("int64_data: %d" % v for v in values)))


# Found by fuzz_onnx: the small-tensor evaluator read a second input a one-input Mul lacks.
o("mul_one_input", model(const_i64("k", "a", [3, 4]) + 'node { name: "m" op_type: "Mul" input: "a" output: "c" }',
  [], [vi("c", [2], elem=7)]), "", exit_code=0)
o("div_int64_min_by_minus_one", model(const_i64("k1", "a", [-2**63]) + const_i64("k2", "b", [-1]) +
  'node { name: "d" op_type: "Div" input: "a" input: "b" output: "c" }', [], [vi("c", [1], elem=7)]), "", exit_code=0)
o("mod_int64_min_by_minus_one", model(const_i64("k1", "a", [-2**63]) + const_i64("k2", "b", [-1]) +
  'node { name: "d" op_type: "Mod" input: "a" input: "b" output: "c" }', [], [vi("c", [1], elem=7)]), "", exit_code=0)
# Pads whose sum (Pad) or whose sum less the window (Conv) overflows int64: the extent is unknown,
# not wrapped, and the node is reported rather than costed.
o("pad_sum_overflow", model(const_i64("k", "pads", [0, 2**62, 0, 2**62]) +
  'node { name: "p" op_type: "Pad" input: "x" input: "pads" output: "y" }',
  [vi("x", [2, 3])], [vi("y", ["a", "b"])]), "", exit_code=0)
o("conv_pads_overflow", model(
    'node { name: "conv" op_type: "Conv" input: "x" input: "w" output: "y" '
    'attribute { name: "pads" type: INTS ints: 4611686018427387904 ints: 0 ints: 4611686018427387904 ints: 0 } }',
    [vi("x", [1, 3, 8, 8]), vi("w", [4, 3, 3, 3])], [vi("y", [1, 4, "h", "v"])]), "", exit_code=0)
# Inputs libFuzzer found (fuzz_onnx artifacts, kept verbatim; the script does not rewrite them).
def found(rel, exit_code, fragment, args=""):
    assert os.path.exists(os.path.join(HERE, rel)), rel
    cases.append((rel, exit_code, fragment, args))


found("onnx/fuzz_conv_stride_zero.onnx", 2,
      "node '/layer3/layer3.4/conv2/Conv' (Conv): attribute 'strides' holds 0 (must be positive)")  # was SIGFPE in libonnx
found("onnx/fuzz_mul_one_input.onnx", 2,
      "node '/gn/Add' (Add): input '/gn/Mul_output_0' is not a graph input")  # was heap-buffer-overflow
found("onnx/fuzz_broadcast_value_mismatch.onnx", 0, "")  # was a read past a constant's values
found("onnx/fuzz_pad_sum_overflow.onnx", 0, "")  # was signed overflow adding a Pad's two pads
# Nested subgraphs: If inside If ... 200 deep (protobuf's recursion limit is 100).
inner = model(MATMUL, [vi("a", [2, 3]), vi("b", [3, 4])], [vi("c", [2, 4])])
sub = 'name: "s" node { op_type: "Relu" input: "a" output: "r" } output { %s }' % vi("r", [2, 3])
for _ in range(200):
    sub = ('name: "s" node { op_type: "If" input: "cond" output: "r" attribute { name: "then_branch" type: GRAPH g { %s } } '
           'attribute { name: "else_branch" type: GRAPH g { %s } } } output { %s }' % (sub, 'name: "e" output { %s }' % vi("r", [2, 3]), vi("r", [2, 3])))
o("deep_subgraphs", 'ir_version: 8 opset_import { version: 17 } graph { name: "g" %s input { %s } input { %s } output { %s } }'
  % (sub[len('name: "s" '):sub.rindex(" output {")], vi("cond", [], elem=9), vi("a", [2, 3]), vi("r", [2, 3])),
  "onnx/deep_subgraphs.onnx")
with open(os.path.join(HERE, "cases.txt"), "w") as f:
    f.write("# The hostile-input corpus, written by make_hostile.py (edit that, then rerun it).\n")
    f.write("# FILE | EXIT | FRAGMENT | ARGS\n")
    f.write("# hostile_test.cc runs `opscope <command> ARGS -o OUT` per case: graph/ and onnx/ run\n")
    f.write("# `analyze @FILE ARGS`, hf/ runs `llm @FILE ARGS`, device/ and cli/ give their whole ARGS\n")
    f.write("# (@FILE: the case file, @GRAPH: tests/golden/matmul.json, @ARGS: the file's lines).\n")
    f.write("# EXIT 2: stderr is one line 'opscope: error: ...' containing FRAGMENT; OUT is never written.\n")
    for rel, code, frag, args in cases:
        f.write("%s | %d | %s | %s\n" % (rel, code, frag, args))
print("%d cases" % len(cases))
