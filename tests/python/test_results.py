"""The package's results equal the command line's JSON for the same inputs, field by field:
presets (decode, prefill with a whole request, a deployment), graph JSON, ONNX (with and
without input values), GGUF and safetensors model files, sweeps, devices and presets."""
import pytest

import opscope
from conftest import as_json, cli_json

LLM_CASES = [
    (["llama-3.1-8b"], {}),
    (["llama-3.1-8b", "--batch", "8", "--context", "1000", "--gen-len", "30"],
     dict(batch=8, context=1000, gen_len=30)),
    (["qwen3-30b-a3b", "--phase", "prefill", "--prompt", "512", "--weights", "fp8_e4m3"],
     dict(phase="prefill", prompt=512, weights="fp8_e4m3")),
    (["llama-3.1-70b", "--tp", "4", "--pp", "2", "--batch", "16", "--device", "h200"],
     dict(tp=4, pp=2, batch=16, device="h200")),
    (["llama-3.1-8b", "--weights", "q4_k_m", "--device", "m4-max", "--kv-dtype", "q8_0",
      "--mem-util", "0.5"],
     dict(weights="q4_k_m", device="m4-max", kv_dtype="q8_0", mem_util=0.5)),
    (["tests/fixtures/gguf/tiny-llama.gguf"], {}),
    (["tests/fixtures/gguf/tiny-deepseek2.gguf", "--batch", "4"], dict(batch=4)),
    (["tests/fixtures/safetensors/tiny-fp8"], {}),
    (["tests/fixtures/safetensors/tiny-gpt-oss", "--context", "64"], dict(context=64)),
    # Engine predictions and serving modes (llm.predicted).
    (["llama-3.1-8b", "--engine", "sglang", "--batch", "16", "--gen-len", "64"],
     dict(engine="sglang", batch=16, gen_len=64)),
    (["llama-3.1-70b", "--tp", "4", "--device", "h200", "--gen-len", "32", "--disagg", "1:1"],
     dict(tp=4, device="h200", gen_len=32, disagg="1:1")),
    (["llama-3.1-8b", "--batch", "8", "--prompt", "1024", "--gen-len", "64", "--lengths", "fixed"],
     dict(batch=8, prompt=1024, gen_len=64, lengths="fixed")),
    (["qwen3-32b", "--tp", "2", "--device", "h200", "--gen-len", "64", "--speculative", "draft:3",
      "--draft-model", "qwen3-8b", "--acceptance", "0.7"],
     dict(tp=2, device="h200", gen_len=64, speculative="draft:3", draft_model="qwen3-8b",
          acceptance=0.7)),
]


@pytest.mark.parametrize("args,kwargs", LLM_CASES, ids=[" ".join(a) for a, _ in LLM_CASES])
def test_llm_equals_the_cli(args, kwargs):
    assert as_json(opscope.llm(args[0], **kwargs)) == cli_json("llm", *args)


def test_prediction_options_are_checked_as_on_the_command_line():
    with pytest.raises(opscope.Error, match="--acceptance"):
        opscope.llm("llama-3.1-8b", speculative="mtp:1")
    with pytest.raises(opscope.Error, match="--prefill-tp"):
        opscope.llm("llama-3.1-8b", prefill_tp=2)
    with pytest.raises(opscope.Error, match="--lengths"):
        opscope.llm("llama-3.1-8b", gen_len=8, lengths="same")
    with pytest.raises(opscope.Error, match="--draft-model"):
        opscope.llm("llama-3.1-8b", gen_len=8, speculative="draft:2", acceptance=0.5,
                    draft_model="qwen3-8b")


ANALYZE_CASES = [
    (["examples/llama3_8b_layer.json", "--dim", "n=1", "--dim", "seqs=1", "--dim", "ctx=4096"],
     dict(dims={"n": 1, "seqs": 1, "ctx": 4096})),
    # ctx unbound: the attention node is listed as not costed, with its reason.
    (["examples/llama3_8b_layer.json", "--dim", "n=1", "--dim", "seqs=1"],
     dict(dims={"n": 1, "seqs": 1})),
    (["tests/fixtures/onnx/resnet50.onnx", "--device", "l4"], dict(device="l4")),
    (["tests/fixtures/onnx/gpt2_tiny_dynamic.onnx"], {}),
    # If on an input given no value: warnings and not_taken.
    (["tests/fixtures/onnx/silero_vad/silero_vad.onnx"], {}),
    (["tests/fixtures/onnx/silero_vad/silero_vad.onnx", "--input", "sr=16000", "--dim",
      "input:0=1", "--dim", "input:1=512", "--dim", "state:1=1"],
     dict(inputs={"sr": 16000}, dims={"input:0": 1, "input:1": 512, "state:1": 1})),
    (["tests/fixtures/gguf/tiny-gemma3.gguf", "--dim", "n=2", "--dim", "seqs=2", "--dim",
      "ctx=40"], dict(dims={"n": 2, "seqs": 2, "ctx": 40})),
]


@pytest.mark.parametrize("args,kwargs", ANALYZE_CASES, ids=[" ".join(a) for a, _ in ANALYZE_CASES])
def test_analyze_equals_the_cli(args, kwargs):
    assert as_json(opscope.analyze(args[0], **kwargs)) == cli_json("analyze", *args)


def sweep_as_json(result):
    """A sweep as JSON has it: the points' model and phase columns (the CSV's) are top-level
    fields there."""
    out = as_json(result)
    for point in out["points"]:
        assert point.pop("model") == out["model"]
        assert point.pop("phase") == out["phase"]
    return out


def test_sweep_equals_the_cli():
    # tp 3 does not divide Llama-3.1-8B's 32 heads: skipped and listed, as on the command line.
    args = ["llama-3.1-8b", "--batch", "1,8,64", "--context", "1024..4096:1024", "--device",
            "h100-sxm,h200", "--weights", "bf16,q4_k_m", "--tp", "1,2,3"]
    result = opscope.sweep("llama-3.1-8b", batch=[1, 8, 64], context=range(1024, 4097, 1024),
                           device=["h100-sxm", "h200"], weights=["bf16", "q4_k_m"], tp=[1, 2, 3])
    expected = cli_json("sweep", "llm", *args)
    assert expected["skipped"]
    assert sweep_as_json(result) == expected


def test_prefill_sweep_with_whole_requests_equals_the_cli():
    args = ["qwen3-30b-a3b", "--batch", "1..4", "--context", "256", "--phase", "prefill",
            "--gen-len", "8"]
    result = opscope.sweep("qwen3-30b-a3b", batch="1..4", context=256, phase="prefill", gen_len=8)
    assert sweep_as_json(result) == cli_json("sweep", "llm", *args)


@pytest.mark.parametrize("lengths", [None, "fixed"])
def test_predicted_sweep_equals_the_cli(lengths):
    # The JSON's per-point "predicted" object is the DataFrame's predicted_* columns.
    args = ["llama-3.1-8b", "--batch", "1,16", "--context", "512,4096", "--engine", "sglang",
            "--gen-len", "32"] + (["--lengths", lengths] if lengths else [])
    points = opscope.sweep("llama-3.1-8b", batch=[1, 16], context=[512, 4096], engine="sglang",
                           gen_len=32, lengths=lengths)["points"]
    expected = cli_json("sweep", "llm", *args)["points"]
    assert len(points) == len(expected)
    for (_, row), want in zip(points.iterrows(), expected):
        for field in ("step_time_s", "tokens_per_s", "tpot_s", "ttft_s"):
            assert row["predicted_" + field] == want["predicted"][field], field


def test_speculative_sweep_equals_the_cli():
    # speculative=/acceptance= are --speculative mtp:N --acceptance R: the predicted figures and
    # the fit with the MTP module (predicted_max_batch, predicted_fits) as the JSON has them.
    args = ["deepseek-v3", "--batch", "4,64", "--context", "1024", "--device", "h200", "--tp",
            "8", "--osl", "128", "--engine", "sglang", "--speculative", "mtp:1",
            "--acceptance", "0.8"]
    points = opscope.sweep("deepseek-v3", batch=[4, 64], context=1024, device="h200", tp=8,
                           osl=128, engine="sglang", speculative="mtp:1",
                           acceptance=0.8)["points"]
    expected = cli_json("sweep", "llm", *args)["points"]
    assert len(points) == len(expected) == 2
    for (_, row), want in zip(points.iterrows(), expected):
        for field in ("tpot_s", "ttft_s", "max_batch", "fits"):
            assert row["predicted_" + field] == want["predicted"][field], field
        assert row["predicted_max_batch"] < row["max_batch"]
    with pytest.raises(opscope.Error, match="--acceptance"):
        opscope.sweep("deepseek-v3", batch=4, context=1024, device="h200", tp=8, osl=128,
                      engine="sglang", speculative="mtp:1")


def test_draft_model_sweep_equals_the_cli():
    # draft_model= is --draft-model: every point drafts with the draft model at the row's tp.
    args = ["qwen3-32b", "--batch", "1,16", "--context", "1024", "--device", "h200", "--tp",
            "1,2", "--osl", "128", "--engine", "vllm", "--speculative", "draft:3",
            "--acceptance", "0.7", "--draft-model", "qwen3-8b"]
    result = opscope.sweep("qwen3-32b", batch=[1, 16], context=1024, device="h200", tp=[1, 2],
                           osl=128, engine="vllm", speculative="draft:3", acceptance=0.7,
                           draft_model="qwen3-8b")
    # The document says what drafted, as the command line's does.
    assert (result["speculative"], result["acceptance"], result["draft_model"]) == \
        ("draft:3", 0.7, "qwen3-8b")
    points = result["points"]
    expected = cli_json("sweep", "llm", *args)["points"]
    assert len(points) == len(expected) == 4
    for (_, row), want in zip(points.iterrows(), expected):
        for field in ("tpot_s", "ttft_s", "max_batch", "fits"):
            assert row["predicted_" + field] == want["predicted"][field], field
    with pytest.raises(opscope.Error, match="--draft-model"):
        opscope.sweep("qwen3-32b", batch=1, context=1024, device="h200", osl=128,
                      engine="vllm", speculative="draft:3", acceptance=0.7)


def test_request_axes_equal_the_cli():
    # osl= (gen_len=) and disagg= are the command line's --osl/--disagg axes: the DataFrame's
    # columns are the JSON's fields (disagg's object flattened, null as NaN).
    import math
    args = ["llama-3.1-8b", "--batch", "1,16", "--context", "2048", "--device", "h200",
            "--osl", "64,256", "--engine", "vllm", "--disagg", "agg,1:1,1:2", "--prefill-tp", "2"]
    points = opscope.sweep("llama-3.1-8b", batch=[1, 16], context=2048, device="h200",
                           osl=[64, 256], engine="vllm", disagg=["agg", "1:1", "1:2"],
                           prefill_tp=2)["points"]
    expected = cli_json("sweep", "llm", *args)["points"]
    assert len(points) == len(expected) == 2 * 3 * 2
    for (_, row), want in zip(points.iterrows(), expected):
        assert row["gen_len"] == want["gen_len"]
        split = want["disagg"]
        for field in ("prefill_workers", "decode_workers", "prefill_tp", "decode_tp"):
            if split is None:
                assert math.isnan(row[field])
            else:
                assert row[field] == split[field], field
        for field in ("tpot_s", "ttft_s"):
            assert row[field] == want[field], field
        for field in ("tpot_s", "ttft_s", "tokens_per_s", "kv_transfer_s"):
            got, value = row["predicted_" + field], want["predicted"][field]
            assert math.isnan(got) if value is None else got == value, field


def test_osl_is_gen_len():
    a = opscope.sweep("llama-3.1-8b", batch=[1, 4], context=512, osl="8..24:8")
    b = opscope.sweep("llama-3.1-8b", batch=[1, 4], context=512, gen_len=range(8, 25, 8))
    assert list(a["points"]["gen_len"]) == [8, 8, 16, 16, 24, 24]
    assert as_json(a) == as_json(b)
    with pytest.raises(TypeError):
        opscope.sweep("llama-3.1-8b", batch=1, context=512, osl=8, gen_len=8)


def test_sweep_rows_equal_llm():
    points = opscope.sweep("llama-3.1-8b", batch=[1, 16], context=[512, 8192])["points"]
    for _, row in points.iterrows():
        r = opscope.llm("llama-3.1-8b", batch=int(row["batch"]), context=int(row["context"]))
        assert row["step_time_s"] == r["llm"]["step_time_s"]
        assert row["max_batch"] == r["llm"]["max_batch"]


def test_devices_and_presets_equal_the_cli():
    assert opscope.devices() == cli_json("devices")["devices"]
    assert opscope.presets() == cli_json("llm", "--list")["presets"]


def test_paths_may_be_path_objects(root):
    import pathlib
    path = pathlib.Path(root) / "tests/fixtures/gguf/tiny-llama.gguf"
    assert opscope.llm(path)["llm"]["weight_bytes"] == opscope.llm(str(path))["llm"]["weight_bytes"]


def test_dp_attention_is_an_axis_as_on_the_command_line():
    # dp_attention= takes a list like the command line's --dp-attention LIST: one row per degree.
    points = opscope.sweep("deepseek-v3", batch=8, context=1024, device="h200", tp=8, ep=8,
                           dp_attention=[1, 8])["points"]
    expected = cli_json("sweep", "llm", "deepseek-v3", "--batch", "8", "--context", "1024",
                        "--device", "h200", "--tp", "8", "--ep", "8",
                        "--dp-attention", "1,8")["points"]
    assert list(points["dp_attention"]) == [p["dp_attention"] for p in expected] == [1, 8]
    assert list(points["step_time_s"]) == [p["step_time_s"] for p in expected]
