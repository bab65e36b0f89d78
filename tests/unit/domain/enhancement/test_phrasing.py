"""How evidence sentences are rephrased: conditions, consequences, facts a reviewer observes, instructions."""

from __future__ import annotations

from groundwork.domain.enhancement.phrasing import imperative, observable, split_condition, split_consequence


def test_each_time_and_as_soon_as_open_a_condition() -> None:
    found = split_condition("Each time someone logs in over SSH, the remote server asks for a password.")
    assert found is not None and (found.clause, found.outcome) == (
        "someone logs in over SSH",
        "the remote server asks for a password",
    )
    assert split_condition("As soon as the disk is replaced, the array rebuilds.") is not None


def test_an_if_inside_a_parenthesis_is_an_aside_not_the_sentences_condition() -> None:
    assert split_condition("The volume stays accessible (and, if it is mounted, nobody notices a thing).") is None


def test_a_semicolon_separates_an_event_from_what_follows_but_not_an_argument() -> None:
    assert split_consequence("The user generates a key pair with ssh-keygen; the public key is stored in ~/.ssh.") == (
        "The user generates a key pair with ssh-keygen",
        "the public key is stored in ~/.ssh",
    )
    assert split_consequence("Unlike Munin, Nagios needs no agent; it polls the services.") is None
    # A comma inside a number is no clause of its own.
    assert split_consequence("Copperline plans 1,800 more vans next year; size for 5,000 vans.") == (
        "Copperline plans 1,800 more vans next year",
        "size for 5,000 vans",
    )
    assert split_consequence("Keep it short; no more.") is None  # "no more" is no statement


def test_a_fact_about_you_keeps_the_plural_verb() -> None:
    assert observable("To enable quotas, you must indicate usrquota in /etc/fstab.") == [
        "to enable quotas, you indicate usrquota in /etc/fstab"
    ]
    assert observable("You should first do a minimal upgrade.") == ["you first do a minimal upgrade"]


def test_a_program_that_asks_for_something_states_a_behaviour_not_a_wish() -> None:
    assert imperative("The installer asks for a confirmation of the password.") == (
        "Make sure the installer asks for a confirmation of the password"
    )
    assert imperative("Finance asked for a reconciliation report.").endswith("as Finance asked")


def test_what_you_can_do_is_an_instruction_and_a_condition_on_you_is_a_condition() -> None:
    assert imperative("You can define rights for each category of users.") == "Define rights for each category of users"
    assert imperative("If you consider an alternative, you can try plocate instead.") == (
        "If you consider an alternative, try plocate instead"
    )


def test_a_modal_inside_a_that_clause_is_not_the_sentences_requirement() -> None:
    found = imperative("The new philosophy is that security updates should be automatically installed.")
    assert found == "Make sure the new philosophy is that security updates should be automatically installed"


def test_a_purpose_and_you_before_a_modal_make_an_instruction_and_an_aside_never_a_subject() -> None:
    assert imperative("To activate quotas, you must indicate usrquota in /etc/fstab.") == (
        "To activate quotas, indicate usrquota in /etc/fstab"
    )
    # No "Make for high traffic sites, DNSLookup ...": the words before the modal are no subject.
    found = imperative("For high traffic sites, DNSLookup should not be set to 1.")
    assert found == "Make sure for high traffic sites, DNSLookup should not be set to 1"
    assert imperative("Fortunately, ssh-agent keeps private keys in memory.").startswith("Make sure ssh-agent keeps")


def test_if_you_want_is_a_condition_not_a_wish() -> None:
    found = imperative("If you want to use the default answers, you can use make olddefconfig.")
    assert found == "If you want to use the default answers, use make olddefconfig"
