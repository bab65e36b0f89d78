"""Issue 36's briefing evaluation: score a running demo stack against bench/quality/briefing_questions.jsonl.

Asks every question of `POST /api/v1/context/query` (project or engagement subject) with a key holding every
scope, and reports:

- **precision@3**: of a briefing's best three claims (by `relevance`; section order before it existed), the
  share that is an expected package (same project, an accepted type, one of its phrases in the claim's text),
  averaged over the questions with expected packages that got claims. `strict` counts only the record's
  `contribution_type`, `lenient` also its `also_types`. Also given over every such question with an empty
  briefing counted as 0, and divided by 3 whatever the number of claims (TREC's P@3).
- **recall**: expected packages found among all the claims.
- **none questions answered `no_evidence`** (before `answer` existed: answered with no claim).
- **claims dated from their document**: of the claims citing passages, the share whose every passage (opened
  through `GET /api/v1/context/passages/{id}`) has a `documentDateSource` other than `ingestion`.
- **sticky packages**: a package in the top 3 of more than a third of one project's questions without answering
  them (the target is none).

Only HTTP: it imports nothing of Groundwork. Run by hand (never in the test suite); results go to bench/README.md.

    groundwork up --demo --data-dir /tmp/demo ...        # in another shell; it prints the demo admin key
    .venv/bin/python bench/briefing_check.py --api-url http://127.0.0.1:8000 --key gw_...
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import httpx

DATA = Path(__file__).resolve().parent / "quality" / "briefing_questions.jsonl"
SECTIONS = ("findings", "risks", "blockers")
TOP = 3


def normalise(text: str) -> str:
    """Lower case, Markdown emphasis and code marks dropped, whitespace collapsed."""
    return re.sub(r"\s+", " ", text.replace("**", "").replace("`", "")).strip().lower()


def matches(expected: dict[str, Any], claim: dict[str, Any], project_key: str, lenient: bool) -> bool:
    """Whether a claim of the briefing is the expected package."""
    types = {expected["contribution_type"], *(expected.get("also_types", []) if lenient else [])}
    text = normalise(claim["text"])
    return (
        project_key == expected["project"]
        and claim["contributionType"] in types
        and any(normalise(phrase) in text for phrase in expected["phrases"])
    )


def ranked_claims(answer: dict[str, Any]) -> list[dict[str, Any]]:
    """The briefing's claims best first: by `relevance` (ties in section order), else in section order."""
    claims = [(s, i, c) for s, section in enumerate(SECTIONS) for i, c in enumerate(answer[section])]
    claims.sort(key=lambda x: (-float(x[2].get("relevance", 0.0)), x[0], x[1]))
    return [c for _, _, c in claims]


class Passages:
    """Opens cited passages once each and says whether their source is dated from the document itself."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http
        self.dated: dict[str, bool] = {}

    def document_dated(self, passage_id: str) -> bool:
        """Whether the passage's source states its own date (False when the route does not exist yet)."""
        if passage_id not in self.dated:
            response = self.http.get(f"/api/v1/context/passages/{passage_id}")
            source = response.json().get("data", {}).get("source", {}) if response.status_code == 200 else {}
            self.dated[passage_id] = source.get("documentDateSource", "ingestion") != "ingestion"
        return self.dated[passage_id]


def main() -> None:
    """Ask every question; print a Markdown table per question, then the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--api-url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", required=True, help="an API key of the demo admin (every scope)")
    parser.add_argument("--json", type=Path, help="also write every briefing to this file")
    args = parser.parse_args()
    records = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    answers: dict[str, Any] = {}
    with httpx.Client(base_url=args.api_url, headers={"Authorization": f"Bearer {args.key}"}, timeout=60) as http:
        projects = http.get("/api/v1/projects").raise_for_status().json()["data"]
        keys = {p["id"]: p["key"] for p in projects}
        ids = {p["key"]: p["id"] for p in projects}
        engagements = {p["engagement"]["name"]: p["engagement"]["id"] for p in projects}
        passages = Passages(http)
        print("| id | kind | answer | top 3 right (strict / lenient) | expected found | claims | missing |")
        print("|---|---|---|---:|---:|---:|---|")
        precision: dict[str, list[float]] = {"strict": [], "lenient": [], "with_empty": [], "trec": []}
        found_total = found_lenient = expected_total = none_right = none_total = wrong_abstain = 0
        corpus_claims = dated_claims = 0
        top_packages: dict[str, Counter[str]] = defaultdict(Counter)
        questions_of: Counter[str] = Counter()
        texts: dict[str, str] = {}
        for record in records:
            subject = record["subject"]
            body: dict[str, Any] = {"question": record["question"]}
            if subject["type"] == "project":
                body["project_id"] = ids[subject["project"]]
                questions_of[subject["project"]] += 1
            else:
                body["subject_ref"] = {"type": "engagement", "id": engagements[subject["engagement"]]}
            answer = http.post("/api/v1/context/query", json=body).raise_for_status().json()["data"]
            answers[record["id"]] = answer
            claims = ranked_claims(answer)
            status = answer.get("answer", "no_evidence" if not claims else "answered")
            top = claims[:TOP]
            for claim in claims:
                refs = [r["reference"]["id"] for r in claim["evidenceRefs"] if r["reference"]["kind"] == "passage"]
                if refs:
                    corpus_claims += 1
                    dated_claims += all(passages.document_dated(r) for r in refs)
            if record["expected"] == "none":
                none_total += 1
                none_right += status == "no_evidence" and not claims
                right = (0, 0)
                found = (0, 0)
                wanted = 0
                answered = set()
            else:
                expected = record["expected"]
                wanted = len(expected)

                def hit(claim: dict[str, Any], lenient: bool, expected: list[dict[str, Any]] = expected) -> bool:
                    return any(matches(e, claim, keys.get(claim["projectId"], ""), lenient) for e in expected)

                right = (sum(hit(c, False) for c in top), sum(hit(c, True) for c in top))
                found = (
                    sum(any(matches(e, c, keys.get(c["projectId"], ""), False) for c in claims) for e in expected),
                    sum(any(matches(e, c, keys.get(c["projectId"], ""), True) for c in claims) for e in expected),
                )
                answered = {c["packageId"] for c in claims if hit(c, True)}
                if top:
                    precision["strict"].append(right[0] / len(top))
                    precision["lenient"].append(right[1] / len(top))
                else:
                    wrong_abstain += 1
                precision["with_empty"].append(right[1] / len(top) if top else 0.0)
                precision["trec"].append(right[1] / TOP)
                found_total, found_lenient = found_total + found[0], found_lenient + found[1]
                expected_total += wanted
            if subject["type"] == "project":
                for claim in top:
                    texts[claim["packageId"]] = f"{claim['contributionType']}: {claim['text'][:90]}"
                    if claim["packageId"] not in answered:
                        top_packages[subject["project"]][claim["packageId"]] += 1
            missing = ", ".join(answer["coverage"]["missing"])
            print(
                f"| {record['id']} | {record['kind']} | {status} | {right[0]} / {right[1]} of {len(top)}"
                f" | {found[0]}/{wanted} | {len(claims)} | {missing} |"
            )
    if args.json:
        args.json.write_text(json.dumps(answers, indent=1, ensure_ascii=False), encoding="utf-8")

    def mean(values: list[float]) -> str:
        return f"{sum(values) / len(values):.3f} ({len(values)} questions)" if values else "n/a"

    print()
    print(
        f"precision@3, questions with claims: strict {mean(precision['strict'])}, lenient {mean(precision['lenient'])}"
    )
    print(f"precision@3, an empty briefing counted as 0 (lenient): {mean(precision['with_empty'])}")
    print(f"precision@3 over 3 slots (TREC, lenient): {mean(precision['trec'])}")
    print(f"questions with expected packages answered with no claim: {wrong_abstain}")
    print(f"recall: {found_total} of {expected_total} expected packages (lenient {found_lenient})")
    print(f"none questions answered no_evidence: {none_right} of {none_total}")
    share = f"{dated_claims / corpus_claims:.0%}" if corpus_claims else "n/a"
    print(f"claims citing passages dated from their document: {dated_claims} of {corpus_claims} ({share})")
    sticky = []
    for project, counts in sorted(top_packages.items()):
        limit = questions_of[project] / 3
        for package_id, count in counts.most_common():
            if count > limit:
                sticky.append(f"{project} {count}/{questions_of[project]} {package_id} ({texts[package_id]})")
        most = counts.most_common(1)
        if most:
            print(f"most frequent non-answering top-3 package in {project}: {most[0][1]} of {questions_of[project]}")
    print(f"sticky packages: {len(sticky)}")
    for line in sticky:
        print(f"  {line}")


if __name__ == "__main__":
    main()
