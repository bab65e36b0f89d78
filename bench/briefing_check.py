"""Score a running demo stack's briefings against bench/quality/briefing_questions.jsonl (issue 36's "before").

Asks every question of `POST /api/v1/context/query` (project or engagement subject) and looks for each expected
package among the answer's claims (findings, risks, blockers): same project, a contribution type the record accepts
(`contribution_type`, or one of `also_types` when --lenient), and one of its phrases in the claim's text. A "none"
question is right when the briefing holds no claim. Only HTTP: it imports nothing of Groundwork.

    groundwork up --demo --data-dir /tmp/demo ...        # in another shell; it prints the demo admin key
    .venv/bin/python bench/briefing_check.py --api-url http://127.0.0.1:8000 --key gw_...

Run by hand (never in the test suite); results go to bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import httpx

DATA = Path(__file__).resolve().parent / "quality" / "briefing_questions.jsonl"
SECTIONS = ("findings", "risks", "blockers")


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


def main() -> None:
    """Ask every question, print a Markdown table per question and the totals."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--api-url", default="http://127.0.0.1:8000")
    parser.add_argument("--key", required=True, help="an API key of the demo admin (every scope)")
    parser.add_argument("--lenient", action="store_true", help="accept the also_types of an expected package")
    args = parser.parse_args()
    records = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    with httpx.Client(base_url=args.api_url, headers={"Authorization": f"Bearer {args.key}"}, timeout=60) as http:
        projects = http.get("/api/v1/projects", params={"limit": 100}).raise_for_status().json()["data"]
        keys = {p["id"]: p["key"] for p in projects}
        ids = {p["key"]: p["id"] for p in projects}
        engagements = {p["engagement"]["name"]: p["engagement"]["id"] for p in projects}
        print("| id | kind | question | expected found | claims | right |")
        print("|---|---|---|---:|---:|---|")
        found_total = expected_total = right = 0
        for record in records:
            subject = record["subject"]
            body: dict[str, Any] = {"question": record["question"]}
            if subject["type"] == "project":
                body["project_id"] = ids[subject["project"]]
            else:
                body["subject_ref"] = {"type": "engagement", "id": engagements[subject["engagement"]]}
            answer = http.post("/api/v1/context/query", json=body).raise_for_status().json()["data"]
            claims = [c for section in SECTIONS for c in answer[section]]
            if record["expected"] == "none":
                found, wanted, ok = 0, 0, not claims
            else:
                wanted = len(record["expected"])
                found = sum(
                    any(matches(e, c, keys.get(c["projectId"], ""), args.lenient) for c in claims)
                    for e in record["expected"]
                )
                ok = found == wanted
            found_total, expected_total, right = found_total + found, expected_total + wanted, right + ok
            print(
                f"| {record['id']} | {record['kind']} | {record['question']} | {found}/{wanted} | {len(claims)}"
                f" | {'yes' if ok else 'no'} |"
            )
    print(
        f"\nexpected packages found: {found_total} of {expected_total}; questions answered completely (none questions:"
        f" no claim): {right} of {len(records)}{' (lenient types)' if args.lenient else ''}"
    )


if __name__ == "__main__":
    main()
