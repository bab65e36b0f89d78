"""domain/enhancement: which evidence a draft draws on — words weighed by their rarity in the corpus, the
subsections of a relevant section, the commands a code block runs, and the plan's most concrete steps."""

from __future__ import annotations

from groundwork.domain.enhancement.enhancer import CorpusRarity, EnhancementContext, Evidence
from groundwork.domain.enhancement.extractive import generate, sentences, work_item_evidence
from groundwork.domain.enhancement.model import EvidenceRef
from groundwork.domain.enhancement.neighbourhood import Placed, in_reading_order
from groundwork.domain.enhancement.relevance import ItemQuery, Scored, facet, item_words, relevant_passages, stems


def plan_of(title: str, description: str, *evidence: Evidence) -> str:
    """The implementation plan drafted for an item with this title and description from this evidence."""
    fields: dict[str, object] = {"description": description}
    own = work_item_evidence("wi_1", title, fields)
    context = EnhancementContext("implementation_plan", "wi_1", "OPS-1", title, fields, (*own, *evidence), "", None)
    [plan] = generate(context).drafts
    return str(plan.proposed_value)


def test_a_root_prompt_in_a_code_block_keeps_its_command_and_a_comment_is_dropped() -> None:
    block = (
        "```\n# definitions of existing MD arrays\n# mdadm /dev/md1 --remove /dev/sde\n"
        "mdadm: hot removed /dev/sde from /dev/md1\n# apt install munin-node\n```"
    )
    [unit] = sentences(block)
    assert unit.startswith("`mdadm /dev/md1 --remove /dev/sde ; ")
    assert "apt install munin-node" in unit
    assert "definitions" not in unit and "# " not in unit


def test_an_items_topic_outweighs_its_everyday_words_when_the_corpus_counts_are_known() -> None:
    gathered = [f"The firewall filters packets, rule {n}." for n in range(8)] + ["Set the office printer up."]
    title, description = "Firewall on the office gateway", "Set up the firewall."
    firewall, everyday = stems("firewall"), stems("set")
    # Among the passages gathered for the item its topic is everywhere, so it weighs least there...
    among_gathered = ItemQuery.of(f"{title} {description}", title, frozenset(), gathered)
    assert among_gathered.weights[next(iter(firewall))] < among_gathered.weights[next(iter(everyday))]
    # ...while in the whole manual it is rare and "set" is common: the corpus's counts put the topic first.
    counts = {"firewal": 40, "set": 300, "offic": 20, "gateway": 17}
    rarity = CorpusRarity(6000, tuple(sorted(counts.items())))
    assert item_words(title, description) == frozenset(counts)
    in_corpus = ItemQuery.of(f"{title} {description}", title, frozenset(), gathered, rarity)
    assert in_corpus.weights[next(iter(firewall))] > in_corpus.weights[next(iter(everyday))]
    assert in_corpus.relevance("The firewall rules live in /etc/nftables.conf.") > in_corpus.relevance(
        "Set the printer up."
    )


def test_a_passage_in_a_subsection_of_a_relevant_section_is_relevant_and_a_sibling_section_is_not() -> None:
    passages = [
        Scored("intro", "Firewall", "14.2. Firewall", 0.8),
        Scored("boot", "Firewall", "14.2. Firewall > 14.2.4. Installing the Rules at Each Boot", 0.2),
        Scored("other", "Firewall", "14.3. Supervision", 0.2),
    ]
    assert relevant_passages(passages) == {"intro", "boot"}


def test_an_anchored_sections_subsections_come_with_it_in_the_documents_order() -> None:
    hits = [Placed("intro", "v1", "X.509", 0), Placed("elsewhere", "v2", "Other", 0)]
    near = [Placed("certbot", "v1", "X.509 > 10.2.1. Let's Encrypt", 900), Placed("next", "v1", "X.509", 400)]
    assert in_reading_order(hits, near, anchored=["intro"]) == ["intro", "next", "certbot", "elsewhere"]


def test_the_plan_keeps_the_steps_that_carry_a_command_when_it_has_more_than_it_shows() -> None:
    prose = " ".join(f"Check the array health report number {n} before you swap the disk." for n in range(14))
    evidence = Evidence(
        EvidenceRef("passage", "psg_raid"),
        f"{prose}\n\nRemove the failed disk from the array:\n\n```\n# mdadm /dev/md1 --remove /dev/sde\n```",
        "Software RAID",
        "Software RAID",
    )
    value = plan_of("Replace failed disk in the RAID array", "The array reports a failed disk.", evidence)
    assert "mdadm /dev/md1 --remove /dev/sde" in value  # the 15th step, past the twelve the plan shows
    assert value.count("\n1. ") + value.startswith("1. ") <= 1 and "13. " not in value  # still twelve steps
    numbers = [int(line.split(".")[0]) for line in value.splitlines() if line[:1].isdigit()]
    assert numbers == list(range(1, len(numbers) + 1))


def test_a_code_block_cut_off_at_the_end_of_a_passage_is_still_one_command() -> None:
    cut = "Let's Encrypt:\n\n```\n# apt install python3-certbot-apache\n# certbot --apache\nSaving"
    assert sentences(cut)[-1] == "`apt install python3-certbot-apache ; certbot --apache ; Saving`"


def test_plan_steps_are_actions_and_a_description_becomes_an_action_on_the_component_it_names() -> None:
    evidence = Evidence(
        EvidenceRef("passage", "psg_dirvish"),
        "The main backup configuration is in the /etc/dirvish/master.conf file. "
        "You have to indicate a backup time just before the cron job runs. "
        "Finally, the expire-rule setting defines how long each backup is kept.\n\n"
        "Start the first backup:\n\n```\n# dirvish --vault rivendell --init\n```",
        "Backup",
        "Backup",
    )
    example = Evidence(
        EvidenceRef("passage", "psg_example"),
        "```\nbank:\n    /backup\nexpire-default: +15 days\n```",
        "Backup, ¶ 2",
        "Backup",
    )
    value = plan_of("Backups for the file servers", "Nothing is backed up right now.", evidence, example)
    steps = [line.split(". ", 1)[1] for line in value.splitlines() if line[:1].isdigit()]
    assert "Configure `/etc/dirvish/master.conf`: the main backup configuration is in the" in " ".join(steps)
    assert any(step.startswith("Indicate a backup time just before the cron job runs") for step in steps)
    assert any(step.startswith("Write the configuration `bank: ; /backup ;") for step in steps)
    assert "Start the first backup: `dirvish --vault rivendell --init`." in steps  # its own step, prompt dropped
    assert any(step.startswith("Make sure the expire-rule setting defines") for step in steps)  # "Finally," gone
    assert not any(step.startswith(("Make sure Finally", "Make you", "Run `bank")) for step in steps)


def test_a_passage_that_would_make_its_source_relevant_stays_relevant_beside_a_much_stronger_one() -> None:
    passages = [
        Scored("flow", "Card vault", "Card vault > Bulk migration", 1.0),
        Scored("stored", "Card vault", "Card vault > What we store", 0.3),  # clears the bar a source must clear
        Scored("logs", "Card vault", "Card vault > Log scanning", 0.2),
    ]
    assert relevant_passages(passages) == {"flow", "stored"}


def test_an_error_message_in_code_is_a_cause_and_never_a_plan_step() -> None:
    symptom = "The settlement job failed with `SSHException: Error reading SSH protocol banner`."
    assert facet(symptom) == "cause" and facet("Set `retries: 3` in the settlement job.") == "setting"
    runbook = Evidence(
        EvidenceRef("passage", "psg_runbook"),
        f"{symptom}\n\nRerun the settlement job by hand after 02:15:\n\n```\nkubectl -n payments create job\n```",
        "Runbook",
        "Runbook",
    )
    value = plan_of("Investigate flaky settlement job", "The settlement job failed twice.", runbook)
    assert "kubectl -n payments create job" in value
    assert "SSHException" not in value
