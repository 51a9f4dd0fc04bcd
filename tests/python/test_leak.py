"""No leak over 10,000 calls: the resident set stays flat while the core's entry points run
again and again (results, errors and tables dropped each time)."""
import opscope
from opscope import _opscope


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def calls(n):
    for i in range(n):
        _opscope.analyze(path="tests/golden/mlp.json", device="tests/golden/device.json",
                         dims=[("n", 1 + i % 7)], inputs=[])
        try:
            _opscope.analyze(path="tests/golden/mlp.json", device="h999", dims=[], inputs=[])
        except opscope.Error:
            pass
        if i % 10 == 0:
            opscope.llm("tests/fixtures/gguf/tiny-llama.gguf", batch=1 + i % 5)
            opscope.sweep("tests/fixtures/gguf/tiny-llama.gguf", batch=[1, 2], context=[16])


def test_rss_is_flat_over_10000_calls():
    calls(1000)  # warm up: allocator pools, pandas' caches
    before = rss_bytes()
    calls(10000)
    grown = rss_bytes() - before
    # A leak of one small result a call (a few KB) would grow it by tens of MB.
    assert grown < 4 * 1024 * 1024, grown
