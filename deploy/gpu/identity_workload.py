#!/usr/bin/env python3
"""A short all_reduce under torchrun, for deploy/gpu/gpu-identity.sh: each rank prints its pid, the CUDA device
torch has current and that device's PCI bus id as torch reports it, so the plugin's communicator entries can be
checked against it and against nvidia-smi."""
import os

import torch
import torch.distributed as dist

local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dist.init_process_group("nccl")
x = torch.ones(1 << 20, device="cuda")
for _ in range(20):
    dist.all_reduce(x)
torch.cuda.synchronize()
p = torch.cuda.get_device_properties(local)
bus = "?"
if all(hasattr(p, f) for f in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
    bus = f"{p.pci_domain_id:04x}:{p.pci_bus_id:02x}:{p.pci_device_id:02x}.0"
print(f"torch: rank={dist.get_rank()} pid={os.getpid()} device={torch.cuda.current_device()} bus={bus} "
      f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '')} sum={x[0].item():.0f}", flush=True)
dist.destroy_process_group()
