"""The index directory deleted, or its segment files corrupted, under a running API: search answers either
the right passages or a coded 503 (never a 500, never a wrong or empty page), the worker rebuilds the
index from PostgreSQL on its own, and no passage is lost — including those ingested meanwhile."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

from tests.reliability.load import contribute_sources, wait_passages
from tests.reliability.processes import OwnStack, wait_until

PASSAGES_PER_SOURCE = 2


def _search(client: httpx.Client, project_id: str, token: str) -> tuple[int, int | str]:
    """(status, passages found) for a 200, else (status, the problem's code)."""
    response = client.post(
        "/api/v1/context/search",
        json={"subject_ref": {"type": "project", "id": project_id}, "query": token, "limit": 20},
    )
    if response.status_code == 200:
        return 200, int(response.json()["totalCount"])
    assert response.headers["content-type"].startswith("application/problem+json"), response.text
    if response.status_code == 503:
        assert int(response.headers["retry-after"]) > 0
    return response.status_code, response.json()["code"]


def _serving(replica: Path) -> Path:
    corpus = replica / "corpus"
    return corpus / (corpus / "CURRENT").read_text().strip()


def _damage_and_recover(stack: OwnStack, damage: str) -> Counter[tuple[int, int | str]]:
    with stack.client() as client:
        project_id = client.get("/api/v1/projects").json()["data"][0]["id"]
        before = [f"{damage}{uuid.uuid4().hex[:10]}" for _ in range(3)]
        contribute_sources(stack, project_id, before)
        wait_passages(client, project_id, before, PASSAGES_PER_SOURCE, timeout=60)
        # Every process keeps its own replica (`index`, and siblings for the others): damage them all.
        replicas = sorted(path for path in stack.root.glob("index*") if (path / "corpus" / "CURRENT").exists())
        assert len(replicas) >= 2, replicas  # the API's and the worker's
        generations = {path: _serving(path) for path in replicas}
        for replica, generation in generations.items():
            if damage == "deleted":
                shutil.rmtree(replica)
                continue
            for segment_file in generation.iterdir():
                if segment_file.suffix in (".store", ".idx", ".term"):
                    size = segment_file.stat().st_size
                    with segment_file.open("r+b") as handle:  # in place: the API's open files change under it
                        handle.write(os.urandom(size))
        answers: Counter[tuple[int, int | str]] = Counter()
        during = [f"{damage}{uuid.uuid4().hex[:10]}" for _ in range(2)]
        contribute_sources(stack, project_id, during)

        def healed() -> bool:
            results = [_search(client, project_id, token) for token in before + during]
            answers.update(results)
            for token, (status, found) in zip(before, results, strict=False):
                # Never a wrong answer: an indexed source is found whole, or the search says it cannot answer.
                assert (status, found) in ((200, PASSAGES_PER_SOURCE), (503, "service_unavailable")), (token, found)
            return all(result == (200, PASSAGES_PER_SOURCE) for result in results)

        wait_until(healed, timeout=90, what="search to find every passage again", interval=0.5)
        assert stack.api is not None and stack.api.alive()
        assert not [a for a in answers if a[0] == 500], answers
        for replica, generation in generations.items():

            def rebuilt(replica: Path = replica, generation: Path = generation) -> bool:
                return (replica / "corpus" / "CURRENT").exists() and _serving(replica) != generation

            wait_until(rebuilt, timeout=60, what=f"{replica.name} to serve a rebuilt generation")
        time.sleep(0.5)
        print(f"index {damage}: search answers {dict(answers)}")
        return answers


def test_index_directory_deleted_under_a_running_api_is_rebuilt_and_loses_no_passage(stack: OwnStack) -> None:
    _damage_and_recover(stack, "deleted")


def test_corrupted_segment_files_answer_503_then_are_rebuilt_and_lose_no_passage(stack: OwnStack) -> None:
    answers = _damage_and_recover(stack, "corrupted")
    assert answers[(503, "service_unavailable")] > 0, answers  # the damage was seen, and answered as a 503
