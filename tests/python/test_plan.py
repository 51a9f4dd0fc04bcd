"""opscope.plan() equals `opscope plan --format json` for the same options (the planner's
document as dicts, field by field), predicted and roofline, with targets, --disagg, --rate and
several recipes; its options are checked as on the command line."""
import pytest

import opscope
from conftest import cli_error, cli_json

PLAN_CASES = [
    (["llama-3.1-8b", "--device", "h200", "--gpus", "4", "--isl", "1024", "--osl", "128"],
     dict(device="h200", gpus=4, isl=1024, osl=128)),
    (["llama-3.1-8b", "--device", "h200", "--gpus", "8", "--isl", "2048", "--osl", "256",
      "--ttft-ms", "800", "--tpot-ms", "8", "--disagg", "--rate", "20", "--price", "2.5"],
     dict(device="h200", gpus=8, isl=2048, osl=256, ttft_ms=800, tpot_ms=8, disagg=True,
          rate=20, price=2.5)),
    (["llama-3.1-8b", "--device", "h200", "--gpus", "4", "--engine", "roofline",
      "--weights", "fp8_e4m3,nvfp4", "--tpot-ms", "10"],
     dict(device="h200", gpus=4, engine="roofline", weights=["fp8_e4m3", "nvfp4"], tpot_ms=10)),
    (["qwen3-30b-a3b", "--device", "h100-sxm", "--gpus", "8", "--engine", "sglang",
      "--isl", "512", "--osl", "64", "--max-batch", "64"],
     dict(device="h100-sxm", gpus=8, engine="sglang", isl=512, osl=64, max_batch=64)),
    (["llama-3.1-8b", "--device", "h200", "--gpus", "4", "--isl", "1024", "--osl", "128",
      "--lengths", "fixed", "--ttft-ms", "500"],
     dict(device="h200", gpus=4, isl=1024, osl=128, lengths="fixed", ttft_ms=500)),
    (["deepseek-v3", "--device", "h200", "--gpus", "8", "--isl", "1024", "--osl", "128",
      "--engine", "sglang", "--max-batch", "16", "--speculative", "mtp:1", "--acceptance", "0.8"],
     dict(device="h200", gpus=8, isl=1024, osl=128, engine="sglang", max_batch=16,
          speculative="mtp:1", acceptance=0.8)),
    (["qwen3-32b", "--device", "h200", "--gpus", "4", "--isl", "1024", "--osl", "128",
      "--engine", "vllm", "--max-batch", "16", "--speculative", "draft:3", "--acceptance", "0.7",
      "--draft-model", "qwen3-8b"],
     dict(device="h200", gpus=4, isl=1024, osl=128, engine="vllm", max_batch=16,
          speculative="draft:3", acceptance=0.7, draft_model="qwen3-8b")),
]


@pytest.mark.parametrize("args,kwargs", PLAN_CASES, ids=[" ".join(a) for a, _ in PLAN_CASES])
def test_plan_equals_the_cli(args, kwargs):
    assert opscope.plan(args[0], **kwargs) == cli_json("plan", *args)


def test_plan_is_predicted_where_the_device_has_an_engine_profile():
    assert opscope.plan("llama-3.1-8b", device="h200", gpus=2)["plan"]["estimate"] == "predicted"
    assert opscope.plan("llama-3.1-8b", device="h200", gpus=2,
                        engine="roofline")["plan"]["estimate"] == "roofline"


@pytest.mark.parametrize("kwargs,args", [
    (dict(gpus=0), ["--gpus", "0"]),
    (dict(tpot_ms=-1), ["--tpot-ms", "-1"]),
    (dict(engine="fastllm"), ["--engine", "fastllm"]),
    (dict(weights="q9_z"), ["--weights", "q9_z"]),
    (dict(lengths="fix"), ["--lengths", "fix"]),
    (dict(lengths="fixed", disagg=True), ["--lengths", "fixed", "--disagg"]),
    (dict(speculative="mtp:1", acceptance=0.7), ["--speculative", "mtp:1", "--acceptance", "0.7"]),
    (dict(speculative="draft:2", acceptance=0.7),
     ["--speculative", "draft:2", "--acceptance", "0.7"]),
])
def test_plan_errors_are_the_clis(kwargs, args):
    with pytest.raises(opscope.Error) as e:
        opscope.plan("llama-3.1-8b", **kwargs)
    assert str(e.value) == cli_error("plan", "llama-3.1-8b", *args)
