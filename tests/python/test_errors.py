"""Bad input raises opscope.Error, a ValueError, whose message is the one the command line
prints after 'opscope: error: ' for the same input."""
import pytest

import opscope
from conftest import cli_error

CASES = [
    (lambda: opscope.llm("llama-9000"), ["llm", "llama-9000"]),
    (lambda: opscope.llm("llama-3.1-8b", device="h999"), ["llm", "llama-3.1-8b", "--device", "h999"]),
    (lambda: opscope.llm("llama-3.1-8b", batch=0), ["llm", "llama-3.1-8b", "--batch", "0"]),
    (lambda: opscope.llm("llama-3.1-8b", weights="q4_x"), ["llm", "llama-3.1-8b", "--weights", "q4_x"]),
    (lambda: opscope.llm("llama-3.1-8b", tp=3), ["llm", "llama-3.1-8b", "--tp", "3"]),
    (lambda: opscope.llm("llama-3.1-8b", mem_util=1.5), ["llm", "llama-3.1-8b", "--mem-util", "1.5"]),
    (lambda: opscope.llm("tests/fixtures/gguf/tiny-mismatch.gguf"),
     ["llm", "tests/fixtures/gguf/tiny-mismatch.gguf"]),
    (lambda: opscope.llm("tests/fixtures/gguf/every_type.gguf"),
     ["llm", "tests/fixtures/gguf/every_type.gguf"]),
    (lambda: opscope.analyze("no/such/model.onnx"), ["analyze", "no/such/model.onnx"]),
    (lambda: opscope.analyze("examples/llama3_8b_layer.json", dims={"n": -1}),
     ["analyze", "examples/llama3_8b_layer.json", "--dim", "n=-1"]),
    (lambda: opscope.analyze("examples/llama3_8b_layer.json", inputs={"sr": 16000}),
     ["analyze", "examples/llama3_8b_layer.json", "--input", "sr=16000"]),
    (lambda: opscope.analyze("tests/fixtures/onnx/silero_vad/silero_vad.onnx", inputs={"sr": [1, "x"]}),
     None),
    (lambda: opscope.sweep("llama-3.1-8b", batch=[0, 1], context=[1024]),
     ["sweep", "llm", "llama-3.1-8b", "--batch", "0,1", "--context", "1024"]),
    (lambda: opscope.sweep("llama-3.1-8b", batch="4..1", context=[1024]),
     ["sweep", "llm", "llama-3.1-8b", "--batch", "4..1", "--context", "1024"]),
    (lambda: opscope.sweep("llama-3.1-8b", batch=1, context=1024, device=["h100-sxm", "h999"]),
     ["sweep", "llm", "llama-3.1-8b", "--batch", "1", "--context", "1024", "--device", "h100-sxm,h999"]),
    (lambda: opscope.sweep("llama-3.1-8b", batch=1, context=1024, osl=[8, 0]),
     ["sweep", "llm", "llama-3.1-8b", "--batch", "1", "--context", "1024", "--osl", "8,0"]),
    (lambda: opscope.sweep("llama-3.1-8b", batch=1, context=1024, osl=8, engine="vllm",
                           disagg=["1:1", "2"]),
     ["sweep", "llm", "llama-3.1-8b", "--batch", "1", "--context", "1024", "--osl", "8",
      "--engine", "vllm", "--disagg", "1:1,2"]),
    (lambda: opscope.sweep("llama-3.1-8b", batch=1, context=1024, osl=8, disagg="1:1"),
     ["sweep", "llm", "llama-3.1-8b", "--batch", "1", "--context", "1024", "--osl", "8",
      "--disagg", "1:1"]),
    (lambda: opscope.sweep("llama-3.1-8b", batch=1, context=1024, decode_tp=[2]),
     ["sweep", "llm", "llama-3.1-8b", "--batch", "1", "--context", "1024", "--decode-tp", "2"]),
]


@pytest.mark.parametrize("call,args", [c for c in CASES if c[1]],
                         ids=[" ".join(a) for _, a in CASES if a])
def test_errors_carry_the_cli_message(call, args):
    with pytest.raises(opscope.Error) as e:
        call()
    assert str(e.value) == cli_error(*args)


def test_error_is_a_value_error():
    assert issubclass(opscope.Error, ValueError)
    with pytest.raises(ValueError):
        opscope.llm("llama-3.1-8b", phase="middle")
    with pytest.raises(opscope.Error, match="option '--phase'"):
        opscope.sweep("llama-3.1-8b", batch=1, context=1, phase="middle")


def test_non_integers_are_type_errors():
    # Python's own contract for a wrong type, before anything reaches the core.
    with pytest.raises(TypeError):
        opscope.analyze("tests/fixtures/onnx/silero_vad/silero_vad.onnx", inputs={"sr": [1, "x"]})
    with pytest.raises(TypeError):
        opscope.sweep("llama-3.1-8b", batch=[1.5], context=1024)
    with pytest.raises(TypeError):
        opscope.llm("llama-3.1-8b", batch="8")
