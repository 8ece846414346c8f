#!/usr/bin/python3
"""Times PyTorch's nn.MultiheadAttention forward pass as a same-machine peer for attn4j's grid.

The grid mirrors io.github.attn4j.jmh.Grid: E = 512, B = 1, self-attention over x (B, L, E),
heads x lengths x masks x threads, plus the textbook shape (B = 10, L = 20, E = 512, 8 heads).
Each point is warmed up, then timed in repetitions of about --rep-seconds each (as many calls
as fit); the reported time is the median over repetitions of the mean time per call, and
effective GFLOP/s = (8*B*L*E^2 + 4*B*L^2*E) / that time, whatever the mask skips.

Before timing, the module's output is checked against a float64 numpy computation of the
textbook formula for every mask, so that the mask conventions used here are known to be right.

This is a measurement script, not part of the Maven build. Run it with the interpreter that
Debian's python3-torch installs into (/usr/bin/python3), under the CPU lock, e.g.
    flock /work/cpu.lock /usr/bin/python3 jmh/peers/pytorch_mha.py --threads 1 --heads 8
Results are merged into --out (default jmh/results/pytorch.json) by point, so a grid can be
measured in several runs.
"""

import argparse
import ctypes
import datetime
import inspect
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

E = 512
TEXTBOOK = (10, 20, 8)  # batch, seqLen, heads
MASKS = ("none", "causal", "causal-float", "padding")


def csv_ints(text):
    return [int(v) for v in text.split(",") if v]


def csv_masks(text):
    names = [v for v in text.split(",") if v]
    for name in names:
        if name not in MASKS:
            raise argparse.ArgumentTypeError(f"mask: expected one of {', '.join(MASKS)}, got {name}")
    return names


def parse_args(argv):
    p = argparse.ArgumentParser(description="PyTorch nn.MultiheadAttention timing grid (attn4j peer)")
    p.add_argument("--heads", type=csv_ints, default=[1, 8, 16])
    p.add_argument("--lengths", type=csv_ints, default=[128, 512, 2048, 8192])
    p.add_argument("--masks", type=csv_masks, default=["none", "causal", "padding"],
                   help="none, causal (bool attn_mask, True above the diagonal), causal-float "
                        "(additive -inf attn_mask), padding (key_padding_mask over the last quarter of the keys)")
    p.add_argument("--threads", type=csv_ints, default=[1, 2])
    p.add_argument("--textbook", dest="textbook", action="store_true", default=True,
                   help="also time the textbook shape B=10, L=20, H=8 (default)")
    p.add_argument("--no-textbook", dest="textbook", action="store_false")
    p.add_argument("--textbook-only", action="store_true", help="time only the textbook shape")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per point (median taken)")
    p.add_argument("--rep-seconds", type=float, default=1.0, help="target length of one repetition")
    p.add_argument("--warmup-seconds", type=float, default=2.0)
    p.add_argument("--max-call-seconds", type=float, default=10.0, help="skip points slower than this per call")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", "pytorch.json"))
    p.add_argument("--fresh", action="store_true", help="discard earlier results in --out instead of merging")
    p.add_argument("--skip-check", action="store_true", help="skip the correctness self-check (not recommended)")
    args = p.parse_args(argv)
    if args.reps < 1:
        p.error(f"--reps: expected >= 1, got {args.reps}")
    return args


def flops(batch, seq_len, embed_dim):
    return 8 * batch * seq_len * embed_dim ** 2 + 4 * batch * seq_len ** 2 * embed_dim


def make_module(heads, seed):
    torch.manual_seed(seed)
    return torch.nn.MultiheadAttention(E, heads, batch_first=True).eval()


def mask_arguments(mask, batch, seq_len):
    """The keyword arguments of MultiheadAttention.forward that express the named mask."""
    if mask == "none":
        return {}
    if mask == "causal":
        kwargs = {"attn_mask": torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)}
        if "is_causal" in inspect.signature(torch.nn.MultiheadAttention.forward).parameters:
            kwargs["is_causal"] = True
        return kwargs
    if mask == "causal-float":
        upper = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
        return {"attn_mask": torch.zeros(seq_len, seq_len).masked_fill(upper, float("-inf"))}
    if mask == "padding":
        padded = torch.zeros(batch, seq_len, dtype=torch.bool)
        padded[:, seq_len - seq_len // 4:] = True
        return {"key_padding_mask": padded}
    raise ValueError(f"mask: expected one of {', '.join(MASKS)}, got {mask}")


def allowed_keys(mask, batch, seq_len):
    """(B, Lq, Lk) booleans, True where query i may attend to key j: stated independently of torch."""
    allowed = np.ones((batch, seq_len, seq_len), dtype=bool)
    if mask in ("causal", "causal-float"):
        i = np.arange(seq_len)[:, None]
        j = np.arange(seq_len)[None, :]
        allowed &= (j <= i)[None, :, :]
    elif mask == "padding":
        allowed[:, :, seq_len - seq_len // 4:] = False
    return allowed


def textbook_forward(x, module, allowed):
    """Multi-head self-attention in float64 numpy from the module's parameters."""
    heads = module.num_heads
    embed = module.embed_dim
    hd = embed // heads
    w_in = module.in_proj_weight.detach().double().numpy()
    b_in = module.in_proj_bias.detach().double().numpy()
    w_out = module.out_proj.weight.detach().double().numpy()
    b_out = module.out_proj.bias.detach().double().numpy()
    xs = x.double().numpy()
    batch, seq_len, _ = xs.shape
    out = np.zeros((batch, seq_len, embed))
    for b in range(batch):
        q = xs[b] @ w_in[:embed].T + b_in[:embed]
        k = xs[b] @ w_in[embed:2 * embed].T + b_in[embed:2 * embed]
        v = xs[b] @ w_in[2 * embed:].T + b_in[2 * embed:]
        concat = np.zeros((seq_len, embed))
        for h in range(heads):
            cols = slice(h * hd, (h + 1) * hd)
            scores = (q[:, cols] @ k[:, cols].T) / math.sqrt(hd)
            scores = np.where(allowed[b], scores, -np.inf)
            scores -= scores.max(axis=1, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=1, keepdims=True)
            concat[:, cols] = weights @ v[:, cols]
        out[b] = concat @ w_out.T + b_out
    return out


class PathProbe:
    """Tells whether a call went through torch._native_multi_head_attention (the 'fast path')."""

    def __init__(self):
        self.hits = 0

    def run(self, call):
        original = getattr(torch, "_native_multi_head_attention", None)
        if original is None:
            call()
            return "slow (F.multi_head_attention_forward)"

        def counting(*a, **kw):
            self.hits += 1
            return original(*a, **kw)

        torch._native_multi_head_attention = counting
        try:
            call()
        finally:
            torch._native_multi_head_attention = original
        return "fast (torch._native_multi_head_attention)" if self.hits else "slow (F.multi_head_attention_forward)"


def self_check(seed):
    """Aborts unless torch's output matches the float64 textbook computation for every mask and path."""
    rng = torch.Generator().manual_seed(seed)
    cases = [(2, 7, 16, 1), (2, 8, 24, 3), (2, 9, 16, 4), (1, 128, E, 8), (1, 96, E, 16)]
    worst = 0.0
    for batch, seq_len, embed, heads in cases:
        torch.manual_seed(seed)
        module = torch.nn.MultiheadAttention(embed, heads, batch_first=True).eval()
        with torch.no_grad():
            module.in_proj_bias.uniform_(-0.5, 0.5, generator=rng)
            module.out_proj.bias.uniform_(-0.5, 0.5, generator=rng)
        x = torch.rand(batch, seq_len, embed, generator=rng) * 2 - 1
        for mask in MASKS:
            kwargs = mask_arguments(mask, batch, seq_len)
            with torch.inference_mode():
                got = module(x, x, x, need_weights=False, **kwargs)[0].double().numpy()
            want = textbook_forward(x, module, allowed_keys(mask, batch, seq_len))
            err = float(np.max(np.abs(got - want)))
            scale = float(np.max(np.abs(want)))
            worst = max(worst, err / scale)
            if not np.all(np.isfinite(got)) or err > 1e-4 * max(1.0, scale):
                sys.exit(f"self-check FAILED: B={batch} L={seq_len} E={embed} H={heads} mask={mask}: "
                         f"max |torch - textbook| = {err:.3e} (output scale {scale:.3e})")
            if mask != "none":
                unmasked = textbook_forward(x, module, allowed_keys("none", batch, seq_len))
                if np.max(np.abs(got - unmasked)) < 1e-3 * scale:
                    sys.exit(f"self-check FAILED: mask={mask} did not change the output (B={batch} L={seq_len} H={heads})")
    print(f"self-check passed: {len(cases)} shapes x {len(MASKS)} masks, worst relative error {worst:.2e}")


def blas_info():
    """The BLAS library this process actually loaded, and OpenBLAS's own description when it is OpenBLAS."""
    info = {"build_blas_info": None, "loaded": []}
    for line in torch.__config__.show().splitlines():
        if "BLAS_INFO=" in line:
            info["build_blas_info"] = line.split("BLAS_INFO=")[1].split(",")[0]
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if ("blas" in path or "blis" in path or "mkl" in path) and path.startswith("/") and path not in info["loaded"]:
                info["loaded"].append(path)
    for path in info["loaded"]:
        try:
            lib = ctypes.CDLL(path)
            lib.openblas_get_config.restype = ctypes.c_char_p
            lib.openblas_get_corename.restype = ctypes.c_char_p
            info["openblas_config"] = lib.openblas_get_config().decode()
            info["openblas_core"] = lib.openblas_get_corename().decode()
        except (OSError, AttributeError):
            continue
    return info


def cpu_info():
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            if ":" in line:
                key, value = (s.strip() for s in line.split(":", 1))
                fields.setdefault(key, value)
    flags = fields.get("flags", "").split()
    return {
        "model_name": fields.get("model name"),
        "family": fields.get("cpu family"),
        "model": fields.get("model"),
        "logical_cpus": os.cpu_count(),
        "avx512f": "avx512f" in flags,
        "avx2": "avx2" in flags,
    }


def available_bytes():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return None


def time_point(heads, seq_len, batch, mask, threads, args):
    torch.set_num_threads(threads)
    point = {"heads": heads, "seqLen": seq_len, "batch": batch, "embedDim": E, "mask": mask,
             "threads": threads, "torch_threads": torch.get_num_threads()}
    # Both paths materialize the (B, H, L, L) scores and their softmax in float32.
    need = 2 * 4 * batch * heads * seq_len * seq_len
    free = available_bytes()
    if free is not None and need > 0.8 * free:
        point["skipped"] = f"needs about {need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB available"
        return point
    module = make_module(heads, args.seed)
    x = torch.rand(batch, seq_len, E, generator=torch.Generator().manual_seed(7)) * 2 - 1
    kwargs = mask_arguments(mask, batch, seq_len)

    def call():
        module(x, x, x, need_weights=False, **kwargs)

    with torch.inference_mode():
        point["path"] = PathProbe().run(call)
        start = time.perf_counter()
        call()
        first = time.perf_counter() - start
        if first > args.max_call_seconds:
            point["skipped"] = f"one call took {first:.1f} s > {args.max_call_seconds} s"
            return point
        warm_calls = 0
        warm_start = time.perf_counter()
        while warm_calls < 1 or time.perf_counter() - warm_start < args.warmup_seconds:
            call()
            warm_calls += 1
        per_call = (time.perf_counter() - warm_start) / warm_calls
        calls = max(1, math.ceil(args.rep_seconds / per_call))
        rep_ms = []
        for _ in range(args.reps):
            start = time.perf_counter()
            for _ in range(calls):
                call()
            rep_ms.append((time.perf_counter() - start) * 1e3 / calls)
    median = statistics.median(rep_ms)
    point.update({
        "warmup_calls": warm_calls,
        "calls_per_rep": calls,
        "rep_seconds_target": args.rep_seconds,
        "rep_ms": [round(v, 4) for v in rep_ms],
        "median_ms": round(median, 4),
        "gflops": round(flops(batch, seq_len, E) / (median * 1e-3) / 1e9, 2),
    })
    return point


def point_key(p):
    return (p["heads"], p["seqLen"], p["batch"], p["mask"], p["threads"])


def load_previous(path, fresh):
    if fresh or not os.path.exists(path):
        return {"meta": {}, "results": []}
    with open(path) as f:
        return json.load(f)


def debian_package_version(name):
    try:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return done.stdout.strip() or None


def print_table(results):
    grid = [r for r in results if r["batch"] == 1 and "gflops" in r]
    lengths = sorted({r["seqLen"] for r in grid})
    rows = sorted({(r["threads"], r["mask"], r["heads"]) for r in grid}, key=lambda k: (k[0], MASKS.index(k[1]), k[2]))
    by_key = {point_key(r): r for r in grid}
    print(f"\nnn.MultiheadAttention, E={E}, B=1: effective GFLOP/s (median ms per call)")
    print("threads  mask          heads " + "".join(f"{'L=' + str(L):>20}" for L in lengths))
    for threads, mask, heads in rows:
        cells = []
        for L in lengths:
            r = by_key.get((heads, L, 1, mask, threads))
            cells.append(f"{r['gflops']:8.1f} ({r['median_ms']:9.2f})" if r else f"{'-':>20}")
        print(f"{threads:>7}  {mask:<12} {heads:>6} " + "".join(f"{c:>20}" for c in cells))
    for r in sorted((r for r in results if r["batch"] != 1 and "gflops" in r), key=point_key):
        print(f"textbook B={r['batch']} L={r['seqLen']} H={r['heads']} mask={r['mask']} threads={r['threads']}: "
              f"{r['gflops']:.1f} GFLOP/s ({r['median_ms']:.3f} ms)")
    for r in results:
        if "skipped" in r:
            print(f"skipped H={r['heads']} L={r['seqLen']} B={r['batch']} mask={r['mask']} threads={r['threads']}: {r['skipped']}")


def main(argv):
    args = parse_args(argv)
    if not args.skip_check:
        torch.set_num_threads(1)
        self_check(args.seed)
    points = []
    if not args.textbook_only:
        points += [(h, L, 1, m, t) for t in args.threads for m in args.masks for h in args.heads for L in args.lengths]
    if args.textbook or args.textbook_only:
        batch, seq_len, heads = TEXTBOOK
        points += [(heads, seq_len, batch, m, t) for t in args.threads for m in args.masks]
    measured = []
    for heads, seq_len, batch, mask, threads in points:
        p = time_point(heads, seq_len, batch, mask, threads, args)
        measured.append(p)
        shown = f"{p['gflops']:.1f} GFLOP/s, {p['median_ms']:.3f} ms" if "gflops" in p else p["skipped"]
        print(f"H={heads} L={seq_len} B={batch} mask={mask} threads={threads}: {shown} [{p.get('path', '')}]", flush=True)
    out = os.path.normpath(args.out)
    fresh_keys = {point_key(p) for p in measured}
    previous = load_previous(out, args.fresh)
    results = [r for r in previous["results"] if point_key(r) not in fresh_keys] + measured
    results.sort(key=lambda r: (r["batch"], r["threads"], MASKS.index(r["mask"]), r["heads"], r["seqLen"]))
    meta = {
        "torch_version": torch.__version__,
        "debian_package": {"python3-torch": debian_package_version("python3-torch")},
        "torch_config": torch.__config__.show(),
        "mkldnn_available": torch.backends.mkldnn.is_available(),
        "mkl_available": torch.backends.mkl.is_available(),
        "openmp_available": torch.backends.openmp.is_available(),
        "is_causal_supported": "is_causal" in inspect.signature(torch.nn.MultiheadAttention.forward).parameters,
        "blas": blas_info(),
        "cpu": cpu_info(),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "numpy_version": np.__version__,
        "platform": platform.platform(),
        "env": {k: os.environ[k] for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE") if k in os.environ},
        "method": "one path-probe call and one timed call, then warm-up (>= --warmup-seconds and >= 1 call), then --reps repetitions of about --rep-seconds "
                  "(rep_ms per point); median over repetitions of the mean time per call; torch.inference_mode(), "
                  "need_weights=False, "
                  "self-attention (query, key and value are the same tensor); "
                  "GFLOP/s = (8*B*L*E^2 + 4*B*L^2*E) / median",
        "runs": previous["meta"].get("runs", []) + [{
            "command": " ".join([sys.executable] + sys.argv),
            "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }],
    }
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
        f.write("\n")
    print_table(results)
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
