# Type stubs of the opscope package (src/python/opscope/__init__.py has the docstrings).
import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

__version__: str

class Error(ValueError):
    """Bad input: the message the opscope command line prints after "opscope: error: "."""

Path = Union[str, os.PathLike[str]]
# A LIST option: an int, ints, a range, or the command line's text ("1..64", "1024..32768:1024").
IntList = Union[int, Iterable[int], str]
# A table of columns: a pandas.DataFrame when pandas is installed, else {column: numpy array}.
Table = Any
# The JSON report's structure, with "nodes" (a report) or "points" (a sweep) as a Table.
Report = dict[str, Any]

def llm(
    model: Path,
    device: Path = "h100-sxm",
    batch: int = 1,
    context: int = 4096,
    phase: str = "decode",
    *,
    prompt: Optional[int] = None,
    gen_len: Optional[int] = None,
    weights: Optional[str] = None,
    activations: Optional[str] = None,
    kv_dtype: Optional[str] = None,
    state_dtype: Optional[str] = None,
    mem_util: float = 0.9,
    tp: int = 1,
    ep: int = 1,
    pp: int = 1,
    dp_attention: Optional[int] = None,
    gpus_per_node: Optional[int] = None,
    micro_batches: Optional[int] = None,
    model_type: Optional[str] = None,
    engine: Optional[Path] = None,
    disagg: Optional[str] = None,
    prefill_tp: Optional[int] = None,
    decode_tp: Optional[int] = None,
    speculative: Optional[str] = None,
    acceptance: Optional[float] = None,
) -> Report: ...

def analyze(
    path: Path,
    device: Path = "h100-sxm",
    dims: Optional[Mapping[str, int]] = None,
    inputs: Optional[Mapping[str, Union[int, float, Sequence[int]]]] = None,
) -> Report: ...

def sweep(
    model: Path,
    batch: IntList,
    context: IntList,
    device: Union[Path, Iterable[Path]] = "h100-sxm",
    weights: Union[None, str, Iterable[Optional[str]]] = None,
    phase: str = "decode",
    *,
    tp: Optional[IntList] = None,
    ep: Optional[IntList] = None,
    pp: Optional[IntList] = None,
    activations: Optional[str] = None,
    kv_dtype: Optional[str] = None,
    state_dtype: Optional[str] = None,
    gen_len: Optional[IntList] = None,
    osl: Optional[IntList] = None,
    mem_util: float = 0.9,
    dp_attention: Optional[IntList] = None,
    gpus_per_node: Optional[int] = None,
    micro_batches: Optional[int] = None,
    model_type: Optional[str] = None,
    engine: Optional[Path] = None,
    disagg: Union[None, str, Iterable[str]] = None,
    prefill_tp: Optional[IntList] = None,
    decode_tp: Optional[IntList] = None,
    lengths: Optional[str] = None,
    speculative: Optional[str] = None,
    acceptance: Optional[float] = None,
) -> Report: ...

def plan(
    model: Path,
    device: Path = "h100-sxm",
    gpus: int = 8,
    isl: int = 4096,
    osl: int = 1024,
    *,
    ttft_ms: Optional[float] = None,
    tpot_ms: Optional[float] = None,
    rate: Optional[float] = None,
    engine: Optional[Path] = None,
    weights: Union[None, str, Iterable[str]] = None,
    disagg: bool = False,
    price: Optional[float] = None,
    activations: Optional[str] = None,
    kv_dtype: Optional[str] = None,
    max_batch: int = 512,
    mem_util: float = 0.9,
    model_type: Optional[str] = None,
    lengths: Optional[str] = None,
    speculative: Optional[str] = None,
    acceptance: Optional[float] = None,
) -> dict[str, Any]: ...

def devices() -> list[dict[str, Any]]: ...
def presets() -> list[dict[str, Any]]: ...
