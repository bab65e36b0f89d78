"""Segmenters cut exact slices of the stored text, with page, paragraph and heading context."""

from __future__ import annotations

import time

from groundwork.search.extraction import PAGE_BREAK, extract
from groundwork.search.segmenters import SEGMENTERS, get_segmenter

MARKDOWN = """---
owner: payments
---
# Runbook

First paragraph,
second line.

## Rollback

- step one
- step two

```bash
kubectl rollout undo

kubectl get pods
```

Setext heading
--------------

Closing words.
"""


def test_every_passage_is_the_exact_slice_its_span_names() -> None:
    for segmenter in SEGMENTERS.values():
        for passage in segmenter.segment("markdown", MARKDOWN):
            assert MARKDOWN[passage.char_start : passage.char_end] == passage.text


def test_markdown_paragraphs_lists_and_code_keep_their_heading_as_section() -> None:
    passages = get_segmenter("paragraph@1").segment("markdown", MARKDOWN)
    assert [(p.paragraph, p.section, p.text) for p in passages] == [
        (1, "Runbook", "First paragraph,\nsecond line."),
        (2, "Runbook > Rollback", "- step one\n- step two"),
        (3, "Runbook > Rollback", "```bash\nkubectl rollout undo\n\nkubectl get pods\n```"),
        (4, "Runbook > Setext heading", "Closing words."),
    ]
    assert all(p.page is None for p in passages)


def test_closed_and_empty_atx_headings_set_the_section() -> None:
    text = "# Runbook ##\n\n## Steps #\t\n\nDo it.\n\n#\n\nNo section.\n\n####### Not a heading\n"
    passages = get_segmenter("paragraph@1").segment("markdown", text)
    assert [(p.section, p.text) for p in passages] == [
        ("Runbook > Steps", "Do it."),
        (None, "No section."),
        (None, "####### Not a heading"),
    ]


def test_a_long_heading_line_is_segmented_in_linear_time() -> None:
    text = "# a" + " " * 200_000 + "b ##\n\nBody.\n"
    started = time.perf_counter()
    passages = get_segmenter("paragraph@1").segment("markdown", text)
    assert time.perf_counter() - started < 2
    assert [(p.section, p.text) for p in passages] == [("a" + " " * 200_000 + "b", "Body.")]


def test_pdf_pages_number_paragraphs_from_one() -> None:
    text = f"Alpha one.\n\nAlpha two.{PAGE_BREAK}Beta one.\n\nBeta two.\n\nBeta three."
    passages = get_segmenter("paragraph@1").segment("pdf", text)
    assert [(p.page, p.paragraph, p.text) for p in passages] == [
        (1, 1, "Alpha one."),
        (1, 2, "Alpha two."),
        (2, 1, "Beta one."),
        (2, 2, "Beta two."),
        (2, 3, "Beta three."),
    ]
    assert all(text[p.char_start : p.char_end] == p.text for p in passages)


def test_long_paragraphs_split_at_sentences_within_the_limit() -> None:
    sentence = "The settlement file arrives at two in the morning. "
    text = sentence * 40
    v1, v2 = get_segmenter("paragraph@1"), get_segmenter("paragraph@2")
    for segmenter in (v1, v2):
        passages = segmenter.segment("text", text)
        assert all(len(p.text) <= segmenter.max_chars for p in passages)
        assert all(p.text.endswith("morning.") for p in passages)
        assert all(text[p.char_start : p.char_end] == p.text for p in passages)
        assert {p.paragraph for p in passages} == {1}
    assert len(v2.segment("text", text)) > len(v1.segment("text", text))


def test_html_becomes_blocks_with_headings_and_no_scripts() -> None:
    html = (
        b"<html><head><title>Vault</title><style>p{}</style></head><body><nav>Home</nav>"
        b"<h1>Card vault</h1><p>Only a <code>token_ref</code> is stored.</p>"
        b"<ul><li>First &amp; last</li></ul><script>var pan = 1;</script></body></html>"
    )
    extracted = extract("html", html)
    assert extracted.title == "Vault"
    passages = get_segmenter("paragraph@1").segment("html", extracted.text)
    assert [(p.section, p.text) for p in passages] == [
        ("Card vault", "Only a token_ref is stored."),
        ("Card vault", "First & last"),
    ]
