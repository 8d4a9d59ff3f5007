"""Every Redis key and channel name of the coupling facility: the one place they are spelled.

Layout (docs/design.md principle 3):

* A shared queue lives in its CF structure's key space, ``{QSG1.CF.APPL1}:``; a private queue
  (QSGDISP QMGR or COPY) in its queue manager's, ``{QSG1.QM.QM1}:``. The braces are a Redis
  hash tag, so every key of one structure sits in one Redis Cluster slot and every Lua script
  (which only ever touches one structure) stays legal on a cluster.
* A structure defined with ``HASHTAG(X)`` (an emulator addition, placement on a Redis Cluster)
  lives in ``{QSG1.CF.X}APPL1:``: the braces, which alone decide the slot, hold the chosen tag,
  and the structure name after them keeps two co-located structures' keys apart. Its tag
  (the structure's identity in the code) is ``QSG1.CF.APPL1@X``; ``structure_prefix`` is the one
  function that turns a tag into a key prefix.
* Group-wide state (membership, heartbeats, broadcasts, leases) lives under ``{QSG1}``.
* A structure's notices (availability wake-ups, trigger counts) are shard channels named under
  its prefix, ``{QSG1.CF.APPL1}:avail``: SPUBLISHed by its scripts in its own slot.

Lua scripts receive the structure prefix and queue name and build the per-queue keys
themselves with the same suffixes as ``QueueKeys`` below (each script's header lists them).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

#: Between a structure's name and its HASHTAG in a tag (never in a structure name, 1-12 of A-Z 0-9).
HASHTAG_SEPARATOR = "@"


def shared_tag(qsg: str, cfstruct: str, hashtag: str = "") -> str:
    """Tag of a CF structure (shared queues): ``QSG1.CF.APPL1``, or ``QSG1.CF.APPL1@X`` when it
    is defined with HASHTAG(X) (its keys then live in the Redis Cluster slot of ``QSG1.CF.X``)."""
    return f"{qsg}.CF.{cfstruct}" + (HASHTAG_SEPARATOR + hashtag if hashtag else "")


def private_tag(qsg: str, qmgr: str) -> str:
    """Hash tag of a queue manager's own queues (QSGDISP QMGR/COPY): its 'page sets'."""
    return f"{qsg}.QM.{qmgr}"


def is_private(tag: str) -> bool:
    """True for a queue manager's private tag (its keys live in its page set, not in the CF)."""
    return ".QM." in tag and ".CF." not in tag


@functools.lru_cache(maxsize=1024)
def structure_name(tag: str) -> str:
    """The CF structure of a shared tag (``QSG1.CF.APPL1`` or ``QSG1.CF.APPL1@X`` -> ``APPL1``);
    "" for a private tag."""
    if ".CF." not in tag:
        return ""
    return tag.partition(".CF.")[2].partition(HASHTAG_SEPARATOR)[0]


# A tag's key names are asked for several times per MQI call and never change: remembered (a
# group has a few dozen tags at most: its structures, its queue managers' page sets).
@functools.lru_cache(maxsize=1024)
def slot_tag(tag: str) -> str:
    """The text between the braces of a tag's keys: what decides its Redis Cluster slot
    (``QSG1.CF.APPL1`` for a structure without HASHTAG, ``QSG1.CF.X`` with HASHTAG(X))."""
    qsg, cf, rest = tag.partition(".CF.")
    name, sep, hashtag = rest.partition(HASHTAG_SEPARATOR)
    return f"{qsg}.CF.{hashtag}" if cf and sep else tag


@functools.lru_cache(maxsize=1024)
def structure_prefix(tag: str) -> str:
    """Key prefix of everything in one structure: ``{tag}:``, or ``{QSG1.CF.X}APPL1:`` for the
    tag ``QSG1.CF.APPL1@X`` of a structure defined with HASHTAG(X)."""
    inside = slot_tag(tag)
    if inside == tag:
        return "{" + tag + "}:"
    return "{" + inside + "}" + structure_name(tag) + ":"


@dataclass(frozen=True)
class QueueLocation:
    """Where a queue's state lives: its structure tag and its name."""

    tag: str
    name: str

    @property
    def prefix(self) -> str:
        return structure_prefix(self.tag)


@dataclass(frozen=True)
class QueueKeys:
    """Names of one queue's keys (documentation and Python-side use; Lua builds the same)."""

    loc: QueueLocation

    def _k(self, suffix: str) -> str:
        return f"{self.loc.prefix}q:{self.loc.name}:{suffix}"

    @property
    def ctl(self) -> str:
        """Hash: runtime attributes (PUT, GET, MAXDEPTH, ...), counters (depth, seq, gen, uncom) and
        each queue manager's statistics (fields ``st:<QM>:<stat>``)."""
        return self._k("ctl")

    @property
    def index(self) -> str:
        """Sorted set: committed, available messages in delivery order (score = priority/sequence)."""
        return self._k("idx")

    @property
    def opens(self) -> str:
        """Hash: per-QM open counts, fields ``<QM>:<kind>``."""
        return self._k("opens")

    @property
    def queue_prefix(self) -> str:
        """Prefix of every key of this queue, ``{tag}:q:<NAME>:`` (scripts append the suffixes)."""
        return f"{self.loc.prefix}q:{self.loc.name}:"

    @property
    def msgid_index(self) -> str:
        """Sorted set, all scores 0: ``<msg_id hex>:<score16>:<id>`` of committed available messages."""
        return self._k("mi")

    @property
    def correlid_index(self) -> str:
        """Sorted set, all scores 0: ``<correl_id hex>:<score16>:<id>`` (non-zero correl_ids only)."""
        return self._k("ci")

    @property
    def md(self) -> str:
        """Hash: message id -> MQMD JSON."""
        return self._k("md")

    @property
    def body(self) -> str:
        """Hash: message id -> message data of at most 64512 bytes."""
        return self._k("body")

    @property
    def meta(self) -> str:
        """Hash: message id -> packed fields the scripts need (score, persistence, backout count...)."""
        return self._k("meta")

    def big(self, msg_seq: int | str) -> str:
        """String: the data of one message larger than 64512 bytes (z/OS offload)."""
        return self._k(f"big:{msg_seq}")

    @property
    def bigs(self) -> str:
        """Set: ids of the messages whose data is in a ``big:<id>`` key."""
        return self._k("bigs")

    @property
    def waiters(self) -> str:
        """String with a PEXPIRE: present while some getter waits for a message on this queue."""
        return self._k("waiters")


def structure_queues(tag: str) -> str:
    """Set of the queue names that have state in a structure."""
    return f"{structure_prefix(tag)}queues"


def structure_last_ids(tag: str) -> str:
    """Hash: queue name -> last message id of a deleted queue (a re-created queue's ids continue
    after it, so that (queue, id) names one message for ever: the recovery log relies on it)."""
    return f"{structure_prefix(tag)}seqs"


def structure_state(tag: str) -> str:
    """Hash: the structure's allocation id and status (ACTIVE, FAILED, RECOVERING); see struct.lua."""
    return f"{structure_prefix(tag)}struct"


def backup_lock(tag: str) -> str:
    """String with a PEXPIRE: held by the queue manager running BACKUP CFSTRUCT of the structure."""
    return f"{structure_prefix(tag)}backup"


def expiry_queues(tag: str) -> str:
    """Sorted set of a structure's queues with expiring messages, score = earliest expiry (ms)."""
    return f"{structure_prefix(tag)}expq"


def expiration_reports(tag: str, qmgr: str) -> str:
    """List of expiration reports waiting in a structure for the queue manager that sends them."""
    return f"{structure_prefix(tag)}expreports:{qmgr}"


def expiration_reports_sending(tag: str, addressee: str, qmgr: str) -> str:
    """List: the expiration report (of those addressed to ``addressee``) that ``qmgr`` is sending
    now; it leaves the list once put, and peer recovery puts it back if ``qmgr`` fails."""
    return f"{expiration_reports(tag, addressee)}:sending:{qmgr}"


def uow_key(tag: str, qmgr: str, hconn: str) -> str:
    """List: the operations of one connection's unit of work within one structure."""
    return f"{structure_prefix(tag)}uow:{qmgr}:{hconn}"


def held_key(tag: str, qmgr: str) -> str:
    """Hash: call token -> ``<queue>:<id>[,<id>...]``, the messages one QM's destructive gets
    outside syncpoint took off the structure's queues and hold until released or restored
    (lua/held.lua)."""
    return f"{structure_prefix(tag)}held:{qmgr}"


def uow_registry(tag: str) -> str:
    """Set of ``<QM>:<hconn>`` with a unit of work in progress in a structure (peer recovery)."""
    return f"{structure_prefix(tag)}uows"


def structure_handles(tag: str, qmgr: str) -> str:
    """Hash: hobj -> ``<open flags>|<queue>`` of every open handle of one QM in a structure."""
    return f"{structure_prefix(tag)}handles:{qmgr}"


def structure_fence(tag: str) -> str:
    """Hash: queue manager -> lowest incarnation of it still allowed to change the structure
    (peer recovery fences the incarnation it recovers; see lua/_fence.lua). Also used with
    ``group_prefix``'s tag for the group-wide records (commit intents)."""
    return f"{structure_prefix(tag)}fence"


def structure_generations(tag: str) -> str:
    """Hash: queue name -> last definition generation of a deleted queue (a re-created queue
    continues after it, so a stale handle never matches the new queue)."""
    return f"{structure_prefix(tag)}gens"


def structure_bookkeeping(tag: str) -> tuple[str, ...]:
    """The keys a structure keeps while it holds no queue and no unit of work (all hashes): its
    state, the last ids and generations of deleted queues, and its fences. They move with it
    when its HASHTAG changes (app/cf/placement.py); any other key means it is in use."""
    return (structure_state(tag), structure_last_ids(tag), structure_generations(tag), structure_fence(tag))


def availability_channel(tag: str) -> str:
    """Shard channel (SPUBLISH/SSUBSCRIBE) of a structure's availability notices: published, with
    the queue name as the message, when messages become available on a queue with waiters.
    Named under the structure's prefix, so it is in the structure's slot: a script's SPUBLISH
    stays in its own slot on a Redis Cluster, and the notice only goes to that slot's node."""
    return f"{structure_prefix(tag)}avail"


def trigger_channel(tag: str) -> str:
    """Shard channel of a structure's trigger counts, for every QM: "<queue>|<before>|<after>|<added>"
    (messages that count before and after, messages committed); in the structure's slot too."""
    return f"{structure_prefix(tag)}trig"


# ---- group-wide keys -------------------------------------------------------------------

def group_prefix(qsg: str) -> str:
    return "{" + qsg + "}:"


def definitions_channel(qsg: str) -> str:
    """Pub/sub channel: definition changes (cache invalidation broadcast)."""
    return f"{group_prefix(qsg)}defs"


def broadcast_ack_key(qsg: str, request_id: str) -> str:
    """List a broadcast's receivers push their acknowledgement to."""
    return f"{group_prefix(qsg)}ack:{request_id}"


def pagesets_key(qsg: str) -> str:
    """Hash: queue manager name -> the URL of its page set (where its private queues live), so
    that a definition command for another QM's COPY or QMGR queue reaches that QM's page set."""
    return f"{group_prefix(qsg)}pagesets"


def private_owner(tag: str) -> str:
    """The queue manager of a private tag (``QSG1.QM.QM1`` -> ``QM1``)."""
    return tag.partition(".QM.")[2]


def members_key(qsg: str) -> str:
    """Hash: queue manager name -> JSON of its registration (status, url, started)."""
    return f"{group_prefix(qsg)}members"


def heartbeat_key(qsg: str, qmgr: str) -> str:
    """String with a TTL: present while the queue manager is alive."""
    return f"{group_prefix(qsg)}hb:{qmgr}"


def group_fence(qsg: str) -> str:
    """Hash: queue manager -> lowest incarnation allowed to write group-wide records."""
    return f"{group_prefix(qsg)}fence"


def incarnations_key(qsg: str) -> str:
    """Hash: queue manager -> the number of its latest incarnation (claim.lua)."""
    return f"{group_prefix(qsg)}incarnations"


def scanner_lease(qsg: str) -> str:
    """String with a PEXPIRE: held by the queue manager that scans the group's shared queues
    for expired messages."""
    return f"{group_prefix(qsg)}expiry-scanner"


def recovery_lock(qsg: str, qmgr: str) -> str:
    """String with a PEXPIRE: held by the queue manager that runs peer recovery of ``qmgr``."""
    return f"{group_prefix(qsg)}recovery:{qmgr}"


def commit_intent_key(qsg: str, qmgr: str, hconn: str) -> str:
    """String: the structures of a multi-structure unit of work being committed (roll forward)."""
    return f"{group_prefix(qsg)}commit:{qmgr}:{hconn}"


def alias_handles_key(qsg: str, qmgr: str, alias: str) -> str:
    """Set of a QM's handles opened through an alias queue (FORCE and DELETE rules: any QM of the
    group may ask, so it is group state in the CF, not in the QM's page set)."""
    return f"{group_prefix(qsg)}alias:{qmgr}:{alias}:handles"


def ltpa_token_key(qsg: str, token_digest: str) -> str:
    """STRING: the user name an IBM REST login token (LtpaToken2 cookie) stands for, with the
    token's lifetime as TTL; keyed by the token's SHA-256 so Redis never holds the token itself."""
    return f"{group_prefix(qsg)}ltpa:{token_digest}"


def subscriptions_key(qsg: str, qmgr: str) -> str:
    """Hash of a queue manager's subscriptions (publish/subscribe, app/qmgr/pubsub.py): SUBID ->
    the subscription as JSON. Under the QM's own hash tag: on z/OS a subscription belongs to one
    queue manager; the durable ones survive its restart, as they do on z/OS (page set zero)."""
    return structure_prefix(private_tag(qsg, qmgr)) + "subscriptions"
