"""Build a large Kineto trace by repeating a real one with shifted timestamps
and correlation ids, for import throughput / memory benchmarks.

    python3 scripts/make_big_trace.py testdata/gpu/llm.json.gz OUT.json --min-mb 1024
"""
import argparse
import gzip
import json
import os


def main():
    p = argparse.ArgumentParser()
    p.add_argument("src")
    p.add_argument("out")
    p.add_argument("--min-mb", type=int, default=1024)
    a = p.parse_args()
    opener = gzip.open if a.src.endswith(".gz") else open
    with opener(a.src, "rt") as f:
        d = json.load(f)
    evs = d.pop("traceEvents")
    ts = [e["ts"] for e in evs if isinstance(e.get("ts"), (int, float))]
    span = max(ts) - min(ts) + 1000.0
    with open(a.out, "w") as out:
        head = json.dumps(d)[:-1]
        out.write(head + ', "traceEvents": [\n')
        k, first = 0, True
        while True:
            for e in evs:
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = round(e2["ts"] + k * span, 3)
                args = e2.get("args")
                if isinstance(args, dict):
                    args = dict(args)
                    for key in ("correlation", "External id"):
                        if isinstance(args.get(key), int):
                            args[key] += k * 10_000_000
                    e2["args"] = args
                if e2.get("ph") in ("s", "f") and isinstance(e2.get("id"), int):
                    e2["id"] += k * 10_000_000
                out.write(("" if first else ",\n") + json.dumps(e2))
                first = False
            k += 1
            if out.tell() >= a.min_mb * 1024 * 1024:
                break
        out.write("\n]}\n")
    print("%s: %d copies, %.0f MB" % (a.out, k, os.path.getsize(a.out) / 2**20))


if __name__ == "__main__":
    main()
