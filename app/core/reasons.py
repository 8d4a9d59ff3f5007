"""IBM MQ completion and reason codes: the one place their values live.

Values are IBM's (cmqc.h for MQRC_*, cmqcfc.h for MQRCCF_* command-server reasons).
"""

from __future__ import annotations

from enum import IntEnum


class CompCode(IntEnum):
    """MQCC_* completion codes."""

    OK = 0
    WARNING = 1
    FAILED = 2


class MQRC(IntEnum):
    """MQRC_* (MQI) and MQRCCF_* (command) reason codes, by their IBM names without prefix."""

    NONE = 0
    ALIAS_BASE_Q_TYPE_ERROR = 2001
    BACKED_OUT = 2003
    BUFFER_ERROR = 2004
    BUFFER_LENGTH_ERROR = 2005
    CONNECTION_BROKEN = 2009
    DATA_LENGTH_ERROR = 2010
    DYNAMIC_Q_NAME_ERROR = 2011
    EXPIRY_ERROR = 2013
    GET_INHIBITED = 2016
    HCONN_ERROR = 2018
    HOBJ_ERROR = 2019
    INHIBIT_VALUE_ERROR = 2020
    SYNCPOINT_LIMIT_REACHED = 2024
    MD_ERROR = 2026
    MISSING_REPLY_TO_Q = 2027
    MSG_TYPE_ERROR = 2029
    MSG_TOO_BIG_FOR_Q = 2030
    MSG_TOO_BIG_FOR_Q_MGR = 2031
    NO_MSG_AVAILABLE = 2033
    NO_MSG_UNDER_CURSOR = 2034
    NOT_AUTHORIZED = 2035
    NOT_OPEN_FOR_BROWSE = 2036
    NOT_OPEN_FOR_INPUT = 2037
    NOT_OPEN_FOR_INQUIRE = 2038
    NOT_OPEN_FOR_OUTPUT = 2039
    NOT_OPEN_FOR_SET = 2040
    OBJECT_CHANGED = 2041
    OBJECT_IN_USE = 2042
    OBJECT_TYPE_ERROR = 2043
    OD_ERROR = 2044
    OPTION_NOT_VALID_FOR_TYPE = 2045
    OPTIONS_ERROR = 2046
    PERSISTENCE_ERROR = 2047
    PERSISTENT_NOT_ALLOWED = 2048
    PRIORITY_EXCEEDS_MAXIMUM = 2049
    PRIORITY_ERROR = 2050
    PUT_INHIBITED = 2051
    Q_DELETED = 2052
    Q_FULL = 2053
    Q_NOT_EMPTY = 2055
    Q_MGR_NAME_ERROR = 2058
    Q_MGR_NOT_AVAILABLE = 2059
    REPORT_OPTIONS_ERROR = 2061
    SELECTOR_ERROR = 2067
    TRUNCATED_MSG_ACCEPTED = 2079
    TRUNCATED_MSG_FAILED = 2080
    UNKNOWN_ALIAS_BASE_Q = 2082
    UNKNOWN_OBJECT_NAME = 2085
    UNKNOWN_OBJECT_Q_MGR = 2086
    UNKNOWN_REMOTE_Q_MGR = 2087
    WAIT_INTERVAL_ERROR = 2090
    XMIT_Q_TYPE_ERROR = 2091
    XMIT_Q_USAGE_ERROR = 2092
    OBJECT_ALREADY_EXISTS = 2100
    OBJECT_DAMAGED = 2101
    RESOURCE_PROBLEM = 2102
    OBJECT_NAME_ERROR = 2152
    Q_MGR_QUIESCING = 2161
    Q_MGR_STOPPING = 2162
    PMO_ERROR = 2173
    GMO_ERROR = 2186
    UNEXPECTED_ERROR = 2195
    Q_DEPTH_HIGH = 2224
    Q_DEPTH_LOW = 2225
    Q_SERVICE_INTERVAL_HIGH = 2226
    Q_SERVICE_INTERVAL_OK = 2227
    DB2_NOT_AVAILABLE = 2342
    OBJECT_NOT_UNIQUE = 2343
    CF_NOT_AVAILABLE = 2345
    CF_STRUC_IN_USE = 2346
    CF_STRUC_ERROR = 2349
    CF_STRUC_FAILED = 2373
    # Command-server (MQSC/PCF) reasons.
    MQRCCF_COMMAND_FAILED = 3008
    MQRCCF_PARM_SYNTAX_ERROR = 3097
    MQRCCF_OBJECT_WRONG_TYPE = 4002
    MQRCCF_LIKE_OBJECT_WRONG_TYPE = 4003
    MQRCCF_OBJECT_OPEN = 4004
    MQRCCF_ATTR_VALUE_ERROR = 4005
    MQRCCF_Q_WRONG_TYPE = 4007

    @property
    def mq_name(self) -> str:
        """The IBM constant name, e.g. ``MQRC_UNKNOWN_OBJECT_NAME`` or ``MQRCCF_PARM_SYNTAX_ERROR``."""
        if self.name.startswith("MQRCCF_"):
            return self.name
        return f"MQRC_{self.name}"


#: Reasons that say the queue manager cannot do the work now (the coupling facility or the
#: repository is away, the QM lost its place in the group or is stopping), not that the work is
#: wrong: an agent keeps what it holds and retries rather than dead-lettering or discarding it.
OUTAGE_REASONS = frozenset({MQRC.CF_NOT_AVAILABLE, MQRC.CF_STRUC_FAILED, MQRC.CONNECTION_BROKEN,
                            MQRC.DB2_NOT_AVAILABLE, MQRC.Q_MGR_NOT_AVAILABLE, MQRC.Q_MGR_QUIESCING})


def reason_name(reason: int) -> str:
    """The IBM name of a reason code, or ``MQRC_<n>`` for one this module does not know."""
    try:
        return MQRC(reason).mq_name
    except ValueError:
        return f"MQRC_{reason}"


class MQFB(IntEnum):
    """MQFB_* feedback codes."""

    NONE = 0
    EXPIRATION = 258
