"""Corpus workflows: ingest one source-content version; roll out a new segmenter version."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from groundwork.domain.evidence_search.corpus import MAX_INGEST_ROUNDS

_TIMEOUT = timedelta(minutes=10)
_RETRY = RetryPolicy(maximum_attempts=10)
# The activities heartbeat every few seconds: a worker that died mid-step is noticed within this, and the
# step retried, instead of after the whole start-to-close timeout.
_HEARTBEAT = timedelta(seconds=15)


def ingest_workflow_id(version_id: str) -> str:
    """One ingest workflow per source-content version."""
    return f"corpus-ingest-{version_id}"


def resegment_workflow_id(segmenter_id: str) -> str:
    """One roll-out workflow per segmenter version."""
    return f"corpus-resegment-{segmenter_id}"


# The activities' inputs and outputs: the workflows call their activities by name, and they import these.


@dataclass
class VersionRef:
    """A source-content version to work on."""

    version_id: str


@dataclass
class SegmentOutcome:
    """Which segmenter versions cut the version now, and how many passages they stored."""

    version_id: str
    segmenters: list[str]
    passages: int


@dataclass
class Activation:
    """`published`: the index log makes the version serve from `index_seq` on; `active`: PostgreSQL marks it
    active too; `inactive`: a newer one won; `resegment`: a segmenter version it lacks appeared, so segment
    again first."""

    status: str
    index_seq: int = 0


@dataclass
class IndexTarget:
    """Bring the index at least up to this change-log position."""

    up_to_seq: int


@dataclass
class SegmenterRef:
    """A segmenter version (`name@version`)."""

    segmenter_id: str


@dataclass
class ResegmentBatch:
    """Cut up to `limit` active versions that the segmenter version has not cut yet."""

    segmenter_id: str
    limit: int = 50


@dataclass
class CorpusIngestInput:
    """The received (pending) version to ingest."""

    version_id: str


@dataclass
class CorpusIngestResult:
    """`active` when the version serves, `inactive` when a newer version of the source won meanwhile."""

    version_id: str
    status: str
    passages: int
    index_seq: int


@workflow.defn(name="CorpusIngestWorkflow")
class CorpusIngestWorkflow:
    """Segment → store passages → index → activate: the index commit that takes the previous version out
    and this one in is the activation every reader sees; PostgreSQL marks it active after that commit."""

    @workflow.run
    async def run(self, params: CorpusIngestInput) -> CorpusIngestResult:
        ref = VersionRef(params.version_id)
        # Histories started before publication came first replay the old step order.
        index_first = workflow.patched("index-before-activate")
        step = "corpus_publish_source_version" if index_first else "corpus_activate_source_version"
        passages = 0
        for _ in range(MAX_INGEST_ROUNDS):
            outcome = await workflow.execute_activity(
                "corpus_segment_source_version",
                ref,
                result_type=SegmentOutcome,
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            )
            passages += outcome.passages
            activation = await workflow.execute_activity(
                step,
                ref,
                result_type=Activation,
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            )
            if activation.status != "resegment":
                break
        else:
            raise ApplicationError("segmenter versions kept changing; ingest again", non_retryable=True)
        if activation.status in ("published", "active"):
            await workflow.execute_activity(
                "corpus_apply_index_changes",
                IndexTarget(activation.index_seq),
                result_type=int,
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            )
        if activation.status == "published":
            activation = await workflow.execute_activity(
                "corpus_activate_published_version",
                ref,
                result_type=Activation,
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            )
        return CorpusIngestResult(params.version_id, activation.status, passages, activation.index_seq)


@dataclass
class CorpusResegmentInput:
    """The segmenter version to roll out; `activate=False` stops after staging its passages."""

    segmenter_id: str
    activate: bool = True
    batch_size: int = 50


@dataclass
class CorpusResegmentResult:
    segmenter_id: str
    status: str  # "active" or "staging"
    versions_cut: int


@workflow.defn(name="CorpusResegmentWorkflow")
class CorpusResegmentWorkflow:
    """Cut every active version with a new segmenter version, then switch to it in one change set.

    Until the switch the old segmenter version keeps serving; the new passages are stored and indexed
    but never surface, because search only admits passages of the active segmenter version.
    """

    def __init__(self) -> None:
        self._versions_cut = 0

    @workflow.query
    def versions_cut(self) -> int:
        """How many source versions the new segmenter version has cut so far."""
        return self._versions_cut

    @workflow.run
    async def run(self, params: CorpusResegmentInput) -> CorpusResegmentResult:
        ref = SegmenterRef(params.segmenter_id)
        staged = await workflow.execute_activity(
            "corpus_stage_segmenter",
            ref,
            result_type=str,
            start_to_close_timeout=_TIMEOUT,
            heartbeat_timeout=_HEARTBEAT,
            retry_policy=_RETRY,
        )
        if staged == "active":
            return CorpusResegmentResult(params.segmenter_id, "active", 0)
        while True:
            while cut := await workflow.execute_activity(
                "corpus_resegment_batch",
                ResegmentBatch(params.segmenter_id, params.batch_size),
                result_type=int,
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            ):
                self._versions_cut += cut
            if not params.activate:
                await workflow.execute_activity(
                    "corpus_apply_index_changes",
                    IndexTarget(0),
                    result_type=int,
                    start_to_close_timeout=_TIMEOUT,
                    heartbeat_timeout=_HEARTBEAT,
                    retry_policy=_RETRY,
                )
                return CorpusResegmentResult(params.segmenter_id, "staging", self._versions_cut)
            activation = await workflow.execute_activity(
                "corpus_activate_segmenter",
                ref,
                result_type=Activation,
                start_to_close_timeout=_TIMEOUT,
                heartbeat_timeout=_HEARTBEAT,
                retry_policy=_RETRY,
            )
            if activation.status == "active":
                await workflow.execute_activity(
                    "corpus_apply_index_changes",
                    IndexTarget(activation.index_seq),
                    result_type=int,
                    start_to_close_timeout=_TIMEOUT,
                    heartbeat_timeout=_HEARTBEAT,
                    retry_policy=_RETRY,
                )
                return CorpusResegmentResult(params.segmenter_id, "active", self._versions_cut)
            # Versions activated while the batches ran still lack the new passages: cut them too.


CORPUS_WORKFLOWS: list[type] = [CorpusIngestWorkflow, CorpusResegmentWorkflow]
