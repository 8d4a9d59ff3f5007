"""The MQMD UserIdentifier of an authenticated user.

MQMD UserIdentifier is a 12-character field (MQ_USER_ID_LENGTH). IBM MQ for z/OS user IDs are
RACF ones of at most 8 characters, so they always fit; on the other platforms "the maximum
length of a user ID is 12 characters" and a longer one "is truncated to 12 characters" (IBM MQ
documentation, "User IDs", https://www.ibm.com/docs/en/ibm-mq/9.3?topic=application-user-ids).
This emulator's users may have longer names: the UserIdentifier (and DISPLAY CONN USERID) is
their first 12 characters, as IBM truncates; authority checks still use the whole name."""

from __future__ import annotations

import getpass

MQ_USER_ID_LENGTH = 12


def mqmd_user_id(name: str) -> str:
    """The UserIdentifier an authenticated user name maps to: its first 12 characters."""
    return name[:MQ_USER_ID_LENGTH]


def default_user_id(configured: str) -> str:
    """The user a connection has when authentication is off, and that the queue manager's own
    messages carry: ``configured`` (QSG_DEFAULT_USER) or else the operating-system user running
    the queue manager - as IBM MQ fills UserIdentifier with the user ID the connection runs
    under, never leaving it blank. "QSG" when the system has no name for that user."""
    if configured.strip():
        return mqmd_user_id(configured.strip())
    try:
        return mqmd_user_id(getpass.getuser())
    except (KeyError, OSError):  # a container user with no passwd entry
        return "QSG"
