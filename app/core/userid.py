"""The MQMD UserIdentifier of an authenticated user.

MQMD UserIdentifier is a 12-character field (MQ_USER_ID_LENGTH). IBM MQ for z/OS user IDs are
RACF ones of at most 8 characters, so they always fit; on the other platforms "the maximum
length of a user ID is 12 characters" and a longer one "is truncated to 12 characters" (IBM MQ
documentation, "User IDs", https://www.ibm.com/docs/en/ibm-mq/9.3?topic=application-user-ids).
This emulator's users may have longer names: the UserIdentifier (and DISPLAY CONN USERID) is
their first 12 characters, as IBM truncates; authority checks still use the whole name."""

from __future__ import annotations

MQ_USER_ID_LENGTH = 12


def mqmd_user_id(name: str) -> str:
    """The UserIdentifier an authenticated user name maps to: its first 12 characters."""
    return name[:MQ_USER_ID_LENGTH]
