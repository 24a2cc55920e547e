#!/usr/bin/env python3
"""CPU time by process over a load harness's timed phase, per accepted login (scripts/bench/store-bench).

  cpu-by-process.py sample OUT GROUP...    every 50 ms, append one JSON line to OUT: the wall clock and
                                          the CPU seconds (user + system) of each group, until SIGTERM
      GROUP is NAME=PID[,PID...]          those processes (the service's instances), or
               NAME=postgres:DATADIR      a PostgreSQL node: its postmaster (with the children it has
                                          reaped) and every child, split by role from the process title:
                                          NAME backends, NAME walsender, NAME walreceiver, NAME startup
                                          (recovery), NAME other (checkpointer, walwriter, autovacuum...)
  cpu-by-process.py report SAMPLES LOAD_JSON
                                          print one JSON object: each group's CPU over the harness's timed
                                          phase (from timed_started_unix_s for timed_seconds, interpolated
                                          between samples) in microseconds per accepted login, the same
                                          over the whole sampled run (its untimed phase too: sessions/sso
                                          for each request, the replays' settling), and the logins
                                          accepted (the timeline's "accepted")

Reads /proc only; a process that exits during the phase counts through its parent's reaped-children
time (cutime, cstime), so nothing a node did is lost.
"""
import json
import os
import signal
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(ppid, own CPU seconds, reaped children's CPU seconds) or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    # After the command: state ppid ... utime(12) stime(13) cutime(14) cstime(15), counted from state = 0.
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK, (int(fields[13]) + int(fields[14])) / TICK


def title(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def role(process_title):
    for name in ("walsender", "walreceiver", "startup"):
        if f"postgres: {name}" in process_title:
            return name
    # A client backend's title: "postgres: USER DATABASE HOST(PORT) STATE".
    return "backends" if "(" in process_title and ")" in process_title else "other"


def postmaster(datadir):
    with open(os.path.join(datadir, "postmaster.pid")) as f:
        return int(f.readline())


def measure(groups):
    totals = {}
    children = {}
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        s = stat(pid)
        if s:
            children.setdefault(s[0], []).append((pid, s[1]))
    for name, spec in groups:
        if spec.startswith("postgres:"):
            try:
                root = postmaster(spec[len("postgres:"):])
            except (OSError, ValueError):
                continue
            s = stat(root)
            if not s:
                continue
            totals[f"{name} other"] = totals.get(f"{name} other", 0) + s[1] + s[2]
            for child, cpu in children.get(root, []):
                key = f"{name} {role(title(child))}"
                totals[key] = totals.get(key, 0) + cpu
        else:
            totals[name] = sum((stat(int(pid)) or (0, 0, 0))[1] for pid in spec.split(","))
    return totals


def sample(out, specs):
    groups = [tuple(spec.split("=", 1)) for spec in specs]
    running = True

    def stop(*_):
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)
    with open(out, "a") as f:
        while running:
            f.write(json.dumps({"t": time.time(), "cpu": measure(groups)}) + "\n")
            f.flush()
            time.sleep(0.05)


def at(samples, instant, key):
    """A group's CPU seconds at an instant, interpolated between the samples around it."""
    before = max((s for s in samples if s["t"] <= instant), key=lambda s: s["t"], default=samples[0])
    after = min((s for s in samples if s["t"] >= instant), key=lambda s: s["t"], default=samples[-1])
    a, b = before["cpu"].get(key, 0), after["cpu"].get(key, 0)
    if after["t"] == before["t"]:
        return a
    return a + (b - a) * (instant - before["t"]) / (after["t"] - before["t"])


def report(samples_path, load_path):
    samples = [json.loads(line) for line in open(samples_path) if line.strip()]
    load = json.load(open(load_path))
    start = load["timed_started_unix_s"]
    end = start + load["timed_seconds"]
    accepted = sum(bucket["accepted"] for bucket in load["timeline"]["buckets"])
    keys = sorted({key for s in samples for key in s["cpu"]})
    per_login = {key: (at(samples, end, key) - at(samples, start, key)) * 1e6 / max(accepted, 1) for key in keys}
    whole = {key: (samples[-1]["cpu"].get(key, 0) - samples[0]["cpu"].get(key, 0)) * 1e6 / max(accepted, 1) for key in keys}
    print(json.dumps({"accepted": accepted, "us_per_login": per_login, "us_per_login_whole_run": whole}))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "sample":
        sample(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
