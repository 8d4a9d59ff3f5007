"""Settings of one queue manager process, each read from a ``QSG_`` environment variable.

The CLI flags of docs/api.md §11 map one to one onto these fields (``--redis-url`` is ``QSG_REDIS_URL``).
"""

from __future__ import annotations

import socket
from typing import Literal

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.names import validate_qmgr_name


class Settings(BaseSettings):
    """Configuration of a queue manager (``qsg serve``) and of the CLI."""

    model_config = SettingsConfigDict(env_prefix="QSG_", extra="ignore")

    qmgr: str = Field("QM1", description="Queue manager name (1-4 chars, z/OS rules)")
    qsg: str = Field("QSG1", description="Queue-sharing group name (1-4 chars, z/OS rules)")
    host: str = Field("127.0.0.1", description="Address the REST API listens on")
    port: int = Field(9441, ge=0, le=65535, description="Port the REST API listens on")
    redis_url: str = Field("redis://127.0.0.1:6379/0", description="The coupling facility")
    database_url: str = Field("sqlite:///qsg.db", description="The shared repository")
    activity_dir: str = Field("./activity", description="Where activity logs are written")
    activity_enabled: bool = Field(True, description="Record every MQI call and happening in the activity log")
    activity_store: str = Field(
        "", description="Where closed activity files go: a folder or a URI (s3://, hdfs://, ...); "
                        "empty = activity_dir")
    activity_rotate_s: float = Field(
        600.0, gt=0, description="An activity file is closed and shipped after this many seconds")
    activity_rotate_mb: float = Field(64.0, gt=0, description="... or when it reaches this size (MB)")
    activity_buffer: int = Field(20_000, gt=0, description="Activity records held in memory at most")
    activity_overflow: Literal["wait", "drop"] = Field(
        "wait", description="When the buffer is full (disk too slow): calls wait for room, or records "
                            "are dropped and counted")
    mqlog_dir: str = Field(
        "./mqlog", description="The queue managers' logs of persistent changes to RECOVER(YES) CF structures "
                               "and the structure backups: one folder every QM of the group can read")
    mqlog_sync: Literal["commit", "none"] = Field(
        "commit", description="'commit': each logged change is forced to disk (fsync) before the call returns; "
                              "'none': left to the operating system (survives a QM crash, not a machine crash)")
    reports_dir: str = Field(
        "./reports", description="Analytics output served at /reports (qsg analytics run --output)")
    idle_timeout_s: float = Field(
        600.0, gt=0, description="A connection idle this long ends and its unit of work is backed out"
    )
    max_wait_ms: int = Field(
        300_000, gt=0, description="Upper bound of a get-with-wait (also for wait_ms -1)"
    )
    broadcast_timeout_ms: int = Field(
        2000, gt=0, description="How long a definition change waits for the other QMs' acknowledgements"
    )
    heartbeat_interval_s: float = Field(1.0, gt=0, description="How often this QM heartbeats")
    heartbeat_ttl_s: float = Field(5.0, gt=0, description="A QM whose heartbeat is older is failed")
    cf_timeout_s: float = Field(
        5.0, ge=0.5, le=60.0,
        description="How long a coupling-facility call waits for its reply. A state-changing call carries a deadline "
                    "half a second shorter and does nothing when the CF runs it later (a stalled Redis); a call "
                    "without a reply answers MQRC_CONNECTION_BROKEN (outcome unknown, unit of work backed out)")
    cf_replica_acks: int = Field(
        0, ge=0, le=16,
        description="After every state-changing coupling-facility call, wait (Redis WAIT) until this many replicas "
                    "of the structure's master acknowledged it, so a failover cannot lose acknowledged work; "
                    "0 = do not wait (replication stays asynchronous)")
    cf_replica_timeout_ms: int = Field(
        500, gt=0, le=4000,  # below the CF client's 5 s socket timeout: a WAIT must never look like a lost reply
        description="How long a call waits for cf_replica_acks acknowledgements; when fewer come, the call "
                    "succeeds all the same (the master has the write) and the shortfall is logged and counted")
    pageset_url: str = Field(
        "", description="The queue manager's page set (its private queues): a redis:// URL of a server of its own; "
                        "empty = a redis-server the queue manager starts by itself, its data under "
                        "<mqlog_dir>/<QSG>/pagesets/<QM>/")
    pageset_fsync: Literal["always", "everysec"] = Field(
        "always", description="AOF fsync policy of the embedded page set: 'always' = a persistent message whose "
                              "call returned survives a crash of the queue manager or of the machine")
    log_level: str = Field("info", description="Log level of the server")
    auth: Literal["on", "off"] = Field(
        "on", description="Authentication and authorization of every caller (on by default; 'off' only when "
                          "the operator says so)")
    default_user: str = Field(
        "", description="UserIdentifier (and DISPLAY CONN USERID) of connections while auth is off, and of the "
                        "queue manager's own messages; empty = the operating-system user running the queue manager")
    auth_cache_s: float = Field(30.0, ge=0, description="How long a QM keeps a user or API key read from the "
                                                        "repository (REFRESH SECURITY empties it at once)")
    auth_fail_limit: int = Field(
        10, ge=1, description="Failed authentications of one user name within auth_fail_window_s after which a "
                              "credential of that user that would need a password check is refused at once (2035)")
    auth_fail_limit_client: int = Field(
        30, ge=1, description="The same for one client address (all user names together)")
    auth_fail_window_s: float = Field(60.0, gt=0, description="The window of the failed-authentication throttle")
    trusted_proxies: str = Field(
        "", description="Comma-separated addresses or networks (CIDR) of entry points (qsg gateway, a load "
                        "balancer) whose X-Forwarded-For names the client, so that the failed-authentication "
                        "throttle and the logs see the client's address; empty = nobody's (the header is ignored)")
    allowed_origins: str = Field(
        "", description="Comma-separated web origins (scheme://host:port) besides the queue manager's own whose "
                        "pages may open a session (WebSocket) or send state-changing calls, e.g. the entry point's")
    metrics_access: Literal["user", "summary", "admin"] = Field(
        "user", description="Who may read /metrics with authentication on: 'user' any authenticated user, "
                            "'summary' any user but per-queue series only for MQSC administrators, 'admin' only "
                            "MQSC administrators")
    tls_cert: str = Field("", description="PEM certificate (chain) to serve HTTPS with; empty = plain HTTP")
    tls_key: str = Field("", description="PEM private key of tls_cert")
    tls_ca: str = Field(
        "", description="CA bundle this QM verifies the other members of its group with when it calls them over "
                        "https; empty = the system's trust store plus tls_cert when it is self-signed")
    ltpa_expiry_s: float = Field(7200.0, gt=0, description="Lifetime of an IBM REST login token (LtpaToken2)")
    advertise_url: str = Field(
        "", description="The URL the other queue managers reach this one at (e.g. http://qm1:9441 in a container "
                        "network); empty = derived from --host and --port")
    log_format: Literal["text", "json"] = Field(
        "text", description="Log records as plain text lines or JSON lines (stderr)")
    # ---- limits (docs/howto/security.md, Limits): no request can hold the event loop or memory unbounded ----
    max_message_body_bytes: int = Field(
        146_800_640, gt=0,
        description="Largest request body of a message-carrying call (put, put1, put-batch, IBM REST message "
                    "POST): 140 MiB, the largest MAXMSGL (100 MiB) as base64 in JSON with its MQMD; a larger "
                    "body is refused (413, MQRC_DATA_LENGTH_ERROR 2010) before it is read")
    max_body_bytes: int = Field(
        4_194_304, gt=0, description="Largest request body of every other call (MQSC scripts included): 4 MiB")
    get_batch_max_bytes: int = Field(
        16_777_216, gt=0,
        description="Most message data one get-batch answer returns (16 MiB): the batch ends before the message "
                    "that would cross it, which stays on the queue; the first message is returned whatever its "
                    "length (within buffer_length), so a batch never comes back empty because of it")
    max_frame_bytes: int = Field(
        146_800_640, gt=0, description="Largest session (WebSocket) frame: a larger one closes the session with "
                                       "WebSocket code 1009 (message too big)")
    session_max_in_flight: int = Field(
        256, gt=0, description="Frames of one session read but not yet answered: past this the socket is not "
                               "read (TCP pushes back on the client)")
    session_max_backlog_bytes: int = Field(
        268_435_456, gt=0, description="Bytes of frames of one session read but not yet answered (256 MiB): "
                                       "past this the socket is not read")
    header_timeout_s: float = Field(
        10.0, gt=0, description="A connection must send a request's complete headers within this many seconds "
                                "of connecting or of starting the request, else it is closed (408)")
    body_timeout_s: float = Field(
        20.0, gt=0, description="A request's body must arrive within this many seconds of its headers, plus one "
                                "second for each body_min_rate bytes of it received, else the connection is closed "
                                "(408, MQRC_CONNECTION_BROKEN 2009)")
    body_min_rate: int = Field(
        65536, gt=0, description="Bytes per second a body slower than body_timeout_s must keep up to go on being "
                                 "read")
    keep_alive_s: int = Field(5, gt=0, description="An idle keep-alive HTTP connection is closed after this many "
                                                  "seconds")
    max_connections: int = Field(
        2000, gt=0, description="Open HTTP and WebSocket connections at most; one more is answered 503 "
                                "(MQRC_MAX_CONNS_LIMIT_REACHED 2025) and closed")
    max_conns_per_user: int = Field(
        1000, gt=0, description="MQI connections (hconns) one authenticated user may hold on a queue manager at "
                                "once; one more MQCONN fails with MQRC_MAX_CONNS_LIMIT_REACHED (2025)")
    loop_lag_warn_s: float = Field(
        0.5, gt=0, description="Event-loop lag that is logged (QSGE301W) and counted; the lag itself is the "
                               "metric qsg_event_loop_lag_seconds")

    @property
    def scheme(self) -> str:
        """``https`` when this queue manager serves TLS, else ``http``."""
        return "https" if self.tls_cert else "http"

    @property
    def advertised_url(self) -> str:
        """The URL this queue manager gives the group (membership record) for peers to forward
        to: ``advertise_url`` when set, else this host's name when bound to every address
        (0.0.0.0 or ::, where the bind address means nothing to a peer), else the bind address."""
        if self.advertise_url:
            return self.advertise_url.rstrip("/")
        host = self.host
        if host in ("0.0.0.0", "::", ""):
            host = socket.gethostname()
        host = f"[{host}]" if ":" in host else host  # an IPv6 literal
        return f"{self.scheme}://{host}:{self.port}"

    @field_validator("advertise_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"advertise_url must be an http:// or https:// URL, not {value!r}")
        return value

    @field_validator("auth", mode="before")
    @classmethod
    def _on_off(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _replica_wait_within_reply_wait(self) -> Settings:
        # A replica WAIT is read as part of the call's reply: it must end well before the socket
        # timeout, or a slow acknowledgement would look like a lost reply (outcome unknown).
        if self.cf_replica_acks and self.cf_replica_timeout_ms > self.cf_timeout_s * 1000 - 1000:
            raise ValueError(f"cf_replica_timeout_ms ({self.cf_replica_timeout_ms}) must be at least 1000 ms "
                             f"below cf_timeout_s ({self.cf_timeout_s} s)")
        return self

    @field_validator("qmgr", "qsg")
    @classmethod
    def _zos_name(cls, value: str) -> str:
        return validate_qmgr_name(value)
