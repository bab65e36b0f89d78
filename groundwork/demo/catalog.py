"""Demo workspace catalogue: the pure data that `groundwork up --demo` seeds.

The story: Harbourline Consulting delivers two client engagements under one portfolio.

* Marlow & Finch (a UK retailer, ~240 stores plus web) is moving off its in-house card gateway
  (projects PAY and CHK).
* Copperline Logistics (~3,200 vans and HGVs, 38 depots) is replacing its fleet tracking and
  dispatch tooling (projects FLT and DSP).

Principals are chosen so that every non-admin sees a different slice of the workspace:

============  =======  =============================================  ==================================
name          kind     memberships                                    what it demonstrates
============  =======  =============================================  ==================================
admin         user     (none; is_admin)                               workspace admin sees every project
maya          user     PAY lead, CHK lead                             lead across one engagement
tomas         user     FLT contributor, DSP contributor               writer across the other engagement
priya         user     viewer on PAY, CHK, FLT, DSP                   reads everything, writes nothing
jonas         user     CHK guest                                      sees CHK items, no context:read
ci-bot        service  PAY contributor                                service principal on one project
assistant     agent    PAY viewer, DSP viewer                         agent with read + context only
sam           user     (none)                                         sees nothing at all
============  =======  =============================================  ==================================

Only the standard library is used here; the seeder turns these records into rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DemoPrincipal:
    name: str  # login-like handle, lowercase
    display_name: str
    kind: str  # "user" | "service" | "agent"
    is_admin: bool  # workspace admin sees every project
    memberships: tuple[tuple[str, str], ...]  # (project_key, role)


@dataclass(frozen=True)
class DemoProject:
    key: str  # ^[A-Z][A-Z0-9]{1,9}$
    name: str
    engagement: str  # name of the DemoEngagement it belongs to


@dataclass(frozen=True)
class DemoEngagement:
    name: str


@dataclass(frozen=True)
class DemoWorkItem:
    project_key: str
    title: str
    status: str  # "backlog" | "todo" | "in_progress" | "in_review" | "done"
    sprint: str | None  # e.g. "2026-S23"; None for backlog items
    watchers: tuple[str, ...] = ()  # principal names
    fields: dict[str, object] = field(default_factory=dict)


def _md(*lines: str) -> str:
    """Join Markdown lines; keeps the long texts below readable."""
    return "\n".join(lines)


WORKSPACE_SLUG = "demo"
WORKSPACE_NAME = "Harbourline Consulting (demo)"
PORTFOLIO_NAME = "Harbourline Client Delivery Portfolio"

_RETAIL = "Marlow & Finch Payments Modernisation"
_LOGISTICS = "Copperline Logistics Fleet Platform"

ENGAGEMENTS: tuple[DemoEngagement, ...] = (
    DemoEngagement(name=_RETAIL),
    DemoEngagement(name=_LOGISTICS),
)

PROJECTS: tuple[DemoProject, ...] = (
    DemoProject(key="PAY", name="Payments Gateway Migration", engagement=_RETAIL),
    DemoProject(key="CHK", name="Checkout Rebuild", engagement=_RETAIL),
    DemoProject(key="FLT", name="Fleet Tracking", engagement=_LOGISTICS),
    DemoProject(key="DSP", name="Dispatch Planning", engagement=_LOGISTICS),
)

PRINCIPALS: tuple[DemoPrincipal, ...] = (
    DemoPrincipal(
        name="admin",
        display_name="Demo Admin",
        kind="user",
        is_admin=True,
        memberships=(),
    ),
    DemoPrincipal(
        name="maya",
        display_name="Maya Okafor",
        kind="user",
        is_admin=False,
        memberships=(("PAY", "lead"), ("CHK", "lead")),
    ),
    DemoPrincipal(
        name="tomas",
        display_name="Tomás Reyes",
        kind="user",
        is_admin=False,
        memberships=(("FLT", "contributor"), ("DSP", "contributor")),
    ),
    DemoPrincipal(
        name="priya",
        display_name="Priya Raman",
        kind="user",
        is_admin=False,
        memberships=(("PAY", "viewer"), ("CHK", "viewer"), ("FLT", "viewer"), ("DSP", "viewer")),
    ),
    DemoPrincipal(
        name="jonas",
        display_name="Jonas Lindqvist",
        kind="user",
        is_admin=False,
        memberships=(("CHK", "guest"),),
    ),
    DemoPrincipal(
        name="ci-bot",
        display_name="CI Bot",
        kind="service",
        is_admin=False,
        memberships=(("PAY", "contributor"),),
    ),
    DemoPrincipal(
        name="assistant",
        display_name="Delivery Assistant",
        kind="agent",
        is_admin=False,
        memberships=(("PAY", "viewer"), ("DSP", "viewer")),
    ),
    DemoPrincipal(
        name="sam",
        display_name="Sam Whitfield",
        kind="user",
        is_admin=False,
        memberships=(),
    ),
)


_PAY_ITEMS: tuple[DemoWorkItem, ...] = (
    DemoWorkItem(
        project_key="PAY",
        title="Tokenise stored cards in the PSP vault",
        status="done",
        sprint="2026-S22",
        watchers=("maya", "priya"),
        fields={
            "description": _md(
                "Marlow & Finch stores encrypted PANs in the legacy **PayHub** Oracle schema, which keeps "
                "the whole payments estate in PCI DSS scope.",
                "",
                "Replace stored PANs with PSP recurring tokens so that our services only ever hold a "
                "`token_ref`, the card brand and the last four digits. New card saves go through the "
                "PSP's hosted fields; nothing card-shaped may reach our logs, traces or databases.",
            ),
            "acceptance_criteria": _md(
                "- No table in the `payments` schema has a column holding PAN, CVV or full expiry date.",
                "- Saving a card on web and in the app returns a `token_ref`; the PAN never reaches our API.",
                "- A log scan (Luhn-valid 13-19 digit sequences) over 7 days of staging logs finds nothing.",
                "- QSA has reviewed the updated data-flow diagram.",
            ),
            "estimate": 8,
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Migrate 1.8M saved cards to PSP tokens",
        status="in_progress",
        sprint="2026-S23",
        watchers=("maya", "admin"),
        fields={
            "description": _md(
                "Bulk-migrate the ~1.8M saved cards from PayHub to the PSP using their encrypted "
                "card-import process. The export must be PGP-encrypted with the PSP's public key and sent "
                "over their SFTP endpoint; it may never land on a shared drive or a laptop.",
                "",
                "After import, map each returned token to our `customer_id` and mark the PayHub row for "
                "deletion. Finance wants this finished before the **31 August** PCI re-assessment.",
            ),
            "requirements": _md(
                "- Export runs on the PayHub database host; plaintext PANs exist only in memory there.",
                "- Migration is resumable by batch (50k cards per batch) and idempotent per `card_id`.",
                "- Cards the PSP rejects (expired, invalid Luhn) are reported by count, never by PAN.",
                "- Reconciliation report: cards exported = tokens mapped + cards rejected.",
            ),
            "estimate": 13,
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Investigate flaky settlement job",
        status="todo",
        sprint="2026-S23",
        watchers=("ci-bot", "maya"),
        fields={
            "description": "Investigate flaky settlement job. It failed twice last week.",
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Partial refunds on the refunds API",
        status="in_review",
        sprint="2026-S22",
        watchers=("maya",),
        fields={
            "description": _md(
                "`POST /v1/payments/{payment_id}/refunds` only supports full refunds today, so store staff "
                "issue manual credit notes for partially returned baskets (about 1,100 a week).",
                "",
                "Accept an optional `amount_minor` and allow several refunds until the captured amount is "
                "used up. Reject with `409 Conflict` if the refunds would exceed the capture, and require "
                "an `Idempotency-Key` header so till retries cannot refund twice.",
            ),
            "acceptance_criteria": _md(
                "- A refund without `amount_minor` refunds the remaining captured amount.",
                "- Two partial refunds of £10 and £15 on a £30 capture succeed; a third of £10 gets `409`.",
                "- Replaying a request with the same `Idempotency-Key` returns the original refund.",
                "- Refunds show in the till's transaction history within 60 seconds.",
            ),
            "estimate": 5,
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Move PSP API credentials into Vault",
        status="done",
        sprint="2026-S22",
        watchers=("maya", "ci-bot"),
        fields={
            "description": _md(
                "The PSP API key and the webhook HMAC secret are set as plain environment variables in the "
                "Helm values file, which lives in the deploy repository.",
                "",
                "Move both into HashiCorp Vault, inject them at pod start through the Vault agent, and "
                "rotate them once the move is live. The old API key must be revoked in the PSP customer "
                "area the same day.",
            ),
            "estimate": 3,
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Verify HMAC signatures on PSP webhooks",
        status="in_review",
        sprint="2026-S23",
        watchers=("maya", "ci-bot"),
        fields={
            "description": _md(
                "`POST /webhooks/psp` accepts AUTHORISATION, CAPTURE, REFUND and CHARGEBACK notifications "
                "without checking their HMAC signature, so anyone who finds the URL could mark an order "
                "as paid.",
                "",
                "Verify the signature on every notification item with the secret from Vault, reject "
                "mismatches with `401`, and log them at WARN with the PSP reference but no payload. Two "
                "secrets must be accepted at once during rotation.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Authorisation p99 latency under 350 ms",
        status="in_progress",
        sprint="2026-S23",
        watchers=("maya", "priya", "assistant"),
        fields={
            "description": _md(
                "Our own overhead on `POST /v1/payments/authorise` is **p99 820 ms** at Saturday peak "
                "(about 140 requests/s), on top of the PSP's response time. Trading sees this as the main "
                "cause of till queues on busy days.",
                "",
                "Profiling points at the synchronous fraud-score call and an N+1 query loading basket lines.",
            ),
            "acceptance_criteria": _md(
                "- p99 of our overhead <= 350 ms, measured at the ingress, in a 30-minute k6 run at 200 requests/s.",
                "- p50 <= 120 ms in the same run.",
                "- Error rate stays below 0.1%.",
                "- Latency panel added to the Payments Grafana board.",
            ),
            "estimate": 8,
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="3-D Secure 2 challenge flow for EU cards",
        status="todo",
        sprint="2026-S24",
        watchers=("maya",),
        fields={
            "description": _md(
                "From the Dublin store launch in October, EU-issued cards fall under PSD2 Strong Customer "
                "Authentication.",
                "",
                "Add the 3DS2 challenge flow through the PSP's native SDK on web and in the app's webview, "
                "and request exemptions (low value under €30, trusted beneficiary) where the issuer allows "
                "them. Report frictionless rate and challenge abandonment per issuer country.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Daily settlement reconciliation report for Finance",
        status="todo",
        sprint="2026-S24",
        watchers=("maya", "priya"),
        fields={
            "description": _md(
                "Finance reconciles PSP settlement files against till and web sales by hand every morning; "
                "it takes two people until about 11:00.",
                "",
                "Produce a daily report that matches the PSP settlement detail report to our captures by "
                "`psp_reference`, flagging unmatched lines and fee differences over £0.50.",
                "",
                "In the last review Finance also asked for chargeback ageing, FX gain/loss for the Irish "
                "stores and a monthly VAT summary. None of these are in the statement of work.",
            ),
            "estimate": 8,
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Loyalty points as a payment method",
        status="backlog",
        sprint=None,
        watchers=("priya",),
        fields={
            "description": _md(
                "Marketing wants customers to pay part of an order with **Finch Rewards** points. This "
                "needs a balance-check and burn API from the loyalty vendor, which is not yet contracted.",
                "",
                "Raised at the 12 May steering meeting; not part of the agreed payments scope.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="PAY",
        title="Retire PayHub stored procedures",
        status="backlog",
        sprint=None,
        watchers=(),
        fields={
            "description": _md(
                "Once every saved card is tokenised and refunds run through the PSP, decommission the 46 "
                "PayHub stored procedures and drop the `PAYHUB` Oracle schema.",
                "",
                "Confirm with the data warehouse team that no nightly extract still reads from it.",
            ),
        },
    ),
)


_CHK_ITEMS: tuple[DemoWorkItem, ...] = (
    DemoWorkItem(
        project_key="CHK",
        title="Guest checkout without account creation",
        status="done",
        sprint="2026-S22",
        watchers=("maya", "jonas"),
        fields={
            "description": _md(
                "About 38% of basket abandonment happens on the forced *create account* step.",
                "",
                "Let shoppers check out with an email address and delivery address only, and offer account "
                "creation on the confirmation page. Guest orders must still be retrievable through the "
                "order-tracking link sent by email.",
            ),
            "acceptance_criteria": _md(
                "- A shopper with no account can place an order without setting a password.",
                "- The confirmation email contains a tracking link that works without signing in.",
                "- Creating an account from the confirmation page attaches the guest order to it.",
            ),
            "estimate": 5,
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Prevent duplicate orders on double submit",
        status="done",
        sprint="2026-S22",
        watchers=("maya",),
        fields={
            "description": _md(
                "Customer service logged 212 duplicate orders in April, almost all from shoppers pressing "
                "*Place order* twice on slow connections.",
                "",
                "Generate an idempotency key per checkout attempt in the browser, send it on "
                "`POST /v1/orders`, and have the order service return the original order for a repeated "
                "key within 24 hours. Disabling the button after the first click is a secondary guard only.",
            ),
            "estimate": 3,
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Postcode address lookup",
        status="in_review",
        sprint="2026-S22",
        watchers=("jonas",),
        fields={
            "description": _md(
                "Replace free-text address entry with postcode lookup through the Loqate Capture API, "
                "falling back to manual entry if the API does not answer within 1.5 s.",
                "",
                "The client's Loqate contract is capped at 400k lookups a month, so only call the API on "
                "a complete postcode. Store the returned UDPRN with the address for the carrier "
                "integration.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Apple Pay and Google Pay on web checkout",
        status="in_progress",
        sprint="2026-S23",
        watchers=("maya", "priya"),
        fields={
            "description": _md(
                "Add Apple Pay and Google Pay buttons to the payment step through the PSP's drop-in component.",
                "",
                "Apple Pay needs the merchant domain association file served from `/.well-known/` on "
                "`www.marlowandfinch.co.uk`, which the client's web agency controls; that request has been "
                "open for nine days.",
            ),
            "requirements": _md(
                "- Buttons appear only when the browser and device support the wallet.",
                "- Changing the shipping address in the wallet sheet recalculates the delivery charge.",
                "- Wallet payments use the same order state machine as card payments.",
            ),
            "estimate": 8,
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Re-price the basket when a promotion expires mid-session",
        status="in_progress",
        sprint="2026-S23",
        watchers=("maya",),
        fields={
            "description": _md(
                "Promotions end at midnight, but a basket priced at 23:58 can still be paid at 00:05 at the "
                "promotional price because prices are cached in the session.",
                "",
                "Re-price the basket through the pricing service when the payment step loads and again on "
                "`POST /v1/orders`, and tell the shopper clearly if the total changed. Trading agreed we "
                "honour the old price if the payment was already authorised.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Session token expires at the payment step",
        status="todo",
        sprint="2026-S23",
        watchers=("maya", "jonas"),
        fields={
            "description": _md(
                "Shoppers who take longer than 15 minutes are sent back to sign-in when they press *Pay*, "
                "because the access token expires and is only refreshed on page navigation.",
                "",
                "Refresh the access token silently before it expires, keep the refresh token in an "
                "`HttpOnly`, `SameSite=Strict` cookie, and never store tokens in `localStorage`. Security "
                "asked that refresh tokens are still revoked on password change.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Checkout LCP under 2.5 s on mobile",
        status="todo",
        sprint="2026-S23",
        watchers=("priya",),
        fields={
            "description": _md(
                "Field data (CrUX) shows checkout LCP at **4.1 s** at the 75th percentile on mobile, "
                "against the 2.5 s target in the statement of work.",
                "",
                "The main causes are a 640 KB JavaScript bundle that includes the full promotions engine, "
                "and three third-party tag scripts loaded synchronously.",
            ),
            "acceptance_criteria": _md(
                "- Lab LCP <= 2.5 s on a Moto G Power profile with simulated 4G, for every checkout step.",
                "- Initial JavaScript for the first checkout step <= 200 KB compressed.",
                "- Third-party tags load only after consent and never block rendering.",
            ),
            "estimate": 5,
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="WCAG 2.2 AA fixes from the accessibility audit",
        status="todo",
        sprint="2026-S24",
        watchers=("jonas",),
        fields={
            "description": _md(
                "The external audit on 3 June found 23 issues on checkout, 6 of them blocking: error "
                "messages not announced to screen readers, focus lost after the address lookup, and a "
                "3.1:1 contrast ratio on the primary button.",
                "",
                "Fix all blocking and serious issues before the client's re-audit.",
            ),
            "acceptance_criteria": _md(
                "- All 6 blocking and 9 serious findings closed, each with a before/after note.",
                "- Checkout can be completed with keyboard only and with VoiceOver on iOS.",
                "- axe-core reports no violations on any checkout step in CI.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Refresh the order confirmation email",
        status="todo",
        sprint="2026-S24",
        watchers=(),
        fields={
            "description": "Update the order confirmation email to match the new checkout design.",
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Split payment with gift card and bank card",
        status="backlog",
        sprint=None,
        watchers=("maya", "jonas"),
        fields={
            "description": _md(
                "Store teams asked whether online shoppers can pay with a Marlow & Finch gift card and "
                "cover the balance with a bank card.",
                "",
                "This depends on partial refunds in PAY and on the gift card provider exposing a "
                "reserve/release API. It is not in the current rebuild scope; parked until the client "
                "confirms budget.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="CHK",
        title="Click and collect store picker",
        status="backlog",
        sprint=None,
        watchers=("jonas",),
        fields={
            "description": _md(
                "Let shoppers choose one of the 240 stores for free collection, listing stores within 25 "
                "miles by distance with stock availability from the store inventory feed.",
                "",
                "The inventory feed only refreshes every 4 hours, so the picker must cope with stale "
                "stock. The client's product owner wants this in phase 1; the delivery lead sees it as "
                "phase 2.",
            ),
        },
    ),
)


_FLT_ITEMS: tuple[DemoWorkItem, ...] = (
    DemoWorkItem(
        project_key="FLT",
        title="Ingest telematics pings over MQTT",
        status="done",
        sprint="2026-S22",
        watchers=("tomas", "priya"),
        fields={
            "description": _md(
                "Copperline's 3,200 vehicles report position, speed, ignition state and fuel level every "
                "10 s through their telematics units.",
                "",
                "Subscribe to the vendor's MQTT broker, validate each message against the v2 payload "
                "schema, and write it to the `vehicle_positions` table. Invalid messages go to a "
                "dead-letter topic with the validation error attached.",
            ),
            "acceptance_criteria": _md(
                "- Sustains 1,000 messages/s for one hour with consumer lag under 5 s.",
                "- A message failing validation appears on the dead-letter topic with its reason.",
                "- Restarting the consumer loses no messages (QoS 1, persistent session).",
            ),
            "test_plan": _md(
                "1. Replay one day of captured broker traffic at 3x speed against staging.",
                "2. Inject 1% malformed messages and check the dead-letter counts.",
                "3. Kill the consumer pod mid-run and compare row counts with the replay source.",
            ),
            "estimate": 8,
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Backfill 14 months of trip history from FleetView",
        status="in_progress",
        sprint="2026-S23",
        watchers=("tomas", "admin"),
        fields={
            "description": _md(
                "Route-compliance reports need 14 months of history, which only exists in the legacy "
                "**FleetView** Oracle database (about 2.1 billion position rows, 380 GB).",
                "",
                "Export month by month to Parquet, convert coordinates from OSGB36 to WGS84, and load into "
                "the new store keeping the same vehicle IDs. The FleetView licence ends on 30 September, "
                "after which we lose read access.",
            ),
            "requirements": _md(
                "- Row counts per vehicle per day match FleetView exactly, or the difference is explained.",
                "- Backfill must not slow live ingest: throttle to keep ingest lag under 10 s.",
                "- Each month can be re-run on its own without creating duplicates.",
            ),
            "risks": _md(
                "- FleetView export speed has not been measured; at 20 GB/hour the backfill takes ~19 "
                "hours of export time alone.",
                "- 2025 data has vehicle IDs reused after re-registration; mapping rules are not agreed.",
            ),
            "estimate": 13,
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Live fleet map with 10-second refresh",
        status="in_review",
        sprint="2026-S23",
        watchers=("tomas",),
        fields={
            "description": _md(
                "Operations managers want a live map of every vehicle in their region, refreshing every 10 s.",
                "",
                "Stream positions over a WebSocket filtered by the user's region instead of polling the "
                "REST API. Vehicles with no ping for 5 minutes are shown grey with the time of their last "
                "ping.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Position API p99 under 200 ms at 5,000 vehicles",
        status="todo",
        sprint="2026-S23",
        watchers=("tomas", "priya"),
        fields={
            "description": _md(
                "`GET /v1/vehicles/positions?region=...` takes **p99 1.4 s** with the 3,200-vehicle test "
                "fleet, because it scans the last hour of pings to find each vehicle's latest position.",
                "",
                "Keep a latest-position table updated on ingest. Copperline plans to add 1,800 "
                "subcontractor vehicles next year, so size for 5,000.",
            ),
            "acceptance_criteria": _md(
                "- p99 < 200 ms at 5,000 vehicles and 50 requests/s, measured over 15 minutes.",
                "- Returned positions are at most 15 s behind the latest ingested ping.",
            ),
            "estimate": 5,
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Per-vehicle client certificates for MQTT",
        status="in_progress",
        sprint="2026-S23",
        watchers=("tomas", "priya", "admin"),
        fields={
            "description": _md(
                "Every telematics unit authenticates to the broker with the same username and password, "
                "and that password turned up in a support ticket attachment in March.",
                "",
                "Move to per-device X.509 client certificates issued by a private CA, and revoke a "
                "certificate when its unit is removed from a vehicle. The vendor needs firmware 4.2 on "
                "every unit for mutual TLS; 410 units are still on 3.x.",
            ),
            "risks": _md(
                "- Firmware upgrades are over the air and need the vehicle parked with ignition on; "
                "the vendor quotes 6 weeks for 410 units.",
                "- The shared password stays valid until the last 3.x unit is upgraded.",
            ),
            "estimate": 8,
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Investigate duplicate pings after modem reconnect",
        status="todo",
        sprint="2026-S23",
        watchers=("tomas",),
        fields={
            "description": "Some vehicles send the same pings twice after losing signal. Look into it.",
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Geofence alerts for depot arrival and departure",
        status="todo",
        sprint="2026-S24",
        watchers=("tomas",),
        fields={
            "description": _md(
                "Depot managers want a notification when a vehicle enters or leaves one of the 38 depot "
                "geofences, replacing phone calls from drivers.",
                "",
                "Geofences are polygons maintained by Copperline's property team. Alerts must fire within "
                "60 s of the crossing and must not flap when GPS jitter puts a parked vehicle on the "
                "boundary.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Driver location data retention and erasure",
        status="todo",
        sprint="2026-S24",
        watchers=("priya",),
        fields={
            "description": _md(
                "Position data is personal data whenever a driver is assigned to the vehicle. Copperline's "
                "DPO asked for a 13-month retention limit and a process for subject access and erasure "
                "requests.",
                "",
                "Add a nightly retention job and a way to export every position linked to a driver for a date range.",
            ),
            "requirements": _md(
                "- Positions older than 13 months are deleted nightly, and from backups within 35 days.",
                "- A subject access export for one driver and one year completes within 10 minutes.",
                "- Aggregated data with no driver or vehicle identifier may be kept longer.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Evaluate alternative map tile provider",
        status="backlog",
        sprint=None,
        watchers=("tomas",),
        fields={
            "description": _md(
                "The map tile contract renews in January at roughly 3x today's price because of the volume "
                "the live map generates.",
                "",
                "Compare two alternatives on cost at 12M tile loads a month, UK coverage of HGV "
                "restrictions, and licence terms for caching tiles.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="FLT",
        title="Fuel card transaction matching",
        status="backlog",
        sprint=None,
        watchers=("priya",),
        fields={
            "description": _md(
                "Copperline's finance team asked us to match fuel card transactions against vehicle "
                "location and flag fills where the vehicle was not at the filling station.",
                "",
                "It came up in the June review as a *quick add-on*, but it needs a new feed from the fuel "
                "card provider and is outside the fleet tracking statement of work.",
            ),
        },
    ),
)


_DSP_ITEMS: tuple[DemoWorkItem, ...] = (
    DemoWorkItem(
        project_key="DSP",
        title="Import next-day orders from the WMS over SFTP",
        status="done",
        sprint="2026-S22",
        watchers=("tomas",),
        fields={
            "description": _md(
                "Copperline's WMS drops a CSV of next-day orders (usually 9,000-14,000 lines) on SFTP at 18:00.",
                "",
                "Pick up the file, validate it, and create delivery jobs with address, time window, weight "
                "and volume. If more than 2% of rows fail validation, reject the whole file and alert the "
                "on-call dispatcher.",
            ),
            "acceptance_criteria": _md(
                "- A valid 14,000-line file becomes delivery jobs within 3 minutes of landing.",
                "- A file with 3% bad rows is rejected and the dispatcher is alerted with the row numbers.",
                "- The same file delivered twice creates no duplicate jobs.",
            ),
            "test_plan": _md(
                "1. Run the importer against the last 20 production files (anonymised).",
                "2. Feed a file with malformed postcodes and negative weights.",
                "3. Re-deliver a processed file and check job counts.",
            ),
            "estimate": 5,
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Dispatcher sign-in with Copperline Entra ID",
        status="done",
        sprint="2026-S22",
        watchers=("tomas", "priya"),
        fields={
            "description": _md(
                "Dispatchers share three local accounts today, so nothing on the board can be traced to a person.",
                "",
                "Replace them with OIDC sign-in against Copperline's Microsoft Entra ID, mapping the "
                "`Dispatch-Planners` and `Dispatch-Supervisors` groups to roles. Access tokens live 10 "
                "minutes, and sessions end when the user is disabled in Entra.",
            ),
            "estimate": 5,
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Proof of delivery photo upload in the driver app",
        status="in_review",
        sprint="2026-S22",
        watchers=("tomas", "assistant"),
        fields={
            "description": _md(
                "Drivers take a photo at the door as proof of delivery.",
                "",
                "Upload straight to object storage with a pre-signed URL valid for 5 minutes, compress to "
                "under 400 KB on the device, and queue uploads while offline. Photos attach to the "
                "delivery job and stay visible to customer service for 90 days.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Next-day route optimisation",
        status="in_progress",
        sprint="2026-S23",
        watchers=("tomas", "assistant", "priya"),
        fields={
            "description": _md(
                "Build next-day routes for about 110 vans per depot from the imported jobs, respecting "
                "time windows, vehicle capacity (weight and volume), shift length and the 45-minute break "
                "rule.",
                "",
                "We are using the routing vendor's optimisation API rather than writing a solver. The "
                "contract is still with Copperline procurement, so development runs on a trial key limited "
                "to 500 stops per request.",
            ),
            "requirements": _md(
                "- No route exceeds vehicle weight or volume capacity.",
                "- No driver's shift exceeds 10 hours including breaks.",
                "- At least 97% of jobs are planned inside their time window on the reference day.",
            ),
            "risks": _md(
                "- If procurement does not sign by sprint 2026-S24, production has no routing key.",
                "- The trial key's 500-stop limit hides how the API behaves at 1,200 stops.",
            ),
            "estimate": 13,
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Plan generation under 90 s for 1,200 stops",
        status="todo",
        sprint="2026-S23",
        watchers=("tomas",),
        fields={
            "description": _md(
                "Dispatchers run the plan at 19:00 and must publish it to drivers by 19:30.",
                "",
                "Plan generation for the largest depot (Daventry, about 1,200 stops) must finish within "
                "90 s end to end, including the distance matrix. The prototype takes 6 minutes because it "
                "requests the matrix in 500-stop chunks one after another.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Drag-and-drop job reassignment on the dispatcher board",
        status="todo",
        sprint="2026-S23",
        watchers=("tomas",),
        fields={
            "description": _md(
                "When a van breaks down or a driver calls in sick, dispatchers move jobs between routes by "
                "phone and spreadsheet.",
                "",
                "Let them drag jobs between routes on the board. Each move re-sequences the affected "
                "routes and shows the new ETAs, and any time windows that will now be missed, before the "
                "dispatcher confirms.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Shift planner shows overnight shifts on the wrong day",
        status="in_progress",
        sprint="2026-S23",
        watchers=(),
        fields={
            "description": "Shifts that cross midnight show on the wrong day.",
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="SMS delivery window notifications",
        status="todo",
        sprint="2026-S24",
        watchers=("tomas", "priya"),
        fields={
            "description": _md(
                "Send customers an SMS with a 2-hour delivery window the evening before, and an update "
                "when the driver is two stops away.",
                "",
                "Use Twilio through Copperline's existing account; every message needs the opt-out text "
                "required by the client's marketing policy. Expected volume is about 250k messages a "
                "month.",
            ),
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Migrate depot and vehicle master data from spreadsheets",
        status="todo",
        sprint="2026-S24",
        watchers=("tomas",),
        fields={
            "description": _md(
                "Depot addresses, loading bay counts, vehicle capacities and driver shift patterns live in "
                "38 depot spreadsheets with inconsistent columns.",
                "",
                "Write a one-off import with a validation report per depot, and agree a cut-over date after "
                "which edits happen only in Dispatch.",
            ),
            "estimate": 5,
        },
    ),
    DemoWorkItem(
        project_key="DSP",
        title="Customer self-service rebooking portal",
        status="backlog",
        sprint=None,
        watchers=("priya",),
        fields={
            "description": _md(
                "Copperline's account team wants end customers to rebook missed deliveries through a web "
                "portal instead of calling the contact centre.",
                "",
                "It was called *small* at the last steering meeting, but it needs customer authentication, "
                "slot capacity rules and an integration with their CRM.",
            ),
        },
    ),
)


WORK_ITEMS: tuple[DemoWorkItem, ...] = _PAY_ITEMS + _CHK_ITEMS + _FLT_ITEMS + _DSP_ITEMS
