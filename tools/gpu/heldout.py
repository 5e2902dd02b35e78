#!/usr/bin/env python3
"""Selection at sizes nobody tuned (issue 29, item 5): for each library kernel and held-out size,
the time of the configuration kw selects from the shipped wisdom (embedded), of the one Kernel
Launcher's rule picks (the record with the nearest problem size, Euclidean), and of the best kw
tune finds at that size (--budget 100 --time 15s, confirmed); fraction = best / chosen.
The distinct configurations of the three are then timed again, taking turns, ROUNDS (5) rounds
of `kw bench --config C --runs 50`, and their medians compared: a kernel of 10 us varies by a
few percent from one `kw bench` to the next, and the same configuration must score 1.000.
With KW_HELDOUT_BEST_FROM=FILE (an earlier output of this script), the best configuration of a
size that FILE lists is taken from it instead of tuning again.
With KW_HELDOUT_ONLINE=1, a fourth column: what online tuning (KW_TUNE=online) finds at the size,
`kw tune` of the size's capture with the online job's settings (32 evaluations, 10 s of device
time, one warm-up and one sample per candidate) and its priors (the shipped records); its share
cap only adds pauses and is left out. KW_HELDOUT_TUNE_ARGS: more arguments for that `kw tune`
(e.g. "--prior-settings local=8"), for experiments.
Usage: heldout.py KW WISDOM_DIR OUT KERNEL:SIZE[,SIZE...] ...  (tools/gpu.sh heldout runs it)"""
import json, math, os, re, shutil, statistics, subprocess, sys, time

kw, wisdom_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
ROUNDS = int(os.environ.get("KW_HELDOUT_ROUNDS", "5"))
ONLINE = os.environ.get("KW_HELDOUT_ONLINE") == "1"
known_best = {}
if os.environ.get("KW_HELDOUT_BEST_FROM"):
    for line in open(os.environ["KW_HELDOUT_BEST_FROM"]):
        parts = line.split(" | ")
        if len(parts) >= 4 and " " in parts[0]:
            found = re.search(r"\{([^}]*)\}", parts[3])
            if found:
                known_best[parts[0].strip()] = found.group(1)
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
    if kernel == "hotspot":  # NXxNYxITERATIONS: problem size (nx, ny)
        return dims[:2]
    if kernel == "convolution":  # WIDTHxHEIGHTxFWxFH: problem size (width, height, fw * fh)
        return [dims[0], dims[1], dims[2] * dims[3]]
    return dims

def kl_config(kernel, ps, device):
    recs = json.load(open(f"{wisdom_dir}/kw_{kernel}.json"))["records"]
    recs = [r for r in recs if r["device"]["name"] == device] or recs
    best = min(recs, key=lambda r: math.dist(r["problem_size"], ps))
    return ",".join(f"{k}={v}" for k, v in best["config"].items()), best["problem_size"]

def report(kernel, size, sel, kl, klps, best, online=None):
    if best is None or kl is None:
        return
    rows = [sel, kl, best] + ([online] if online else [])
    b = min(r["ms"] for r in rows)  # the best known at this size
    extra = ""
    if online:
        extra = (f" | online: {online['ms']:.4f} {{{online['config']}}} after {online['evaluations']} "
                 f"evaluations, {online['wall_s']:.1f} s, best/online {b / online['ms']:.3f}")
    say(f"{kernel} {size} | {sel['ms']:.4f} {sel['selection_step']} {{{sel['config']}}} | "
        f"{kl['ms']:.4f} (record {klps}) | {best['ms']:.4f} {{{best['config']}}} | "
        f"{b / sel['ms']:.3f} {b / kl['ms']:.3f}  verified {'/'.join(str(r['verified']) for r in rows)}{extra}")
    # Again, taking turns: the medians of ROUNDS runs of each distinct configuration.
    configs = {c: [] for c in dict.fromkeys([r["config"] for r in rows])}
    for _ in range(ROUNDS):
        for c in configs:
            row = bench(kernel, size, ["--config", c, "--runs", "50"])
            if row is not None:
                configs[c].append(row["ms"])
    med = {c: statistics.median(v) for c, v in configs.items() if v}
    if len(med) < len(configs):
        return
    b = min(med.values())
    tail = ""
    if online:
        tail = f" online {med[online['config']]:.4f} ms, best/online {b / med[online['config']]:.3f}"
    say(f"  taking turns ({ROUNDS} rounds, medians): kw {med[sel['config']]:.4f} KL {med[kl['config']]:.4f} "
        f"best {med[best['config']]:.4f} ms | best/kw {b / med[sel['config']]:.3f} best/KL {b / med[kl['config']]:.3f}{tail}")

def tune_hotspot(nx, ny, out_dir):
    t1 = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "library", "hotspot_T1.json")))
    t1["KernelSpecification"]["ProblemSize"] = [nx, ny]
    for a in t1["KernelSpecification"]["Arguments"]:
        if a["Name"] == "nx": a["FillValue"] = nx
        if a["Name"] == "ny": a["FillValue"] = ny
    shutil.rmtree(out_dir, ignore_errors=True)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "library", f"hotspot_{nx}x{ny}.json")
    json.dump(t1, open(path, "w"), indent=1)
    r = subprocess.run([kw, "tune", "--t1", path, "--no-verify", "--maximize", "--objective-name", "Gcell-steps/s",
                        "--objective", "problem_size.x * problem_size.y * temporal_tiling_factor / (time * 1e6)",
                        "--budget", "100", "--time", "30s", "--wisdom-dir", out_dir],
                       env=env, capture_output=True, text=True, timeout=300)
    os.remove(path)
    if r.returncode != 0:
        say("  hotspot T1 tuning FAILED:", r.stderr.strip()[-400:])
        return False
    return True

def capture(kernel, size):
    caps = f"{work}/caps-{kernel}-{size}"
    e = dict(env, KW_CAPTURE=f"kw_{kernel}", KW_CAPTURE_DIR=caps)
    if not (os.path.isdir(caps) and any(f.endswith(".kwcap") for f in os.listdir(caps))):
        bench(kernel, size, ["--runs", "1"], e)
    cap = [f"{caps}/{f}" for f in os.listdir(caps) if f.endswith(".kwcap")] if os.path.isdir(caps) else []
    return cap[0] if cap else None

def online_tune(kernel, size, cap):
    """The online job's `kw tune` (crates/kernel-wisdom/src/online/job.rs) without its share cap."""
    out_dir = f"{work}/online-{kernel}-{size}"
    shutil.rmtree(out_dir, ignore_errors=True)  # an earlier run's record would be a prior
    began = time.time()
    r = subprocess.run([kw, "tune", cap, "--budget", "32", "--max-device-time", "10s", "--time", "300s",
                        "--warmup", "1", "--samples", "1", "--wisdom-dir", out_dir]
                       + os.environ.get("KW_HELDOUT_TUNE_ARGS", "").split(),
                       env=env, capture_output=True, text=True, timeout=400)
    wall = time.time() - began
    priors = [l for l in r.stderr.splitlines() if "prior:" in l]
    if priors:
        say("  online tuning:", priors[0].strip())
    row = bench(kernel, size, e=dict(env, KW_WISDOM_PATH=out_dir))
    if row is None or r.returncode != 0:
        say("  online tuning FAILED:", r.stderr.strip()[-400:])
        return None
    evaluations = "?"
    try:
        recs = json.load(open(f"{out_dir}/kw_{kernel}.json"))["records"]
        evaluations = recs[0]["provenance"]["evaluations"]
    except Exception:
        pass
    return dict(row, evaluations=evaluations, wall_s=wall)

say("kernel size | kw selection: ms, step | Kernel Launcher's rule: ms, record | best (tuned here): ms | best/kw best/KL"
    + (" | online: ms, configuration, evaluations, wall time, best/online" if ONLINE else ""))
for spec in sys.argv[4:]:
    kernel, sizes = spec.split(":")
    for size in sizes.split(","):
        dims = [int(v) for v in size.split("x")]
        ps = problem_size(kernel, dims)
        sel = bench(kernel, size)
        if sel is None:
            continue
        device = os.environ.get("KW_HELDOUT_DEVICE", "NVIDIA H100 80GB HBM3")
        klc, klps = kl_config(kernel, ps, device)
        kl = bench(kernel, size, ["--config", klc])
        if kernel == "hotspot" and f"{kernel} {size}" not in known_best:
            # Not capturable (the routine launches its configuration explicitly): tuned
            # through its T1 file at this grid, as its shipped records were.
            tuned = f"{work}/tuned-{kernel}-{size}"
            if not tune_hotspot(dims[0], dims[1], tuned):
                continue  # no best known: no fraction
            best = bench(kernel, size, e=dict(env, KW_WISDOM_PATH=tuned))
            report(kernel, size, sel, kl, klps, best)
            continue
        need_capture = ONLINE or f"{kernel} {size}" not in known_best
        cap = capture(kernel, size) if need_capture else None
        online = online_tune(kernel, size, cap) if ONLINE and cap else None
        if f"{kernel} {size}" in known_best:
            best = bench(kernel, size, ["--config", known_best[f"{kernel} {size}"]])
            report(kernel, size, sel, kl, klps, best, online)
            continue
        # The best at this size: tune the capture, time the tuned record.
        tuned = f"{work}/tuned-{kernel}-{size}"
        shutil.rmtree(tuned, ignore_errors=True)
        if not cap:
            say(f"  {kernel} {size}: no capture: no best known, no fraction")
            continue
        if cap:
            subprocess.run([kw, "tune", cap, "--budget", "100", "--time", "15s", "--wisdom-dir", tuned],
                           env=env, capture_output=True, timeout=200)
        best = bench(kernel, size, e=dict(env, KW_WISDOM_PATH=tuned))
        report(kernel, size, sel, kl, klps, best, online)
