#!/usr/bin/env python3
"""Judges one grey-failure scenario of scripts/postgres/grey-failures from what the harness wrote.

Inputs: the harness's JSON report, its --requests-file (one completed request a line: index, kind,
instance, seconds, latency from due and answer time in µs, class, answer) and the scenario's facts as
options. Prints one line of figures and the problems; exits 1 when there is any. The rules, for every
scenario:
  - the harness's audit: no assertion accepted twice (timed phase and settle), no wrong answer except,
    on an instance named by --skewed, a refusal with one of the time codes (its clock is off: it must
    refuse, with its own code, never accept what it should not);
  - fail closed within the deadline: every 503 or unanswered request on an affected instance got its
    answer within --deadline seconds of being sent (the store's deadline plus the margin given);
  - recovery: after the heal, the affected instances accept again within --recovery seconds (from the
    heal to the last 503 or unanswered request, with acceptances after it), without a restart;
  - the unaffected instances (--unaffected) keep serving: no 503 and no unanswered request, and their
    p99 while the fault lasted is reported (and bounded by --unaffected-p99-ms when given).
"""
import argparse
import json
import sys

TIME_CODES = ("time.", "in-response-to.expired", "in-response-to.not-outstanding")


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--report", required=True)
    parser.add_argument("--requests", required=True)
    parser.add_argument("--fault-at", type=float, required=True, help="seconds into the timed phase")
    parser.add_argument("--heal-at", type=float, required=True)
    parser.add_argument("--affected", default="", help="comma-separated host:port of the instances the fault reaches")
    parser.add_argument("--unaffected", default="")
    parser.add_argument("--skewed", default="", help="instances whose clock is off: time refusals allowed there")
    parser.add_argument("--deadline", type=float, default=3.0)
    parser.add_argument("--recovery", type=float, default=30.0)
    parser.add_argument("--unaffected-p99-ms", type=float)
    parser.add_argument("--expect-unavailable", action="store_true", help="the fault must make the affected instances fail closed")
    parser.add_argument("--harness-status", type=int, default=0)
    args = parser.parse_args()
    report = json.load(open(args.report))
    affected = set(filter(None, args.affected.split(",")))
    unaffected = set(filter(None, args.unaffected.split(",")))
    skewed = set(filter(None, args.skewed.split(",")))
    rows = []
    for line in open(args.requests):
        index, kind, target, at, latency, answer_time, klass, answer = line.rstrip("\n").split("\t")
        rows.append({"kind": kind, "target": target, "at": float(at),
                     "latency": None if latency == "-" else float(latency) / 1000,
                     "answer_ms": None if answer_time == "-" else float(answer_time) / 1000,
                     "class": klass, "answer": answer})
    problems = []
    if report["multiply_accepted"]:
        problems.append(f"expected no assertion accepted twice, found {report['multiply_accepted']}")
    # The settle phase re-posts every accepted response to every instance: one whose clock is behind
    # refuses it for its time before it could call it a replay. Allowed on skewed instances only, when
    # every described case is such a refusal (no assertion accepted twice is checked above).
    settle = [w for w in report["wrong_answers"] if w.startswith("settle")]
    settle_time = [w for w in settle if any(t in w for t in skewed) and "found 400 " in w and any(c in w for c in TIME_CODES)]
    if report["settle_wrong"] and not (skewed and settle and len(settle_time) == len(settle)):
        problems.append(f"expected the settle phase's re-posts refused as replays or accepted once, found {report['settle_wrong']} wrong: {settle[:3]}")
    for failure in report["failures"]:
        problems.append(f"harness: {failure}")
    wrong = [r for r in rows if r["class"] == "wrong"]
    time_refusals = [r for r in wrong if r["target"] in skewed and r["answer"].startswith("400 ")
                     and any(code in r["answer"] for code in TIME_CODES)]
    other_wrong = [r for r in wrong if r not in time_refusals]
    for r in other_wrong[:5]:
        problems.append(f"wrong answer on {r['target']} ({r['kind']}) at {r['at']:.2f} s: {r['answer']}")
    if len(other_wrong) > 5:
        problems.append(f"... {len(other_wrong) - 5} more wrong answers")
    if args.harness_status and not report["wrong"] and report["passed"]:
        problems.append(f"the harness exited {args.harness_status}")

    down = [r for r in rows if r["class"] == "unavailable"]
    slow = [r for r in down if r["answer_ms"] is not None and r["answer_ms"] > args.deadline * 1000]
    if slow:
        worst = max(r["answer_ms"] for r in slow)
        problems.append(f"expected every refusal within {args.deadline} s of its sending, found {len(slow)} later (worst {worst / 1000:.2f} s)")
    unanswered = [r for r in down if r["answer_ms"] is None or r["answer"] == "no answer"]
    # Every refusal for want of the store carries its stable codes: 503, service_unavailable, store.unavailable.
    uncoded = [r for r in down if r["answer"].startswith("503") and r["answer"] != "503 service_unavailable store.unavailable"]
    if uncoded:
        problems.append(f"expected every 503 to be service_unavailable store.unavailable, found {len(uncoded)} otherwise: {uncoded[0]['answer']}")
    for target in sorted(unaffected):
        mine = [r for r in down if r["target"] == target]
        if mine:
            problems.append(f"expected the unaffected instance {target} to keep serving, found {len(mine)} requests 503 or unanswered")
    if args.expect_unavailable and affected and not [r for r in down if r["target"] in affected]:
        problems.append("expected the fault to make the affected instances fail closed (503), found none refused")

    # Recovery: from the heal to the last 503 or unanswered request on an affected instance, which must
    # be followed by acceptances there.
    after_heal = [r for r in down if r["at"] >= args.heal_at and (not affected or r["target"] in affected)]
    last_down = max((r["at"] for r in after_heal), default=None)
    recovered_in = 0.0 if last_down is None else last_down - args.heal_at
    accepted_after = [r for r in rows if r["class"] == "accepted" and r["at"] > (last_down or args.heal_at)
                      and (not affected or r["target"] in affected or r["target"] in skewed)]
    if not accepted_after and rows:
        problems.append("expected acceptances after the heal, found none to the end of the run")
    if recovered_in > args.recovery:
        problems.append(f"expected recovery within {args.recovery} s of the heal, found {recovered_in:.1f} s")

    during = [r for r in rows if args.fault_at <= r["at"] < args.heal_at]
    figures = [f"{report['answered']} answers ({report['requests_per_second']:.0f}/s)",
               f"{len(down)} 503 or unanswered ({len(unanswered)} unanswered)",
               f"{len(time_refusals)} time refusals on skewed instances" if skewed else None,
               f"recovered {recovered_in:.2f} s after the heal"]
    for target in sorted(unaffected | affected):
        p99 = percentile([r["latency"] for r in during if r["target"] == target and r["latency"] is not None], 99)
        accepted = len([r for r in during if r["target"] == target and r["class"] == "accepted"])
        role = "unaffected" if target in unaffected else "affected"
        figures.append(f"{role} {target}: {accepted} accepted during the fault, p99 {p99:.1f} ms" if p99 is not None
                       else f"{role} {target}: no answer during the fault")
        if target in unaffected and args.unaffected_p99_ms and p99 is not None and p99 > args.unaffected_p99_ms:
            problems.append(f"expected the unaffected instance's p99 during the fault within {args.unaffected_p99_ms} ms, found {p99:.1f} ms")
    worst_refusal = max((r["answer_ms"] for r in down if r["answer_ms"] is not None), default=None)
    if worst_refusal is not None:
        figures.append(f"slowest 503 {worst_refusal / 1000:.2f} s after sending")
    print(f"{args.name}: " + "; ".join(f for f in figures if f))
    if problems:
        print(f"{args.name}: FAILED\n  " + "\n  ".join(problems))
        sys.exit(1)


if __name__ == "__main__":
    main()
