"""IBM MQ constants of cmqxc.h (channels and exits) under pymqi's names: the MQCD versions,
channel types (MQCHT_*), transport types (MQXPT_*) and compression (MQCOMPRESS_*) a client
program sets on its ``CD`` before connecting. Only the connection name of a CD is used here (it
is the queue manager's REST address); the rest is accepted so that such programs run as written."""

# ruff: noqa: N999 - the module is named like pymqi's, so that ``pymqi.CMQXC.X`` code moves over.

from app.client.CMQC import (  # noqa: F401 - re-exported: pymqi programs find them in either module
    MQCHT_ALL,
    MQCHT_AMQP,
    MQCHT_CLNTCONN,
    MQCHT_CLUSRCVR,
    MQCHT_CLUSSDR,
    MQCHT_MQTT,
    MQCHT_RECEIVER,
    MQCHT_REQUESTER,
    MQCHT_SENDER,
    MQCHT_SERVER,
    MQCHT_SVRCONN,
    MQXPT_ALL,
    MQXPT_DECNET,
    MQXPT_LOCAL,
    MQXPT_LU62,
    MQXPT_NETBIOS,
    MQXPT_SPX,
    MQXPT_TCP,
    MQXPT_UDP,
)

# Channel definition structure
MQCD_VERSION_1 = 1
MQCD_VERSION_2 = 2
MQCD_VERSION_3 = 3
MQCD_VERSION_4 = 4
MQCD_VERSION_5 = 5
MQCD_VERSION_6 = 6
MQCD_VERSION_7 = 7
MQCD_VERSION_8 = 8
MQCD_VERSION_9 = 9
MQCD_VERSION_10 = 10
MQCD_VERSION_11 = 11
MQCD_VERSION_12 = 12
MQCD_CURRENT_VERSION = 12

# Compression of headers and messages on a channel
MQCOMPRESS_NOT_AVAILABLE = -1
MQCOMPRESS_NONE = 0
MQCOMPRESS_RLE = 1
MQCOMPRESS_ZLIBFAST = 2
MQCOMPRESS_ZLIBHIGH = 4
MQCOMPRESS_SYSTEM = 8
MQCOMPRESS_LZ4FAST = 16
MQCOMPRESS_LZ4HIGH = 32
MQCOMPRESS_ANY = 0x0FFFFFFF

# Sharing conversations, heartbeats and reconnection defaults
MQSCA_REQUIRED = 0
MQSCA_OPTIONAL = 1
MQKAI_AUTO = -1
MQDISCONNECT_NORMAL = 0
MQRCVTIME_MULTIPLY = 0
MQRCVTIME_ADD = 1
MQRCVTIME_EQUAL = 2
MQCAFTY_NONE = 0
MQCAFTY_PREFERRED = 1
MQPROP_COMPATIBILITY = 0
MQPROP_NONE = 1
MQPROP_ALL = 2
MQPROP_FORCE_MQRFH2 = 3
MQPROP_V6COMPAT = 4
