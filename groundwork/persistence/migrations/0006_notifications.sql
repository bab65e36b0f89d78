-- Notifications and messaging (contract v0.2): notifications with their audit and operations,
-- change proposals, preferences, e-mail and chat deliveries and digests, action-link redemptions,
-- message threads, and connected apps with the keys bound to them.

CREATE TABLE connected_apps (
    id               text PRIMARY KEY,
    workspace_id     text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    name             text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('assistant', 'ide', 'chat', 'email')),
    direction        text NOT NULL CHECK (direction IN ('read', 'propose', 'deliver')),
    field_authority  text[] NOT NULL DEFAULT '{}',
    provenance       text NOT NULL,
    conflict         text NOT NULL CHECK (conflict IN ('reject')),
    status           text NOT NULL DEFAULT 'registered' CHECK (status IN ('registered', 'active', 'inactive')),
    registered_by    text,
    activated_by     text,
    activated_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (workspace_id, name)
);
CREATE INDEX connected_apps_workspace_idx ON connected_apps (workspace_id, id DESC);

-- A key bound to an app works only while the app is active, within the app's direction.
ALTER TABLE api_keys ADD COLUMN app_id text REFERENCES connected_apps(id) ON DELETE CASCADE;

CREATE TABLE notifications (
    id                  text PRIMARY KEY,
    workspace_id        text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    recipient_id        text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    -- The outbox event it was created from: one notification per event and recipient, ever.
    event_id            text NOT NULL,
    event_type          text NOT NULL,
    source_kind         text NOT NULL,
    source_external_id  text NOT NULL,
    resource_type       text NOT NULL,
    resource_id         text NOT NULL,
    title               text NOT NULL,
    body                text NOT NULL,
    status              text NOT NULL DEFAULT 'unread'
                        CHECK (status IN ('unread', 'read', 'acknowledged', 'dismissed')),
    version             integer NOT NULL DEFAULT 1,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at          timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (event_id, recipient_id)
);
-- The inbox: newest first per recipient (ids are ULIDs, so id order is creation order).
CREATE INDEX notifications_inbox_idx ON notifications (recipient_id, id DESC);
CREATE INDEX notifications_inbox_status_idx ON notifications (recipient_id, status, id DESC);

-- Unread notifications per recipient, kept in the transaction of every change, so `unreadCount`
-- never counts rows.
CREATE TABLE notification_unread_counts (
    recipient_id  text PRIMARY KEY REFERENCES principals(id) ON DELETE CASCADE,
    unread        integer NOT NULL DEFAULT 0 CHECK (unread >= 0)
);

-- A lifecycle command as a whole (`op_`): one notification, or many for read-all.
CREATE TABLE notification_operations (
    id                text PRIMARY KEY,
    workspace_id      text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    actor_id          text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    command           text NOT NULL,
    via               text NOT NULL,
    app_id            text,
    notification_ids  text[] NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX notification_operations_actor_idx ON notification_operations (actor_id, id DESC);

-- Every move of every notification: who, through which door, from and to, why, as which operation.
CREATE TABLE notification_audit (
    id               text PRIMARY KEY,
    notification_id  text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    operation_id     text NOT NULL REFERENCES notification_operations(id) ON DELETE CASCADE,
    actor_id         text NOT NULL,
    via              text NOT NULL CHECK (via IN ('rest', 'graphql', 'mcp', 'email', 'chat', 'demo')),
    app_id           text,
    provenance       text,
    from_status      text NOT NULL,
    to_status        text NOT NULL,
    version_after    integer NOT NULL,
    reason           text,
    occurred_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX notification_audit_notification_idx ON notification_audit (notification_id, occurred_at);
CREATE INDEX notification_audit_operation_idx ON notification_audit (operation_id);

-- GraphQL / MCP drafts: persisted, single-use, expiring proposals that change nothing themselves.
CREATE TABLE notification_proposals (
    id                 text PRIMARY KEY,
    workspace_id       text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    principal_id       text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    notification_id    text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    requested_outcome  text NOT NULL,
    command            text,
    from_status        text NOT NULL,
    to_status          text,
    expected_version   integer,
    reason             text,
    evidence_refs      jsonb NOT NULL DEFAULT '[]'::jsonb,
    validation_errors  jsonb NOT NULL DEFAULT '[]'::jsonb,
    conflicts          jsonb NOT NULL DEFAULT '[]'::jsonb,
    app_id             text,
    provenance         text,
    created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at         timestamptz NOT NULL,
    applied_at         timestamptz,
    operation_id       text
);
CREATE INDEX notification_proposals_principal_idx ON notification_proposals (principal_id, id DESC);

CREATE TABLE notification_preferences (
    principal_id        text PRIMARY KEY REFERENCES principals(id) ON DELETE CASCADE,
    workspace_id        text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    email_enabled       boolean NOT NULL DEFAULT false,
    email_address       text,
    email_digest        text NOT NULL DEFAULT 'immediate' CHECK (email_digest IN ('immediate', 'hourly', 'daily')),
    chat_enabled        boolean NOT NULL DEFAULT false,
    -- An incoming-webhook URL is a credential: sealed with AES-GCM under GROUNDWORK_SECRET_KEY.
    chat_webhook_url    bytea,
    events              jsonb NOT NULL DEFAULT '{}'::jsonb,
    updated_at          timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- One e-mail digest per recipient and window; its workflow sends it when the window ends.
CREATE TABLE notification_digests (
    id                   bigserial PRIMARY KEY,
    workspace_id         text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    recipient_id         text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    cadence              text NOT NULL CHECK (cadence IN ('hourly', 'daily')),
    window_start         timestamptz NOT NULL,
    window_end           timestamptz NOT NULL,
    workflow_id          text NOT NULL UNIQUE,
    status               text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed', 'sent', 'empty', 'failed')),
    attempts             integer NOT NULL DEFAULT 0,
    last_error           text,
    start_requested_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    workflow_started_at  timestamptz,
    sent_at              timestamptz,
    created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (recipient_id, cadence, window_start)
);
CREATE INDEX notification_digests_unstarted_idx ON notification_digests (start_requested_at)
    WHERE workflow_started_at IS NULL;

-- One delivery per notification and channel: sent by its own workflow, or by its digest's.
CREATE TABLE notification_deliveries (
    id                   bigserial PRIMARY KEY,
    workspace_id         text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    notification_id      text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    recipient_id         text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    channel              text NOT NULL CHECK (channel IN ('email', 'chat')),
    digest_id            bigint REFERENCES notification_digests(id) ON DELETE CASCADE,
    workflow_id          text UNIQUE,
    status               text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'skipped')),
    attempts             integer NOT NULL DEFAULT 0,
    last_error           text,
    start_requested_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    workflow_started_at  timestamptz,
    sent_at              timestamptz,
    created_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (notification_id, channel)
);
CREATE INDEX notification_deliveries_digest_idx ON notification_deliveries (digest_id) WHERE digest_id IS NOT NULL;
CREATE INDEX notification_deliveries_unstarted_idx ON notification_deliveries (start_requested_at)
    WHERE workflow_started_at IS NULL AND workflow_id IS NOT NULL;

-- Action links are signed and expiring; a redemption row makes each one single-use.
CREATE TABLE notification_action_redemptions (
    link_id          text PRIMARY KEY,
    notification_id  text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    operation_id     text,
    expires_at       timestamptz NOT NULL,
    redeemed_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE message_threads (
    id               text PRIMARY KEY,
    workspace_id     text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    title            text NOT NULL,
    created_by       text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    subject_type     text CHECK (subject_type IN ('project', 'work_item')),
    subject_id       text,
    message_count    integer NOT NULL DEFAULT 0,
    last_message_id  text,
    last_message_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    created_at       timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE TABLE message_thread_participants (
    id                    bigserial PRIMARY KEY,
    thread_id             text NOT NULL REFERENCES message_threads(id) ON DELETE CASCADE,
    principal_id          text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    -- The newest message this participant has read (message ids are ULIDs, so they order by time).
    last_read_message_id  text,
    joined_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (thread_id, principal_id)
);
CREATE INDEX message_thread_participants_principal_idx ON message_thread_participants (principal_id);

CREATE TABLE messages (
    id          text PRIMARY KEY,
    thread_id   text NOT NULL REFERENCES message_threads(id) ON DELETE CASCADE,
    sender_id   text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    body        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX messages_thread_idx ON messages (thread_id, id DESC);
