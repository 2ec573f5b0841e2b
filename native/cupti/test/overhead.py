"""Warm A/B timing for the CUPTI collector: imports a planted workload, warms
up CUDA, then times N repetitions and prints the median in ms as
`OVH <name> <median_ms> <min_ms>`. Run it bare and under CUDA_INJECTION64_PATH."""
import statistics, sys, time
sys.path.insert(0, "workloads")
import torch, planted
name, iters, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = planted.WORKLOADS[name]
f("cuda", 1); torch.cuda.synchronize()
ts = []
for _ in range(reps):
    t0 = time.perf_counter(); f("cuda", iters); torch.cuda.synchronize()
    ts.append((time.perf_counter() - t0) * 1e3)
print("OVH %s %.2f %.2f" % (name, statistics.median(ts), min(ts)))
