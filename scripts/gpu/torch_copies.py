#!/usr/bin/env python3
"""An independent path for the host <-> GPU copy rates: PyTorch tensors,
timed with CUDA events, in the same sizes and directions as bwscope's
transfer suite. Pinned (torch's pin_memory) and pageable tensors; each
(size, kind, direction) is ROUNDS samples of REPS copies, so the spread of
the pageable rates is visible. Prints one JSON document.
Usage: torch_copies.py [SIZES_MIB...]   (default 64 256 1024)
"""
import json
import sys

import torch

ROUNDS, REPS = 7, 10
sizes = [int(x) for x in sys.argv[1:]] or [64, 256, 1024]
dev = torch.device("cuda")


def rates(n, copy):
    """ROUNDS samples (after one warm-up) of REPS copies of n bytes, GB/s."""
    out = []
    for _ in range(ROUNDS + 1):
        torch.cuda.synchronize()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(REPS):
            copy()
        b.record()
        torch.cuda.synchronize()
        out.append(n * REPS / (a.elapsed_time(b) / 1e3) / 1e9)
    return sorted(out[1:])


out = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
       "rounds": ROUNDS, "reps": REPS, "results": []}
for mib in sizes:
    n = mib << 20
    d = torch.empty(n, dtype=torch.uint8, device=dev)
    d2 = torch.empty(n, dtype=torch.uint8, device=dev)
    d.random_(0, 255)
    for kind in ("pinned", "pageable"):
        h = torch.empty(n, dtype=torch.uint8, pin_memory=(kind == "pinned"))
        h.random_(0, 255)
        nb = kind == "pinned"
        for direction, copy in (("h2d", lambda: d.copy_(h, non_blocking=nb)),
                                ("d2h", lambda: h.copy_(d, non_blocking=nb))):
            out["results"].append({"size_bytes": n, "kind": kind, "direction": direction,
                                   "gbps": rates(n, copy)})
    out["results"].append({"size_bytes": n, "kind": None, "direction": "d2d",
                           "gbps": rates(n, lambda: d2.copy_(d)), "bytes_counted": "payload"})
    del d, d2
print(json.dumps(out, indent=1))
