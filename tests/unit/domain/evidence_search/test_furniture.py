"""Document furniture (navigation, tables of contents, metadata lines) is told from prose by its text alone."""

from __future__ import annotations

import pytest

from groundwork.domain.evidence_search.furniture import is_furniture


@pytest.mark.parametrize(
    "text",
    [
        "Prev",
        "Next",
        "Download the ebook",
        "Next6.3. The apt-cache Command",
        "PrevChapter 6. Maintenance and Updates: The APT Tools",
        "14.4.3. Creating a new profile",
        "B.1.5. System Information: Memory, Disk Space, Identity",
        "9.10. Backup\n9.10.1. Backing Up with rsync\n9.10.2. Restoring Machines without Backups",
        "Owner: Payments platform team. Pager: `payments-oncall`.",
        "Attendees: Maya Okafor (delivery lead), Priya Raman (QA), Rebecca Hale (Head of Payments)",
        "**Owner:** Maya Okafor\n**Reviewers:** Priya Raman",
    ],
)
def test_navigation_contents_and_metadata_are_furniture(text: str) -> None:
    assert is_furniture(text)


@pytest.mark.parametrize(
    "text",
    [
        "No messages between 21:00 and 08:00 UK time; the evening message is sent at 19:00.",
        "Decision: the token migration has priority over every other payments item until it is done.",
        "Action: Tomás to share a clickable prototype of the dispatcher board by 24 June.",
        "1. Stop the job.",
        "2.3. The job stops when the file is late.",
        "Owner: Maya Okafor. The job does not retry on its own.",
        "Next, restart the settlement job.",
        "",
    ],
)
def test_prose_steps_and_decisions_are_not_furniture(text: str) -> None:
    assert not is_furniture(text)
