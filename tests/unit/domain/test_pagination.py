"""Opaque cursors: what a page hands out comes back as exactly the position it was made from."""

from __future__ import annotations

import pytest

from groundwork.domain.errors import InvalidRequest
from groundwork.domain.pagination import encode_cursor, page_request, ranked_cursor, ranked_position


@pytest.mark.parametrize("score", [3.14159, 1e-07, 1e20, 12.000000001, 0.0])
def test_a_ranked_cursor_gives_back_its_exact_score_seq_and_offset(score: float) -> None:
    page = page_request(20, ranked_cursor("f1", score, 42, 20))
    assert page.after == {"f": "f1", "s": score, "q": 42, "o": 20}
    assert ranked_position(page, "f1") == ((score, 42), 20)


def test_a_cursor_is_url_safe_and_unpadded() -> None:
    cursor = encode_cursor({"at": "2026-11-28T10:00:00Z", "id": "wi_ü"})
    assert cursor.replace("-", "").replace("_", "").isalnum()
    assert page_request(None, cursor).after == {"at": "2026-11-28T10:00:00Z", "id": "wi_ü"}


def test_a_cursor_of_another_search_is_refused() -> None:
    with pytest.raises(InvalidRequest):
        ranked_position(page_request(20, ranked_cursor("f1", 2.5, 7, 20)), "other")
