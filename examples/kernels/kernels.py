"""Reference Triton kernels for forksync's L1/L2 suites: vector add, fused softmax, layer norm
(forward) and a blocked matmul with several launch configurations.

Each ``*_triton`` wrapper takes torch tensors on one device (``cuda``, or ``cpu`` under
``TRITON_INTERPRET=1``) and returns a new tensor of the input dtype; the caller may pass ``out``
to have the kernel write into a given (e.g. NaN-poisoned) buffer. Arithmetic is done in float32
inside the kernels. Under the interpreter ``tl.dot`` computes bfloat16 wrong unless the operands
are upcast (measured, docs/validation.md), so :func:`matmul_triton` upcasts there.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, replace

import torch
import triton
import triton.language as tl

INTERPRET = os.environ.get("TRITON_INTERPRET", "") not in ("", "0")


def device() -> str:
    """``"cpu"`` under ``TRITON_INTERPRET=1``, else ``"cuda"`` (which must then be available)."""
    return "cpu" if INTERPRET else "cuda"


# --------------------------------------------------------------------------- vector add
@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    # fp32 arithmetic: the interpreter computes bfloat16 wrong otherwise (NaNs), a GPU rounds the same
    tl.store(out_ptr + offs, (x.to(tl.float32) + y.to(tl.float32)).to(out_ptr.dtype.element_ty), mask=mask)


def add_triton(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor | None = None, block: int = 1024) -> torch.Tensor:
    assert x.shape == y.shape and x.is_contiguous() and y.is_contiguous()
    out = torch.empty_like(x) if out is None else out
    n = x.numel()
    _add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)
    return out


# --------------------------------------------------------------------------- fused softmax
@triton.jit
def _softmax_kernel(x_ptr, out_ptr, x_stride, out_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    y = num / tl.sum(num, axis=0)
    tl.store(out_ptr + row * out_stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def softmax_triton(x: torch.Tensor, out: torch.Tensor | None = None) -> torch.Tensor:
    """Row-wise softmax of a 2-D tensor (one program per row; the row must fit one block)."""
    assert x.dim() == 2 and x.stride(1) == 1
    rows, cols = x.shape
    out = torch.empty_like(x) if out is None else out
    _softmax_kernel[(rows,)](x, out, x.stride(0), out.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    return out


# --------------------------------------------------------------------------- layer norm
@triton.jit
def _layernorm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    var = tl.sum(d * d, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
    y = d * rstd * w + b
    tl.store(out_ptr + row * stride + cols, y.to(out_ptr.dtype.element_ty), mask=mask)


def layernorm_triton(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float = 1e-5,
                     out: torch.Tensor | None = None) -> torch.Tensor:
    """Layer norm over the last dimension of a contiguous 2-D tensor (forward only)."""
    assert x.dim() == 2 and x.is_contiguous()
    rows, cols = x.shape
    out = torch.empty_like(x) if out is None else out
    _layernorm_kernel[(rows,)](x, w, b, out, x.stride(0), cols, eps, BLOCK=triton.next_power_of_2(cols))
    return out


# --------------------------------------------------------------------------- blocked matmul
#: Shared memory per block on H100/H200 (bytes), Triton's "Hardware limit" in OutOfResources.
SMEM_LIMIT = 232448


@dataclass(frozen=True)
class MatmulConfig:
    """One launch configuration of :func:`matmul_triton` (tile sizes in elements)."""

    block_m: int
    block_n: int
    block_k: int
    group_m: int = 8
    num_warps: int = 4
    num_stages: int = 3

    @property
    def name(self) -> str:
        return f"{self.block_m}x{self.block_n}x{self.block_k}-g{self.group_m}-w{self.num_warps}-s{self.num_stages}"

    def smem_bytes(self, elem_size: int, stages: int | None = None) -> int:
        """Shared memory of the pipelined operand tiles: (BM·BK + BK·BN)·elem_size·stages — the
        figure Triton reports in ``OutOfResources`` for this kernel (294912 for 128×256×64, fp32,
        3 stages, seen on an H200)."""
        return (self.block_m * self.block_k + self.block_k * self.block_n) * elem_size * (stages or self.num_stages)

    def fitted(self, elem_size: int, limit: int = SMEM_LIMIT) -> "MatmulConfig":
        """This config with ``num_stages`` lowered (not below 1) until its tiles fit ``limit``
        bytes of shared memory — fp32 operands need twice the bytes of fp16/bf16."""
        stages = self.num_stages
        while stages > 1 and self.smem_bytes(elem_size, stages) > limit:
            stages -= 1
        return self if stages == self.num_stages else replace(self, num_stages=stages)


#: The configurations the L1 tests and the L2 sweep exercise. Tiles need (BM·BK + BK·BN)·bytes
#: per stage: the largest here takes 144 KiB at 3 stages with 16-bit inputs, under the H100/H200
#: limit of 227 KiB (232448 bytes), but 288 KiB with fp32 — :meth:`MatmulConfig.fitted` then drops
#: to 2 stages. (The interpreter accepted 3; the first H200 run failed with OutOfResources.)
MATMUL_CONFIGS: tuple[MatmulConfig, ...] = (
    MatmulConfig(64, 64, 32, 8, 4, 4),
    MatmulConfig(128, 128, 64, 8, 4, 3),
    MatmulConfig(128, 256, 64, 8, 8, 3),
    MatmulConfig(256, 128, 64, 8, 8, 3),
)


@triton.jit
def _matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                   stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                   GROUP_M: tl.constexpr, UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_in_group = GROUP_M * num_pid_n
    group_id = pid // num_in_group
    first_m = group_id * GROUP_M
    group_size = tl.minimum(num_pid_m - first_m, GROUP_M)
    pid_m = first_m + ((pid % num_in_group) % group_size)
    pid_n = (pid % num_in_group) // group_size

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - k * BLOCK_K
        a = tl.load(a_ptrs, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_left), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < k_left) & (offs_n[None, :] < N), other=0.0)
        if UPCAST:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, c, mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def matmul_triton(a: torch.Tensor, b: torch.Tensor, config: MatmulConfig = MATMUL_CONFIGS[1],
                  out: torch.Tensor | None = None) -> torch.Tensor:
    """``a @ b`` for 2-D ``a`` (M×K) and ``b`` (K×N) of one dtype; fp32 accumulation (a float32
    dot uses tf32 on NVIDIA GPUs, Triton's default). ``config`` is fitted to the shared memory
    (:meth:`MatmulConfig.fitted`) for the operands' element size."""
    assert a.dim() == 2 and b.dim() == 2 and a.shape[1] == b.shape[0] and a.dtype == b.dtype
    M, K = a.shape
    _, N = b.shape
    out = torch.empty((M, N), device=a.device, dtype=a.dtype) if out is None else out
    config = config.fitted(a.element_size())
    grid = (triton.cdiv(M, config.block_m) * triton.cdiv(N, config.block_n),)
    _matmul_kernel[grid](a, b, out, M, N, K,
                         a.stride(0), a.stride(1), b.stride(0), b.stride(1), out.stride(0), out.stride(1),
                         BLOCK_M=config.block_m, BLOCK_N=config.block_n, BLOCK_K=config.block_k,
                         GROUP_M=config.group_m, UPCAST=INTERPRET,
                         num_warps=config.num_warps, num_stages=config.num_stages)
    return out
