"""Piccolo table definitions, mirroring the SQL migrations (a test checks that they agree)."""

from __future__ import annotations

from piccolo.columns import (
    JSONB,
    Array,
    BigInt,
    BigSerial,
    Boolean,
    Bytea,
    DoublePrecision,
    ForeignKey,
    Integer,
    Text,
    Timestamptz,
)
from piccolo.columns.base import OnDelete
from piccolo.table import Table


class Workspace(Table, tablename="workspaces"):
    id = Text(primary_key=True)
    slug = Text(unique=True)
    name = Text()
    created_at = Timestamptz()


class Principal(Table, tablename="principals"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    name = Text()
    display_name = Text()
    kind = Text()
    is_admin = Boolean(default=False)
    created_at = Timestamptz()


class Portfolio(Table, tablename="portfolios"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    name = Text()
    created_at = Timestamptz()


class Engagement(Table, tablename="engagements"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    portfolio_id = ForeignKey(Portfolio, on_delete=OnDelete.cascade, null=False)
    name = Text()
    created_at = Timestamptz()


class Project(Table, tablename="projects"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    engagement_id = ForeignKey(Engagement, on_delete=OnDelete.cascade, null=False)
    key = Text()
    name = Text()
    next_item_number = Integer(default=1)
    created_at = Timestamptz()
    archived_at = Timestamptz(null=True, default=None)  # (0018)


class Role(Table, tablename="roles"):
    name = Text(primary_key=True)
    permissions = Array(base_column=Text())


class Membership(Table, tablename="memberships"):
    id = BigSerial(primary_key=True)
    principal_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    role = Text()
    created_at = Timestamptz()


class ApiKey(Table, tablename="api_keys"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    principal_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    key_hash = Text(unique=True)
    key_prefix = Text()
    scopes = Array(base_column=Text())
    created_at = Timestamptz()
    revoked_at = Timestamptz(null=True, default=None)
    last_used_at = Timestamptz(null=True, default=None)
    app_id = Text(null=True, default=None)  # the connected app the key is bound to (0006)
    expires_at = Timestamptz(null=True, default=None)  # (0018)


class WorkItem(Table, tablename="work_items"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    key = Text()
    title = Text()
    status = Text()
    sprint = Text(null=True, default=None)
    watchers = Array(base_column=Text())
    fields = JSONB()
    version = Timestamptz()
    created_at = Timestamptz()
    source = JSONB(null=True, default=None)  # where an imported item came from (0018)


class WorkItemChange(Table, tablename="work_item_changes"):
    id = BigSerial(primary_key=True)
    work_item_id = ForeignKey(WorkItem, on_delete=OnDelete.cascade, null=False)
    actor_id = Text()
    source = Text()
    changes = JSONB()
    version_before = Timestamptz(null=True, default=None)
    version_after = Timestamptz()
    changed_at = Timestamptz()


class WorkItemImport(Table, tablename="work_item_imports"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    actor_id = Text()
    format = Text()
    content = Text()
    status_map = JSONB(default="{}")
    people_map = JSONB(default="{}")
    status = Text(default="queued")
    total = Integer(default=0)
    processed = Integer(default=0)
    report = JSONB(default="{}")
    created_at = Timestamptz()
    updated_at = Timestamptz()


class IdempotencyKey(Table, tablename="idempotency_keys"):
    id = BigSerial(primary_key=True)
    api_key_id = ForeignKey(ApiKey, on_delete=OnDelete.cascade, null=False)
    key = Text()
    fingerprint = Text()
    locked_at = Timestamptz()
    response_status = Integer(null=True, default=None)
    response_headers = JSONB(null=True, default=None)
    response_body = Bytea(null=True, default=None)
    created_at = Timestamptz()
    expires_at = Timestamptz()
    response_sealed = Boolean(default=False)
    resource_type = Text(null=True, default=None)
    resource_id = Text(null=True, default=None)


class OutboxEvent(Table, tablename="outbox"):
    id = BigSerial(primary_key=True)
    event_id = Text(unique=True)
    type = Text()
    event_version = Integer(default=1)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    resource_type = Text()
    resource_id = Text()
    actor_id = Text(null=True, default=None)
    payload = JSONB()
    source = JSONB(null=True, default=None)
    occurred_at = Timestamptz()
    dispatched_at = Timestamptz(null=True, default=None)
    project_id = Text(null=True, default=None)
    private_to = Text(null=True, default=None)


class WebhookEndpoint(Table, tablename="webhook_endpoints"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    url = Text()
    description = Text(default="")
    event_types = Array(base_column=Text())
    secret = Text()
    previous_secret = Text(null=True, default=None)
    previous_secret_expires_at = Timestamptz(null=True, default=None)
    older_secrets = JSONB(default="[]")
    enabled = Boolean(default=True)
    disabled_reason = Text(null=True, default=None)
    disabled_at = Timestamptz(null=True, default=None)
    failing_since = Timestamptz(null=True, default=None)
    consecutive_failures = Integer(default=0)
    created_by = Text(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class WebhookDelivery(Table, tablename="webhook_deliveries"):
    id = Text(primary_key=True)
    workflow_id = Text(unique=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    endpoint_id = ForeignKey(WebhookEndpoint, on_delete=OnDelete.cascade, null=False)
    event_id = Text()
    event_type = Text()
    status = Text(default="pending")
    failure_reason = Text(null=True, default=None)
    generation = Integer(default=0)
    attempt_count = Integer(default=0)
    last_status_code = Integer(null=True, default=None)
    last_attempt_at = Timestamptz(null=True, default=None)
    next_attempt_at = Timestamptz(null=True, default=None)
    start_requested_at = Timestamptz()
    workflow_started_at = Timestamptz(null=True, default=None)
    workflow_run_id = Text(null=True, default=None)
    completed_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class WebhookDeliveryAttempt(Table, tablename="webhook_delivery_attempts"):
    id = BigSerial(primary_key=True)
    delivery_id = ForeignKey(WebhookDelivery, on_delete=OnDelete.cascade, null=False)
    generation = Integer()
    slot = Integer()
    number = Integer()
    attempted_at = Timestamptz()
    status_code = Integer(null=True, default=None)
    latency_ms = DoublePrecision()
    response_body = Text(null=True, default=None)
    response_truncated = Boolean(default=False)
    error = Text(null=True, default=None)
    outcome = Text()
    retry_after_seconds = DoublePrecision(null=True, default=None)


ALL_TABLES: tuple[type[Table], ...] = (
    Workspace,
    Principal,
    Portfolio,
    Engagement,
    Project,
    Role,
    Membership,
    ApiKey,
    WorkItem,
    WorkItemChange,
    WorkItemImport,
    IdempotencyKey,
    OutboxEvent,
    WebhookEndpoint,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)


class EnhancementRun(Table, tablename="enhancement_runs"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    target_id = ForeignKey(WorkItem, on_delete=OnDelete.cascade, null=False)
    requested_actions = Array(base_column=Text())
    instructions = Text(default="")
    state = Text()
    requested_by = Text()
    code_context = Boolean(default=False)
    generator = Text()
    error_code = Text(null=True, default=None)
    error_message = Text(null=True, default=None)
    review_expires_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()
    completed_at = Timestamptz(null=True, default=None)
    # Derived from the API key and Idempotency-Key of the create request (a retry finds this run).
    request_key = Text(null=True, default=None)


class EnhancementRunAction(Table, tablename="enhancement_run_actions"):
    id = BigSerial(primary_key=True)
    run_id = ForeignKey(EnhancementRun, on_delete=OnDelete.cascade, null=False)
    request_id = Text()
    action = Text()
    instructions = Text(default="")
    state = Text()
    error_code = Text(null=True, default=None)
    created_at = Timestamptz()
    completed_at = Timestamptz(null=True, default=None)


class EnhancementDraft(Table, tablename="enhancement_drafts"):
    id = Text(primary_key=True)
    run_id = ForeignKey(EnhancementRun, on_delete=OnDelete.cascade, null=False)
    run_action_id = ForeignKey(EnhancementRunAction, on_delete=OnDelete.cascade, null=False)
    action = Text()
    field = Text()
    proposed_value = JSONB()
    confidence = DoublePrecision()
    evidence_refs = JSONB()
    statements = JSONB(default="[]")
    apply_id = Text(null=True, default=None)
    applied_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    rejected_at = Timestamptz(null=True, default=None)
    rejected_by = Text(null=True, default=None)
    rejection_reason = Text(null=True, default=None)


class EnhancementArtifact(Table, tablename="enhancement_artifacts"):
    id = Text(primary_key=True)
    run_id = ForeignKey(EnhancementRun, on_delete=OnDelete.cascade, null=False)
    run_action_id = ForeignKey(EnhancementRunAction, on_delete=OnDelete.cascade, null=False)
    action = Text()
    type = Text()
    title = Text()
    summary = Text()
    body = Text()
    evidence_refs = JSONB()
    created_at = Timestamptz()


class EnhancementApply(Table, tablename="enhancement_applies"):
    id = Text(primary_key=True)
    run_id = ForeignKey(EnhancementRun, on_delete=OnDelete.cascade, null=False)
    work_item_id = ForeignKey(WorkItem, on_delete=OnDelete.cascade, null=False)
    draft_ids = Array(base_column=Text())
    expected_target_version = Timestamptz()
    target_version = Timestamptz()
    actor_id = Text()
    applied_at = Timestamptz()
    # Per field: {field, draft_id, before, after}, written in the apply's transaction.
    changes = JSONB(default="[]")


class EnhancementRunEvidence(Table, tablename="enhancement_run_evidence"):
    run_id = ForeignKey(EnhancementRun, on_delete=OnDelete.cascade, null=False, primary_key=True)
    items = JSONB()
    reference_items = JSONB()
    gathered_at = Timestamptz()
    # {"passages": n, "frequencies": [[stem, count], ...]}: the item's words in the project's corpus.
    rarity = JSONB(null=True, default=None)


ALL_TABLES += (
    EnhancementRun,
    EnhancementRunAction,
    EnhancementDraft,
    EnhancementArtifact,
    EnhancementApply,
    EnhancementRunEvidence,
)


class CorpusSegmenter(Table, tablename="corpus_segmenters"):
    id = Text(primary_key=True)
    name = Text()
    version = Integer()
    active = Boolean(default=False)
    staging = Boolean(default=False)
    created_at = Timestamptz()
    activated_at = Timestamptz(null=True, default=None)
    retired_at = Timestamptz(null=True, default=None)
    switch_seq = BigInt(default=0)


class CorpusSource(Table, tablename="corpus_sources"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    uri = Text()
    title = Text()
    kind = Text()
    owner = Text()
    created_at = Timestamptz()
    updated_at = Timestamptz()
    classification = Text(default="general")
    published_version_id = Text(null=True, default=None)
    classification_seq = BigInt(default=0)


class CorpusSourceVersion(Table, tablename="corpus_source_versions"):
    id = Text(primary_key=True)
    seq = BigSerial()  # bigint GENERATED ALWAYS AS IDENTITY in SQL
    source_id = ForeignKey(CorpusSource, on_delete=OnDelete.cascade, null=False)
    kind = Text()
    content_hash = Text()
    byte_size = Integer()
    title = Text()
    text = Text()
    provenance_quality = Text()
    status = Text()
    received_by = Text()
    created_at = Timestamptz()
    ingested_at = Timestamptz(null=True, default=None)
    deactivated_at = Timestamptz(null=True, default=None)
    index_seq = BigInt(null=True, default=None)
    document_date = Timestamptz(null=True, default=None)
    document_date_source = Text(null=True, default=None)


class CorpusSegmentation(Table, tablename="corpus_segmentations"):
    id = BigSerial(primary_key=True)
    source_version_id = ForeignKey(CorpusSourceVersion, on_delete=OnDelete.cascade, null=False)
    segmenter_id = ForeignKey(CorpusSegmenter, null=False)
    passage_count = Integer()
    created_at = Timestamptz()


class CorpusPassage(Table, tablename="corpus_passages"):
    id = Text(primary_key=True)
    seq = BigSerial()  # bigint GENERATED ALWAYS AS IDENTITY in SQL: the passage's key in the index
    # Copies of the source version's (no foreign keys: the version's own key cascades from the workspace).
    workspace_id = Text()
    project_id = Text()
    source_id = Text()
    source_version_id = ForeignKey(CorpusSourceVersion, on_delete=OnDelete.cascade, null=False)
    segmenter_id = ForeignKey(CorpusSegmenter, null=False)
    ordinal = Integer()
    page = Integer(null=True, default=None)
    paragraph = Integer(null=True, default=None)
    section = Text(null=True, default=None)
    char_start = Integer()
    char_end = Integer()
    text = Text()
    provenance_quality = Text()
    opens_section = Boolean(default=False)


class CorpusIndexLog(Table, tablename="corpus_index_log"):
    seq = BigSerial(primary_key=True)
    changes = JSONB()
    created_at = Timestamptz()


ALL_TABLES += (
    CorpusSegmenter,
    CorpusSource,
    CorpusSourceVersion,
    CorpusSegmentation,
    CorpusPassage,
    CorpusIndexLog,
)


# ---------------------------------------------------------------------------------------------- notifications


class ConnectedApp(Table, tablename="connected_apps"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    name = Text()
    kind = Text()
    direction = Text()
    field_authority = Array(base_column=Text())
    provenance = Text()
    conflict = Text()
    status = Text(default="registered")
    registered_by = Text(null=True, default=None)
    activated_by = Text(null=True, default=None)
    activated_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class ContextProvider(Table, tablename="context_providers"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    name = Text()
    classification = Text()
    capabilities = Array(base_column=Text())
    authority = Text()
    builtin = Boolean(default=False)
    registered_by = Text(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class Notification(Table, tablename="notifications"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    recipient_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    event_id = Text()
    event_type = Text()
    source_kind = Text()
    source_external_id = Text()
    resource_type = Text()
    resource_id = Text()
    title = Text()
    body = Text()
    status = Text(default="unread")
    version = Integer(default=1)
    created_at = Timestamptz()
    updated_at = Timestamptz()
    snoozed_until = Timestamptz(null=True, default=None)
    snooze_id = Text(null=True, default=None)


class NotificationUnreadCount(Table, tablename="notification_unread_counts"):
    recipient_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False, primary_key=True)
    unread = Integer(default=0)


class NotificationOperation(Table, tablename="notification_operations"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    actor_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    command = Text()
    via = Text()
    app_id = Text(null=True, default=None)
    notification_ids = Array(base_column=Text())
    created_at = Timestamptz()
    result = JSONB(null=True, default=None)


class NotificationAudit(Table, tablename="notification_audit"):
    id = Text(primary_key=True)
    notification_id = ForeignKey(Notification, on_delete=OnDelete.cascade, null=False)
    operation_id = ForeignKey(NotificationOperation, on_delete=OnDelete.cascade, null=False)
    actor_id = Text()
    via = Text()
    app_id = Text(null=True, default=None)
    provenance = Text(null=True, default=None)
    from_status = Text()
    to_status = Text()
    version_after = Integer()
    reason = Text(null=True, default=None)
    occurred_at = Timestamptz()
    command = Text()
    snoozed_until = Timestamptz(null=True, default=None)


class NotificationProposal(Table, tablename="notification_proposals"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    principal_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    notification_id = ForeignKey(Notification, on_delete=OnDelete.cascade, null=False)
    requested_outcome = Text()
    command = Text(null=True, default=None)
    from_status = Text()
    to_status = Text(null=True, default=None)
    expected_version = Integer(null=True, default=None)
    reason = Text(null=True, default=None)
    evidence_refs = JSONB(default="[]")
    validation_errors = JSONB(default="[]")
    conflicts = JSONB(default="[]")
    app_id = Text(null=True, default=None)
    provenance = Text(null=True, default=None)
    created_at = Timestamptz()
    snooze_until = Timestamptz(null=True, default=None)
    snooze_for = Text(null=True, default=None)
    expires_at = Timestamptz()
    applied_at = Timestamptz(null=True, default=None)
    operation_id = Text(null=True, default=None)


class NotificationPreference(Table, tablename="notification_preferences"):
    principal_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False, primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    email_enabled = Boolean(default=False)
    email_address = Text(null=True, default=None)
    email_digest = Text(default="immediate")
    chat_enabled = Boolean(default=False)
    chat_webhook_url = Bytea(null=True, default=None)
    events = JSONB(default="{}")
    updated_at = Timestamptz()


class NotificationDigest(Table, tablename="notification_digests"):
    id = BigSerial(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    recipient_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    cadence = Text()
    window_start = Timestamptz()
    window_end = Timestamptz()
    workflow_id = Text(unique=True)
    status = Text(default="open")
    attempts = Integer(default=0)
    last_error = Text(null=True, default=None)
    start_requested_at = Timestamptz()
    workflow_started_at = Timestamptz(null=True, default=None)
    sent_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()


class NotificationDelivery(Table, tablename="notification_deliveries"):
    id = BigSerial(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    notification_id = ForeignKey(Notification, on_delete=OnDelete.cascade, null=False)
    recipient_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    channel = Text()
    digest_id = ForeignKey(NotificationDigest, on_delete=OnDelete.cascade, null=True)
    workflow_id = Text(null=True, default=None, unique=True)
    status = Text(default="pending")
    attempts = Integer(default=0)
    last_error = Text(null=True, default=None)
    start_requested_at = Timestamptz()
    workflow_started_at = Timestamptz(null=True, default=None)
    sent_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()


class NotificationActionRedemption(Table, tablename="notification_action_redemptions"):
    link_id = Text(primary_key=True)
    notification_id = ForeignKey(Notification, on_delete=OnDelete.cascade, null=False)
    operation_id = Text(null=True, default=None)
    expires_at = Timestamptz()
    redeemed_at = Timestamptz()


class MessageThread(Table, tablename="message_threads"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    title = Text()
    created_by = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    subject_type = Text(null=True, default=None)
    subject_id = Text(null=True, default=None)
    message_count = Integer(default=0)
    last_message_id = Text(null=True, default=None)
    last_message_at = Timestamptz()
    created_at = Timestamptz()


class MessageThreadParticipant(Table, tablename="message_thread_participants"):
    id = BigSerial(primary_key=True)
    thread_id = ForeignKey(MessageThread, on_delete=OnDelete.cascade, null=False)
    principal_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    last_read_message_id = Text(null=True, default=None)
    joined_at = Timestamptz()


class Message(Table, tablename="messages"):
    id = Text(primary_key=True)
    thread_id = ForeignKey(MessageThread, on_delete=OnDelete.cascade, null=False)
    sender_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    body = Text()
    created_at = Timestamptz()


class NotificationSnooze(Table, tablename="notification_snoozes"):
    id = Text(primary_key=True)
    notification_id = ForeignKey(Notification, on_delete=OnDelete.cascade, null=False)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    recipient_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    until = Timestamptz()
    workflow_id = Text(unique=True)
    start_requested_at = Timestamptz()
    workflow_started_at = Timestamptz(null=True, default=None)
    outcome = Text(null=True, default=None)
    ended_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()


class NotificationStreamHead(Table, tablename="notification_stream_heads"):
    recipient_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False, primary_key=True)
    last_seq = BigInt(default=0)


class NotificationChange(Table, tablename="notification_changes"):
    # The primary key is (recipient_id, seq) in SQL; Piccolo has no composite keys, so `seq` stands for it here.
    recipient_id = ForeignKey(Principal, on_delete=OnDelete.cascade, null=False)
    seq = BigInt(primary_key=True)
    notification_id = ForeignKey(Notification, on_delete=OnDelete.cascade, null=False)
    event_type = Text()
    changed_fields = Array(base_column=Text())
    status = Text()
    version = Integer()
    snoozed_until = Timestamptz(null=True, default=None)
    occurred_at = Timestamptz()


class NotificationStreamLease(Table, tablename="notification_stream_leases"):
    id = Text(primary_key=True)
    api_key_id = Text()
    expires_at = Timestamptz()


ALL_TABLES += (
    ConnectedApp,
    Notification,
    NotificationUnreadCount,
    NotificationOperation,
    NotificationAudit,
    NotificationProposal,
    NotificationPreference,
    NotificationDigest,
    NotificationDelivery,
    NotificationActionRedemption,
    NotificationSnooze,
    NotificationStreamHead,
    NotificationChange,
    NotificationStreamLease,
    MessageThread,
    MessageThreadParticipant,
    Message,
)


class ContextEntry(Table, tablename="context_entries"):
    id = Text(primary_key=True)
    seq = BigSerial()  # bigint GENERATED ALWAYS AS IDENTITY in SQL: the entry's key in the package index
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    term = Text()
    term_key = Text()
    summary = Text()
    contribution_type = Text()
    classification = Text()
    authority = Text()
    status = Text()
    provider_id = ForeignKey(ContextProvider, null=False)
    promoter_identity = Text()
    generated_at = Timestamptz()
    as_of = Timestamptz()
    evidence_count = Integer(default=0)
    provider_ids = Array(base_column=Text())
    supersedes = Text(null=True, default=None)
    superseded_by = Text(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()
    superseded_at = Timestamptz(null=True, default=None)


class ContextContribution(Table, tablename="context_contributions"):
    id = Text(primary_key=True)
    workspace_id = ForeignKey(Workspace, on_delete=OnDelete.cascade, null=False)
    provider_id = ForeignKey(ContextProvider, on_delete=OnDelete.cascade, null=False)
    project_id = ForeignKey(Project, on_delete=OnDelete.cascade, null=False)
    fingerprint = Text()
    content_fingerprint = Text()
    body = JSONB()
    term_key = Text()
    contribution_type = Text()
    classification = Text()
    promoter_identity = Text()
    generated_at = Timestamptz()
    state = Text()
    decision = Text(null=True, default=None)
    entry_id = Text(null=True, default=None)
    related_entry_id = Text(null=True, default=None)
    received_by = Text(null=True, default=None)
    created_at = Timestamptz()
    decided_at = Timestamptz(null=True, default=None)
    applied_at = Timestamptz(null=True, default=None)


class ContextEvidence(Table, tablename="context_evidence"):
    id = Text(primary_key=True)
    seq = BigSerial()  # bigint GENERATED ALWAYS AS IDENTITY in SQL
    entry_id = ForeignKey(ContextEntry, on_delete=OnDelete.cascade, null=False)
    contribution_id = ForeignKey(ContextContribution, on_delete=OnDelete.cascade, null=False)
    provider_id = ForeignKey(ContextProvider, on_delete=OnDelete.cascade, null=False)
    capability = Text()
    reference_kind = Text()
    reference_id = Text()
    reference_class = Text()
    as_of = Timestamptz()


class ContextEntryIndexLog(Table, tablename="context_entry_index_log"):
    seq = BigSerial(primary_key=True)
    entry_ids = Array(base_column=Text())
    created_at = Timestamptz()


ALL_TABLES += (ContextProvider, ContextEntry, ContextContribution, ContextEvidence, ContextEntryIndexLog)
