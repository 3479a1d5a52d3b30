#!/usr/bin/env python3
"""all_reduce under the PyTorch profiler, for deploy/gpu/perfetto-overlay.sh: each rank warms up, then profiles
--iters all_reduces of --size bytes (CPU and CUDA activities) and writes its Chrome trace to
OUT/torch-rank{R}.json, so flowscope's Perfetto export of the same run can be laid over it."""
import argparse
import os

import torch
import torch.distributed as dist
from torch.profiler import ProfilerActivity, profile

p = argparse.ArgumentParser()
p.add_argument("--out", required=True)
p.add_argument("--size", type=int, default=4 << 20)
p.add_argument("--iters", type=int, default=50)
a = p.parse_args()
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl")
x = torch.ones(a.size // 4, device="cuda")
for _ in range(20):
    dist.all_reduce(x)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    for _ in range(a.iters):
        dist.all_reduce(x)
    torch.cuda.synchronize()
rank = dist.get_rank()
prof.export_chrome_trace(os.path.join(a.out, f"torch-rank{rank}.json"))
print(f"torch: rank={rank} pid={os.getpid()} device={local} iters={a.iters} size={a.size}", flush=True)
dist.destroy_process_group()
