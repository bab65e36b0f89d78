-- An inbox that keeps up (issue 38): snooze on a durable timer, bulk moves as one operation, the caller's
-- own live feed, and the signed page behind an e-mail's "View" link (which needs no table).

-- A snoozed notification leaves the default list until `snoozed_until`; `snooze_id` names the snooze whose
-- timer may bring it back (a timer of an earlier snooze, or one unsnoozed since, finds another id and does
-- nothing). Its status stays one of the contract's four.
ALTER TABLE notifications ADD COLUMN snoozed_until timestamptz, ADD COLUMN snooze_id text;
CREATE INDEX notifications_inbox_snoozed_idx ON notifications (recipient_id, id DESC) WHERE snoozed_until IS NOT NULL;

-- Every snooze and its timer workflow (`ntsz_<snooze id>`): asked for in the snooze's transaction, started
-- by the outbox relay after the commit, restarted by any relay's sweep when its start is not known.
CREATE TABLE notification_snoozes (
    id                   text PRIMARY KEY,
    notification_id      text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    workspace_id         text NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
    recipient_id         text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    until                timestamptz NOT NULL,
    workflow_id          text NOT NULL UNIQUE,
    start_requested_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
    workflow_started_at  timestamptz,
    -- `woken` by its timer, or `ended` before it fired (unsnoozed, snoozed again, dismissed).
    outcome              text CHECK (outcome IN ('woken', 'ended')),
    ended_at             timestamptz,
    created_at           timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX notification_snoozes_notification_idx ON notification_snoozes (notification_id);
CREATE INDEX notification_snoozes_unstarted_idx ON notification_snoozes (start_requested_at)
    WHERE workflow_started_at IS NULL;
-- Snoozes still running, by their end: the relay's sweep ends those whose timer never fired.
CREATE INDEX notification_snoozes_active_idx ON notification_snoozes (until) WHERE outcome IS NULL;

-- The audit names each move's command (snooze moves no status) and the snooze's end; the timer that brings
-- a notification back records its move as `via: timer`.
ALTER TABLE notification_audit ADD COLUMN command text, ADD COLUMN snoozed_until timestamptz;
UPDATE notification_audit SET command = CASE to_status
    WHEN 'read' THEN 'read' WHEN 'acknowledged' THEN 'acknowledge' ELSE 'dismiss' END;
ALTER TABLE notification_audit ALTER COLUMN command SET NOT NULL;
ALTER TABLE notification_audit DROP CONSTRAINT notification_audit_via_check;
ALTER TABLE notification_audit ADD CONSTRAINT notification_audit_via_check
    CHECK (via IN ('rest', 'graphql', 'mcp', 'email', 'chat', 'demo', 'timer'));

-- A bulk move is one operation; its per-item answer is kept with it, so a retry after a lost answer gets it.
ALTER TABLE notification_operations ADD COLUMN result jsonb;

-- A drafted snooze keeps what the drafter asked for: an instant, or a duration counted from the apply.
ALTER TABLE notification_proposals ADD COLUMN snooze_until timestamptz, ADD COLUMN snooze_for text;

-- The live feed: each recipient's changes (created, status or snooze) numbered 1, 2, 3, ... in commit order.
-- The number is taken from the recipient's head row, locked until the change commits, so a reader that has
-- seen change n has seen every change before it: resuming after `Last-Event-ID: n` misses nothing.
CREATE TABLE notification_stream_heads (
    recipient_id  text PRIMARY KEY REFERENCES principals(id) ON DELETE CASCADE,
    last_seq      bigint NOT NULL DEFAULT 0
);

CREATE TABLE notification_changes (
    recipient_id     text NOT NULL REFERENCES principals(id) ON DELETE CASCADE,
    seq              bigint NOT NULL,
    notification_id  text NOT NULL REFERENCES notifications(id) ON DELETE CASCADE,
    event_type       text NOT NULL,
    changed_fields   text[] NOT NULL,
    status           text NOT NULL,
    version          integer NOT NULL,
    snoozed_until    timestamptz,
    occurred_at      timestamptz NOT NULL,
    PRIMARY KEY (recipient_id, seq)
);
-- The worker purges changes past the resume window by time.
CREATE INDEX notification_changes_occurred_idx ON notification_changes (occurred_at);

-- Tell every listening process whose feed moved, at commit (one payload per recipient and transaction).
CREATE FUNCTION notification_changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('groundwork_cache', 'inbox:' || r.recipient_id)
    FROM (SELECT DISTINCT recipient_id FROM appended) r;
    RETURN NULL;
END;
$$;
CREATE TRIGGER notification_changes_notify_after_insert AFTER INSERT ON notification_changes
    REFERENCING NEW TABLE AS appended FOR EACH STATEMENT EXECUTE FUNCTION notification_changes_notify();

-- Open streams per API key, across every API process: a lease each, renewed with every heartbeat, so a
-- process that dies holds none for longer than a lease.
CREATE TABLE notification_stream_leases (
    id          text PRIMARY KEY,
    api_key_id  text NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX notification_stream_leases_key_idx ON notification_stream_leases (api_key_id);
