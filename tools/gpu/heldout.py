#!/usr/bin/env python3
"""Selection at sizes nobody tuned (issue 29, item 5): for each library kernel and held-out size,
the time of the configuration kw selects from the shipped wisdom (embedded), of the one Kernel
Launcher's rule picks (the record with the nearest problem size, Euclidean), and of the best kw
tune finds at that size (--budget 100 --time 15s, confirmed); fraction = best / chosen.
Usage: heldout.py KW WISDOM_DIR OUT KERNEL:SIZE[,SIZE...] ...  (tools/gpu.sh heldout runs it)"""
import json, math, os, subprocess, sys

kw, wisdom_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
work = "/tmp/heldout"
os.makedirs(work, exist_ok=True)
env = dict(os.environ, KW_CACHE_DIR=work + "/cache", KW_USER_WISDOM_DIR=work + "/uw",
           KW_STATE_DIR=work + "/st")
log = open(out, "a")

def say(*a):
    line = " ".join(str(x) for x in a)
    print(line, flush=True)
    log.write(line + "\n"); log.flush()

def bench(kernel, size, extra=(), e=None):
    runs = [] if "--runs" in extra else ["--runs", "20"]
    cmd = [kw, "bench", kernel, "--size", size, "--json", *runs, *extra]
    r = subprocess.run(cmd, env=e or env, capture_output=True, text=True, timeout=300)
    rows = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0 or not rows:
        say("  FAILED:", " ".join(cmd), r.stderr.strip()[-400:])
        return None
    return rows[0]

def problem_size(kernel, dims):
    if kernel == "transpose":
        return [dims[1], dims[0]]
    if kernel == "convolution":  # WIDTHxHEIGHTxFWxFH: problem size (width, height, fw * fh)
        return [dims[0], dims[1], dims[2] * dims[3]]
    return dims

def kl_config(kernel, ps, device):
    recs = json.load(open(f"{wisdom_dir}/kw_{kernel}.json"))["records"]
    recs = [r for r in recs if r["device"]["name"] == device]
    best = min(recs, key=lambda r: math.dist(r["problem_size"], ps))
    return ",".join(f"{k}={v}" for k, v in best["config"].items()), best["problem_size"]

say("kernel size | kw selection: ms, step | Kernel Launcher's rule: ms, record | best (tuned here): ms | best/kw best/KL")
for spec in sys.argv[4:]:
    kernel, sizes = spec.split(":")
    for size in sizes.split(","):
        dims = [int(v) for v in size.split("x")]
        ps = problem_size(kernel, dims)
        sel = bench(kernel, size)
        if sel is None:
            continue
        device = "NVIDIA H100 80GB HBM3"
        klc, klps = kl_config(kernel, ps, device)
        kl = bench(kernel, size, ["--config", klc])
        # The best at this size: capture, tune, time the tuned record.
        caps = f"{work}/caps-{kernel}-{size}"
        e = dict(env, KW_CAPTURE=f"kw_{kernel}", KW_CAPTURE_DIR=caps)
        bench(kernel, size, ["--runs", "1"], e)
        cap = [f"{caps}/{f}" for f in os.listdir(caps) if f.endswith(".kwcap")] if os.path.isdir(caps) else []
        tuned = f"{work}/tuned-{kernel}-{size}"
        if cap:
            subprocess.run([kw, "tune", cap[0], "--budget", "100", "--time", "15s", "--wisdom-dir", tuned],
                           env=env, capture_output=True, timeout=200)
        best = bench(kernel, size, e=dict(env, KW_WISDOM_PATH=tuned))
        if best is None or kl is None:
            continue
        b = min(best["ms"], sel["ms"], kl["ms"])  # the best known at this size
        say(f"{kernel} {size} | {sel['ms']:.4f} {sel['selection_step']} {{{sel['config']}}} | "
            f"{kl['ms']:.4f} (record {klps}) | {best['ms']:.4f} {{{best['config']}}} | "
            f"{b / sel['ms']:.3f} {b / kl['ms']:.3f}  verified {sel['verified']}/{kl['verified']}/{best['verified']}")
