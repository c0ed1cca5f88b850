"""L1 correctness tests of the reference kernels (examples/kernels/kernels.py).

Each test draws random inputs from a seed derived from its name (``test_vector_add[small-fp32]``;
the seed is in the failure message): every run of one test on one commit tests the same data, so a
retest, the base's run and a bisection step agree, and a failure reproduces. It poisons the output
buffer with NaN before the launch, and compares against a float64 torch reference by the
norm-wise relative error ‖out − ref‖ / ‖ref‖ with a bound per dtype. Sizes differ between the
interpreter (CPU, small: the interpreter runs ~1 s for a 128³ matmul with 16³ tiles) and a GPU;
the test ids do not, so the suite's expected count is the same on every platform.
Without a GPU and without ``TRITON_INTERPRET=1`` every test is skipped (saturated validation then
turns the run red: nothing ran).
"""
from __future__ import annotations

import hashlib

import pytest
import torch

import kernels as K

ON_GPU = not K.INTERPRET and torch.cuda.is_available()
RUNNABLE = K.INTERPRET or ON_GPU
pytestmark = pytest.mark.skipif(not RUNNABLE, reason="no GPU visible and TRITON_INTERPRET is not set")
DEV = K.device()

DTYPES = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

#: Norm-wise relative error bounds. Elementwise/reductions: output rounding of the dtype
#: (unit roundoff fp16 4.9e-4, bf16 3.9e-3) with headroom. Matmul: fp32 runs as tf32 on NVIDIA
#: GPUs (about 3e-4 observed), 16-bit inputs accumulate in fp32 and round once on store.
BOUNDS = {
    "elementwise": {"fp32": 1e-6, "fp16": 1e-3, "bf16": 8e-3},
    "reduction": {"fp32": 1e-5, "fp16": 2e-3, "bf16": 1e-2},
    "matmul": {"fp32": 2e-3, "fp16": 2e-3, "bf16": 1e-2},
}

#: (interpreter size, GPU size) per case; ragged sizes exercise the masks.
ADD_SIZES = {"small": (1000, 98_432), "large": (4097, 16_777_217)}
ROW_SHAPES = {"narrow": ((17, 100), (4096, 781)), "wide": ((9, 1030), (2048, 8192))}
MATMUL_SHAPES = {"ragged": ((96, 80, 72), (1000, 1500, 777))}


def _size(table, key):
    return table[key][1 if ON_GPU else 0]


@pytest.fixture
def gen(request) -> tuple[torch.Generator, int]:
    """``(generator, seed)``: a CPU generator seeded with the first 48 bits of the sha256 of the
    test's name with its parameters — the name, not the node id, so the rootdir pytest runs from
    does not change the inputs."""
    seed = int.from_bytes(hashlib.sha256(request.node.name.encode()).digest()[:6], "big")
    g = torch.Generator(device="cpu")
    g.manual_seed(seed)
    return g, seed


def _rand(shape, dtype, g) -> torch.Tensor:
    return torch.randn(shape, generator=g, dtype=torch.float32).to(dtype=dtype).to(DEV)


def _poisoned(shape, dtype) -> torch.Tensor:
    return torch.full(shape, float("nan"), dtype=dtype, device=DEV)


def _check(out: torch.Tensor, ref: torch.Tensor, bound: float, seed: int, what: str) -> None:
    out64 = out.to(torch.float64).cpu()
    ref64 = ref.to(torch.float64).cpu()
    unwritten = int(torch.isnan(out64).sum())
    assert unwritten == 0, f"{what}: {unwritten} of {out64.numel()} outputs are NaN (unwritten or invalid); seed={seed}"
    err = float(torch.linalg.vector_norm(out64 - ref64) / torch.linalg.vector_norm(ref64))
    assert err <= bound, f"{what}: relative error {err:.3e} exceeds bound {bound:.1e}; seed={seed}"


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("size", list(ADD_SIZES))
def test_vector_add(size, dtype, gen):
    g, seed = gen
    n = _size(ADD_SIZES, size)
    x, y = _rand((n,), DTYPES[dtype], g), _rand((n,), DTYPES[dtype], g)
    out = K.add_triton(x, y, out=_poisoned((n,), DTYPES[dtype]))
    ref = x.to(torch.float64) + y.to(torch.float64)
    _check(out, ref, BOUNDS["elementwise"][dtype], seed, f"add n={n} {dtype}")


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", list(ROW_SHAPES))
def test_softmax(shape, dtype, gen):
    g, seed = gen
    rows, cols = _size(ROW_SHAPES, shape)
    x = _rand((rows, cols), DTYPES[dtype], g) * 3
    out = K.softmax_triton(x, out=_poisoned((rows, cols), DTYPES[dtype]))
    ref = torch.softmax(x.to(torch.float64), dim=1)
    _check(out, ref, BOUNDS["reduction"][dtype], seed, f"softmax {rows}x{cols} {dtype}")


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("shape", list(ROW_SHAPES))
def test_layernorm(shape, dtype, gen):
    g, seed = gen
    rows, cols = _size(ROW_SHAPES, shape)
    x = _rand((rows, cols), DTYPES[dtype], g) * 2 + 0.5
    w, b = _rand((cols,), DTYPES[dtype], g), _rand((cols,), DTYPES[dtype], g)
    out = K.layernorm_triton(x, w, b, 1e-5, out=_poisoned((rows, cols), DTYPES[dtype]))
    ref = torch.nn.functional.layer_norm(x.to(torch.float64), (cols,), w.to(torch.float64), b.to(torch.float64), 1e-5)
    _check(out, ref, BOUNDS["reduction"][dtype], seed, f"layernorm {rows}x{cols} {dtype}")


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("config", K.MATMUL_CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("shape", list(MATMUL_SHAPES))
def test_matmul(shape, config, dtype, gen):
    g, seed = gen
    m, n, k = _size(MATMUL_SHAPES, shape)
    a, b = _rand((m, k), DTYPES[dtype], g), _rand((k, n), DTYPES[dtype], g)
    out = K.matmul_triton(a, b, config, out=_poisoned((m, n), DTYPES[dtype]))
    ref = a.to(torch.float64) @ b.to(torch.float64)
    _check(out, ref, BOUNDS["matmul"][dtype], seed, f"matmul {m}x{n}x{k} {config.name} {dtype}")
