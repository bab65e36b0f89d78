"""The search bench's latency tables, with issue 34's speed targets and their verdicts."""

from __future__ import annotations

import statistics

from closed_loop import SideResult, percentiles, pooled
from search_queries import TWO_TERMS

# Issue 34: Groundwork's REST p50 at least this many times as fast as the peer's (the peer's p50 ÷ Groundwork's).
SPEED_TARGETS = {"two rare terms": 0.7, "a common and a mid term": 5.0, "one very common term": 30.0}
# The frequent shapes, where Groundwork's p99 must be lower than the peer's.
FREQUENT = ("a common and a mid term", "one very common term")
# A question's p50 at most this many times a two-term query's (the common and the mid term: a question's words
# are such words, with one or two more and stopwords).
QUESTION_TARGET = 2.0


def verdict(measured: float, target: float, at_least: bool) -> str:
    """ "met", or by how much a target is missed (as a share of the target)."""
    if (measured >= target) if at_least else (measured <= target):
        return "met"
    return f"**missed by {abs(measured - target) / target:.0%}**"


def p50_ratios(rounds: list[dict[str, SideResult]], numerator: str, denominator: str) -> list[float]:
    """Each round's p50 of one side divided by another's."""
    return [percentiles(one[numerator].samples)[0] / percentiles(one[denominator].samples)[0] for one in rounds]


SIDES = ("REST", "peer", "service", "Tantivy")
GROUPS = ("bench", "Groundwork API", "peer", "PostgreSQL")


def report(
    results: dict[tuple[str, int], dict[str, SideResult]],
    rounds: dict[tuple[str, int], list[dict[str, SideResult]]],
    loads: dict[tuple[str, int], tuple[float, float]],
    workers: int,
) -> None:
    """The latency tables: every figure, the targets' ratios (per round and their median) and verdicts, the CPU
    per query."""
    p = {key: {side: percentiles(r.samples) for side, r in row.items()} for key, row in results.items()}
    passes = len(next(iter(rounds.values())))
    print(f"\nAll figures, p50 / p99 in ms over the {passes} rounds (load: 1-minute average before / after):\n")
    print("| query shape | concurrency | load | REST | peer | service | Tantivy |")
    print("|---|---:|---|---|---|---|---|")
    for key, row in p.items():
        cells = " | ".join(f"{row[s][0]:.2f} / {row[s][1]:.2f}" for s in SIDES)
        print(f"| {key[0]} | {key[1]} | {loads[key][0]:.2f} / {loads[key][1]:.2f} | {cells} |")
    print(f"\nIssue 34's targets, REST (`groundwork serve --workers {workers}`) against the peer (same server);")
    print("the p50 ratio is the median of the rounds' ratios, p50 and p99 are over every round:\n")
    print(
        "| query shape | concurrency | REST p50 | peer p50 | peer ÷ REST per round | median (target) | p50 target"
        " | p99 REST / peer | p99 target |"
    )
    print("|---|---:|---:|---:|---|---:|---|---|---|")
    for (shape, concurrency), row in p.items():
        ours, theirs = row["REST"], row["peer"]
        each = p50_ratios(rounds[(shape, concurrency)], "peer", "REST")
        ratio = statistics.median(each)
        per_round = ", ".join(f"{r:.2f}x" for r in each)
        if shape in SPEED_TARGETS:
            speed = f"{ratio:.2f}x (≥ {SPEED_TARGETS[shape]:g}x)"
            speed_verdict = verdict(ratio, SPEED_TARGETS[shape], at_least=True)
        else:
            speed, speed_verdict = f"{ratio:.2f}x", "(none)"
        tail = "lower: met" if ours[1] < theirs[1] else "**not lower: missed**"
        if shape not in FREQUENT:
            tail = "(none: " + ("lower" if ours[1] < theirs[1] else "not lower") + ")"
        print(
            f"| {shape} | {concurrency} | {ours[0]:.2f} ms | {theirs[0]:.2f} ms | {per_round} | {speed} |"
            f" {speed_verdict} | {ours[1]:.2f} / {theirs[1]:.2f} ms | {tail} |"
        )
    if {shape for shape, _ in p} >= {"a question", TWO_TERMS, "two rare terms"}:  # all timed (not --only-shape)
        question_table(p)
    print("\nThe layers (p50): the service over raw Tantivy, the HTTP server over the service:\n")
    print("| query shape | concurrency | service ÷ Tantivy | REST - service |")
    print("|---|---:|---:|---:|")
    for (shape, concurrency), row in p.items():
        print(
            f"| {shape} | {concurrency} | {row['service'][0] / row['Tantivy'][0]:.2f} |"
            f" {row['REST'][0] - row['service'][0]:+.2f} ms |"
        )
    print("\nCPU per query (ms; bench = this process: the HTTP client for REST and peer, the search itself for")
    print("service and Tantivy; the peer's and Groundwork's API processes; PostgreSQL with its workers):\n")
    print("| query shape | concurrency | " + " | ".join(SIDES) + " |")
    print("|---|---:|" + "---|" * len(SIDES))
    for (shape, concurrency), sides in results.items():
        per_side: list[str] = []
        for side in SIDES:
            n = len(sides[side].samples)
            cpu = sides[side].cpu
            per_side.append(
                ", ".join(f"{g} {cpu[g] * 1000 / n:.2f}" for g in GROUPS if cpu[g] * 1000 / n >= 0.05) or "0"
            )
        print(f"| {shape} | {concurrency} | " + " | ".join(per_side) + " |")
    answered = {s: sum(row[s].answered for row in results.values()) for s in SIDES}
    asked = {s: sum(len(row[s].samples) for row in results.values()) for s in SIDES}
    print("\nTimed answers holding passages: " + ", ".join(f"{s} {answered[s]:,}/{asked[s]:,}" for s in SIDES))


def question_table(p: dict[tuple[str, int], dict[str, tuple[float, float]]]) -> None:
    """A question's p50 against each two-term shape's, from the shapes timed one after the other."""
    print(f"\nQuestions against two-term queries, p50 (target: a question ≤ {QUESTION_TARGET:g}x {TWO_TERMS}):\n")
    print("| side | concurrency | question p50 | ÷ a common and a mid term | target | ÷ two rare terms |")
    print("|---|---:|---:|---:|---|---:|")
    for side in ("REST", "service", "Tantivy", "peer"):
        for concurrency in (1, 16):
            question = p[("a question", concurrency)][side][0]
            pair = question / p[(TWO_TERMS, concurrency)][side][0]
            rare = question / p[("two rare terms", concurrency)][side][0]
            mark = verdict(pair, QUESTION_TARGET, at_least=False) if side == "REST" else "(REST's alone)"
            print(f"| {side} | {concurrency} | {question:.2f} ms | {pair:.2f}x | {mark} | {rare:.2f}x |")


def question_turns_report(turns: dict[int, list[dict[str, SideResult]]], loads: dict[int, tuple[float, float]]) -> None:
    """A question's p50 against a common and a mid term's, the two shapes timed in turns, in rounds: the ratio
    of each round, and their median as the verdict."""
    print(f"\nA question against {TWO_TERMS}, the two shapes taking turns (target: ≤ {QUESTION_TARGET:g}x, REST;")
    print("p50 and p99 over every round, the ratio the median of the rounds' ratios):\n")
    print(
        "| side | concurrency | load | two-term p50 / p99 | question p50 / p99 | question ÷ two-term per round"
        " | median | target |"
    )
    print("|---|---:|---|---:|---:|---|---:|---|")
    for concurrency, each in turns.items():
        p = {name: percentiles(r.samples) for name, r in pooled(each).items()}
        for side in ("REST", "service", "Tantivy"):
            two, question = p[f"{side} two-term"], p[f"{side} question"]
            ratios = p50_ratios(each, f"{side} question", f"{side} two-term")
            ratio = statistics.median(ratios)
            mark = verdict(ratio, QUESTION_TARGET, at_least=False) if side == "REST" else "(REST's alone)"
            load = "{:.2f} / {:.2f}".format(*loads[concurrency])
            print(
                f"| {side} | {concurrency} | {load} | {two[0]:.2f} / {two[1]:.2f} ms |"
                f" {question[0]:.2f} / {question[1]:.2f} ms | {', '.join(f'{r:.2f}x' for r in ratios)} |"
                f" {ratio:.2f}x | {mark} |"
            )
