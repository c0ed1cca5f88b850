"""Signatures and classes of real failure texts: one fault stays one root cause across devices,
xdist workers and device-side assert positions; different asserts in one test stay apart; a test's
own CUDA OOM is real, an uncorrectable ECC error is infrastructure.

Each test here failed on the code it was written against.
"""
from __future__ import annotations

from bot.triage.signature import signature_of


# --------------------------------------------------------------------------- signatures
def test_two_different_plain_asserts_in_one_test_are_two_root_causes():
    """pytest's failure section for a plain ``assert`` (no ``AssertionError:`` prefix on the E
    line) is the commonest Triton test failure. Two different asserts failing in one test are
    two faults: one a shape, one contiguity."""
    shape = """    def test_reduce(dtype):
        out = run(dtype)
>       assert out.shape == (128,)
E       assert torch.Size([64]) == (128,)
E         At index 0 diff: 64 != 128

python/test/unit/language/test_reduce.py:40: AssertionError"""
    contig = """    def test_reduce(dtype):
        out = run(dtype)
        check(out)
>       assert out.is_contiguous()
E       assert False
E        +  where False = <built-in method is_contiguous of Tensor object at 0x7f3a2c1b9e40>()

python/test/unit/language/test_reduce.py:44: AssertionError"""
    test = "python/test/unit/language/test_reduce.py::test_reduce"
    assert signature_of(shape, test).key != signature_of(contig, test).key


def test_two_different_numpy_asserts_in_one_test_are_two_root_causes():
    """``np.testing.assert_allclose`` (used throughout Triton's test_core) starts its message with
    an empty line. A tolerance miss and a shape mismatch in the same test are different faults."""
    head = "E   AssertionError: \nE   Not equal to tolerance rtol=0.01, atol=0.01\nE   \n"
    tol = head + ("E   Mismatched elements: 12 / 4096 (0.293%)\n"
                  "E   Max absolute difference among violations: 0.5\n"
                  "E   Max relative difference among violations: 1.2")
    shape = head + ("E   (shapes (64, 64), (64, 32) mismatch)\n"
                    "E    x: array([[1., 1.]], dtype=float32)\n"
                    "E    y: array([[1.]], dtype=float32)")
    test = "python/test/unit/language/test_core.py::test_dot"
    assert signature_of(tol, test).key != signature_of(shape, test).key


def test_the_cuda_device_index_does_not_split_one_fault():
    """A runner with several GPUs (pytest-xdist workers on cuda:0 … cuda:7) reports the same fault
    with a different device index each night."""
    a = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    b = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:3 and cpu!"
    assert signature_of(a).key == signature_of(b).key
    c = "AssertionError: assert tensor(False, device='cuda:0')"
    d = "AssertionError: assert tensor(False, device='cuda:5')"
    assert signature_of(c, "k.py::test_x").key == signature_of(d, "k.py::test_x").key


def test_the_xdist_worker_id_does_not_split_one_crash():
    """pytest-xdist names the worker a crashing test ran on; which worker it is varies by night."""
    a = "[gw3] node down: Not properly terminated\nworker 'gw3' crashed while running 'python/test/unit/language/test_core.py::test_dot[64]'"
    b = "[gw1] node down: Not properly terminated\nworker 'gw1' crashed while running 'python/test/unit/language/test_core.py::test_dot[64]'"
    t = "python/test/unit/language/test_core.py::test_dot"
    assert signature_of(a, t).key == signature_of(b, t).key


def test_a_device_side_assert_is_one_fault_whatever_block_and_thread_report_it():
    """A device-side assertion (``tl.device_assert``, torch's index kernels) is printed by
    whichever block/thread hits it first — nondeterministic across runs."""
    a = ("/tmp/tmpab12cd/kernel.py:30: _kernel: block: [0,0,0], thread: [64,0,0] "
         "Assertion `index out of bounds: 0 <= tmp5 < 128` failed.")
    b = ("/tmp/tmpzz99yy/kernel.py:30: _kernel: block: [3,0,0], thread: [17,0,0] "
         "Assertion `index out of bounds: 0 <= tmp5 < 128` failed.")
    t = "python/test/unit/test_debug.py::test_device_assert"
    assert signature_of(a, t).key == signature_of(b, t).key


# --------------------------------------------------------------------------- classes
def test_a_tests_own_cuda_oom_in_a_container_is_not_infrastructure():
    """In a container (CI's GPU jobs run in one) torch cannot match its own pid in NVML's list,
    so the test process's own memory is reported as ``Process <pid> has … memory in use`` — the
    only process listed, its memory what PyTorch itself allocated and reserved. That is the test
    asking for too much (a real regression), not another process holding the GPU."""
    text = ("E   torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 GiB. GPU 0 has a total capacity "
            "of 139.81 GiB of which 60.12 GiB is free. Process 414660 has 79.68 GiB memory in use. Of the allocated "
            "memory 77.91 GiB is allocated by PyTorch, and 1.12 GiB is reserved by PyTorch but unallocated. If "
            "reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "
            "to avoid fragmentation.")
    s = signature_of(text, "python/test/unit/language/test_matmul.py::test_matmul")
    assert s.type != "Infrastructure", s.key


def test_an_uncorrectable_ecc_error_is_infrastructure():
    """An uncorrectable ECC error is the GPU's memory failing: no commit is to blame."""
    s = signature_of("RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
                     "CUDA kernel errors might be asynchronously reported at some other API call",
                     "python/test/unit/language/test_core.py::test_dot")
    assert s.type == "Infrastructure", s.key
