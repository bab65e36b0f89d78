"""search/term_rarity: how many of one project's serving passages hold each word, counted in the index."""

from __future__ import annotations

from typing import Any

from groundwork.domain.evidence_search.analysis import content_terms
from groundwork.search.term_rarity import project_term_rarity
from tests.conftest import Workspace
from tests.integration.evidence_search.helpers import contribute

FIREWALL = """# Firewall

The firewall rules are stored in /etc/nftables.conf on the gateway.

Set up the firewall with nft and save the ruleset.

Everyday work rarely needs the firewall rules themselves.
"""

OFFICE = """# Office

The office suite opens documents people set up at home.

Set up printers in the office before the suite.
"""


async def test_counts_are_the_projects_own_passages_holding_each_stem(workspace: Workspace, worker: Any) -> None:
    await contribute(workspace, "ALPHA", "firewall.md", FIREWALL)
    await contribute(workspace, "BETA", "office.md", OFFICE)
    firewall, office, absent = (content_terms(w)[0] for w in ("firewall", "office", "zebra"))

    counted = await project_term_rarity(workspace.id, workspace.projects["ALPHA"], [office, firewall, absent])

    assert counted is not None
    held = dict(counted.frequencies)
    assert counted.passages >= 3  # ALPHA's passages only: BETA's office notes are not counted
    assert held[firewall] == 3 and held[absent] == 0
    assert held[office] == 0  # "office" is in BETA's document, never in ALPHA's
    assert [w for w, _ in counted.frequencies] == sorted([office, firewall, absent])
