"""static_alloc / executor memory: freed host buffers are kept for reuse (or not)."""
import os
import platform
import subprocess
import sys

import pytest



_REUSE_SCRIPT = """
import resource, torch
import mxtorch as mx
from mxtorch.graph import memory
import sys
if sys.argv[1] == "executor":
    mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=4).simple_bind(mx.cpu(), x=(2, 3))
else:
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, in_units=3))
    net.initialize()
    net.hybridize(static_alloc=True, static_shape=True)
    net(mx.nd.ones((2, 3)))
def faults():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        ts = [torch.empty(3 * 1024 * 1024) for _ in range(3)]   # 3 x 12 MiB
        ts.append(torch.empty(12 * 1024 * 1024))                # 48 MiB: above any threshold
        for t in ts:
            t.fill_(1.0)
        del ts, t
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10
faults()
measured = faults()
print(memory.retain_freed_memory(), measured)
"""


@pytest.mark.skipif(not (sys.platform.startswith("linux")
                         and platform.libc_ver()[0] == "glibc"), reason="glibc only")
@pytest.mark.parametrize("env, retained", [("1", True), ("0", False)])
@pytest.mark.parametrize("built", ["static_alloc", "executor"])
def test_static_alloc_keeps_freed_host_buffers(env, retained, built):
    proc = subprocess.run([sys.executable, "-c", _REUSE_SCRIPT, built], capture_output=True,
                          text=True, timeout=120,
                          env=dict(os.environ, MXTORCH_RETAIN_FREED_MEMORY=env,
                                   # glibc's starting threshold, fixed (not adapted to the
                                   # import's allocations) so the baseline is deterministic
                                   MALLOC_MMAP_THRESHOLD_="131072"))
    assert proc.returncode == 0, proc.stderr
    applied, faults = proc.stdout.split()
    assert applied == str(retained), proc.stdout
    if retained:
        assert float(faults) < 20, faults  # the buffers are reused, not page-faulted again
    else:
        assert float(faults) > 10000, faults  # glibc maps or trims them and faults them in again
