"""PCF parameter identifiers and the MQSC keywords they stand for (IBM cmqc.h / cmqcfc.h values).

One table per object family: ``ATTRS[family]`` maps an MQSC attribute name to its PCF parameter
id; ``WORDS`` maps an MQSC enumerated word to IBM's integer constant for the attributes PCF
carries as integers (MQCFIN). Anything an MQSC row holds that has no entry here is simply not
returned in PCF (IBM's PCF has no parameter for it either, or this table does not know it).
"""

from __future__ import annotations

from typing import Any

# ---- commands (MQCMD_*) ------------------------------------------------------------------------
CHANGE_Q_MGR, INQUIRE_Q_MGR = 1, 2
CHANGE_PROCESS, COPY_PROCESS, CREATE_PROCESS, DELETE_PROCESS, INQUIRE_PROCESS = 3, 4, 5, 6, 7
CHANGE_Q, CLEAR_Q, COPY_Q, CREATE_Q, DELETE_Q, INQUIRE_Q = 8, 9, 10, 11, 12, 13
RESET_Q_STATS, INQUIRE_Q_NAMES, INQUIRE_PROCESS_NAMES, INQUIRE_CHANNEL_NAMES = 17, 18, 19, 20
CHANGE_CHANNEL, COPY_CHANNEL, CREATE_CHANNEL, DELETE_CHANNEL, INQUIRE_CHANNEL = 21, 22, 23, 24, 25
ESCAPE, PING_Q_MGR, INQUIRE_Q_STATUS, INQUIRE_CHANNEL_STATUS = 38, 40, 41, 42
REFRESH_SECURITY = 78
INQUIRE_CONNECTION, INQUIRE_AUTH_RECS, DELETE_AUTH_REC, SET_AUTH_REC = 85, 87, 89, 90
CHANGE_CF_STRUC, CREATE_CF_STRUC, COPY_CF_STRUC, DELETE_CF_STRUC = 101, 108, 110, 112
INQUIRE_CF_STRUC, INQUIRE_CF_STRUC_STATUS, INQUIRE_QSG, INQUIRE_CF_STRUC_NAMES = 115, 116, 119, 147
BACKUP_CF_STRUC, RECOVER_CF_STRUC = 105, 129
CHANGE_TOPIC, COPY_TOPIC, CREATE_TOPIC, DELETE_TOPIC, INQUIRE_TOPIC, INQUIRE_TOPIC_NAMES = \
    170, 171, 172, 173, 174, 175

# ---- parameters --------------------------------------------------------------------------------
Q_NAME, Q_TYPE, QSG_DISP, PROCESS_NAME, CF_STRUC_NAME, TOPIC_NAME = 2016, 20, 63, 2012, 2039, 2092
Q_MGR_NAME = 2015
Q_MGR_ATTRS, Q_ATTRS, PROCESS_ATTRS, CF_STRUC_ATTRS, TOPIC_ATTRS = 1001, 1002, 1003, 1133, 1269
ALL = 1009
FORCE, REPLACE, PURGE = 1005, 1006, 1007
FROM_Q_NAME, TO_Q_NAME = 3001, 3002
FROM_PROCESS_NAME, TO_PROCESS_NAME = 3003, 3004
FROM_CF_STRUC_NAME, TO_CF_STRUC_NAME = 3093, 3094
FROM_TOPIC_NAME, TO_TOPIC_NAME = 3150, 3149
Q_NAMES, PROCESS_NAMES, CF_STRUC_NAMES, TOPIC_NAMES = 3011, 3012, 3095, 3151
QSG_DISPS = 1126
COMMAND_SCOPE = 3080
ESCAPE_TYPE, ESCAPE_TEXT = 1017, 3014
Q_STATUS_TYPE, Q_STATUS_ATTRS, Q_HANDLE, Q_STATUS, OPEN_TYPE = 1103, 1026, 1104, 1105, 1023
CHANNEL_NAME, CHANNEL_NAMES, CHANNEL_TYPE = 3501, 3512, 1511
COMMAND_INFO, RESPONSE_SET, RESPONSE_ID, RESPONSE_Q_MGR_NAME = 1120, 7003, 7004, 3070
PARAMETER_ID = 1012
AUTH_PROFILE_NAME, OBJECT_TYPE, AUTH_ADD_AUTHS, AUTH_REMOVE_AUTHS = 3067, 1016, 1116, 1117
GROUP_ENTITY_NAMES, PRINCIPAL_ENTITY_NAMES, ENTITY_NAME, ENTITY_TYPE, AUTHORIZATION_LIST = \
    3066, 3065, 3068, 1118, 1115
CONNECTION_ID, GENERIC_CONNECTION_ID, APPL_TAG, USER_IDENTIFIER = 7006, 7007, 3058, 3025
CONN_TAG, CONN_INFO_TYPE = 7038, 1110
CONN_INFO_CONN, CONN_INFO_HANDLE, CONN_INFO_ALL = 1111, 1112, 1113

MQCMDI_CMDSCOPE_ACCEPTED, MQCMDI_CMDSCOPE_GENERATED, MQCMDI_CMDSCOPE_COMPLETED = 1, 2, 3
MQET_MQSC = 1
MQRP_YES = 1

# ---- values ------------------------------------------------------------------------------------
QUEUE_TYPES = {"QLOCAL": 1, "QMODEL": 2, "QALIAS": 3, "QREMOTE": 6}
QUEUE_TYPE_ALL = 1001
QSGDISPS = {"QMGR": 0, "COPY": 1, "SHARED": 2, "GROUP": 3, "PRIVATE": 4, "LIVE": 6, "ALL": -1}
OBJTYPES = {"QUEUE": 1, "NAMELIST": 2, "PROCESS": 3, "QMGR": 5, "CHANNEL": 6, "AUTHINFO": 7, "TOPIC": 8}

_ENABLED = {"DISABLED": 0, "ENABLED": 1}
_YESNO = {"NO": 0, "YES": 1}
#: MQSC word -> IBM integer, per attribute (MQPER_*, MQQA_*, MQQDT_*, MQTT_*, MQUS_*, MQIT_*, ...)
WORDS: dict[str, dict[str, int]] = {
    "DEFPSIST": {"NO": 0, "YES": 1, "ASPARENT": -1},  # MQPER_PERSISTENCE_AS_PARENT
    "GET": {"ENABLED": 0, "DISABLED": 1}, "PUT": {"ENABLED": 0, "DISABLED": 1},
    "DEFTYPE": {"PREDEFINED": 1, "PERMDYN": 2, "TEMPDYN": 3, "SHAREDYN": 4},
    "DEFSOPT": {"EXCL": 4, "SHARED": 2},
    "MSGDLVSQ": {"PRIORITY": 0, "FIFO": 1},
    "TRIGTYPE": {"NONE": 0, "FIRST": 1, "EVERY": 2, "DEPTH": 3},
    "USAGE": {"NORMAL": 0, "XMITQ": 1},
    "INDXTYPE": {"NONE": 0, "MSGID": 1, "CORRELID": 2, "GROUPID": 3, "MSGTOKEN": 4},
    "DEFPRESP": {"SYNC": 1, "ASYNC": 2, "ASPARENT": 0},
    "DEFREADA": {"NO": 0, "YES": 1, "DISABLED": 2},
    "DEFBIND": {"OPEN": 0, "NOTFIXED": 1, "GROUP": 2},
    "QDPHIEV": _ENABLED, "QDPLOEV": _ENABLED, "QDPMAXEV": _ENABLED,
    "QSVCIEV": {"NONE": 0, "HIGH": 1, "OK": 2},
    "TARGTYPE": {"QUEUE": 1, "TOPIC": 8},
    "PROPCTL": {"COMPAT": 0, "NONE": 1, "ALL": 2, "FORCE": 3, "V6COMPAT": 4},
    "CLWLUSEQ": {"QMGR": -3, "ANY": 1, "LOCAL": 0},
    "ACCTQ": {"QMGR": -3, "OFF": 0, "ON": 1}, "MONQ": {"QMGR": -3, "OFF": 0, "LOW": 17, "MEDIUM": 33, "HIGH": 65},
    "STRMQOS": {"BESTEF": 0, "MUSTDUP": 1},
    "APPLTYPE": {"CICS": 1, "MVS": 2, "IMS": 3, "OS2": 4, "DOS": 5, "UNIX": 6, "QMGR": 7, "OS400": 8,
                 "WINDOWS": 9, "CICS_VSE": 10, "WINDOWSNT": 11, "DEF": -1, "BATCH": 32, "RRSBATCH": 33,
                 "CICSBRIDGE": 21, "IMSBRIDGE": 19, "XCF": 20, "JAVA": 28, "NSK": 13},
    # topics (MQTA_*)
    "PUB": {"ASPARENT": 0, "DISABLED": 1, "ENABLED": 2}, "SUB": {"ASPARENT": 0, "DISABLED": 1, "ENABLED": 2},
    "DURSUB": {"ASPARENT": 0, "NO": 1, "YES": 2},
    "PUBSCOPE": {"ASPARENT": 0, "QMGR": 1, "ALL": 2}, "SUBSCOPE": {"ASPARENT": 0, "QMGR": 1, "ALL": 2},
    "NPMSGDLV": {"ASPARENT": 0, "ALL": 2, "ALLAVAIL": 3, "ALLDUR": 4},
    "PMSGDLV": {"ASPARENT": 0, "ALL": 2, "ALLAVAIL": 3, "ALLDUR": 4},
    "USEDLQ": {"ASPARENT": 0, "NO": 1, "YES": 2},
    "WILDCARD": {"PASSTHRU": 2, "BLOCK": 1}, "PROXYSUB": {"FIRSTUSE": 0, "FORCE": 1},
    "CLROUTE": {"DIRECT": 0, "TOPICHOST": 1, "NONE": 2},
    # CF structures (MQCFR_*, MQRECAUTO_*, MQCFOFFLD_*, MQCFCONLOS_*)
    "RECOVER": _YESNO, "RECAUTO": _YESNO,
    "OFFLOAD": {"DB2": 1, "SMDS": 2, "BOTH": 3},
    "CFCONLOS": {"TERMINATE": 0, "TOLERATE": 1, "ASQMGR": 2},
    "DSEXPAND": {"NO": 0, "YES": 1, "DEFAULT": 2},
    # the queue manager (MQEVR_*, MQIGQ_*, MQIGQPA_*, MQPL_*, MQSCYC_*, ...)
    **{ev: _ENABLED for ev in ("AUTHOREV", "INHIBTEV", "LOCALEV", "REMOTEEV", "CONFIGEV", "STRSTPEV", "PERFMEV",
                               "BRIDGEEV", "CHLEV", "SSLEV")},
    "CMDEV": {"DISABLED": 0, "ENABLED": 1, "NODISPLAY": 2},
    "IGQ": _ENABLED, "IGQAUT": {"DEF": 1, "CTX": 2, "ONLYIGQ": 3, "ALTIGQ": 4},
    "PLATFORM": {"ZOS": 1, "MVS": 1, "UNIX": 3, "WINDOWSNT": 11},
    "SCYCASE": {"UPPER": 0, "MIXED": 1},
    "ACTIVREC": {"DISABLED": 0, "MSG": 1, "QUEUE": 2}, "ROUTEREC": {"DISABLED": 0, "MSG": 1, "QUEUE": 2},
    "PSMODE": {"COMPAT": 1, "DISABLED": 0, "ENABLED": 2},
    "SQQMNAME": {"USE": 0, "IGNORE": 1},
    "UNCOM": {"NO": 0, "YES": 1},
}
#: MQSC flags (bool in a row, a keyword pair in a command) and IBM's integer for True
FLAGS = {"TRIGGER": ("TRIGGER", "NOTRIGGER"), "SHARE": ("SHARE", "NOSHARE"), "HARDENBO": ("HARDENBO", "NOHARDENBO")}

_QUEUE = {
    "QUEUE": Q_NAME, "TYPE": Q_TYPE, "QSGDISP": QSG_DISP, "DESCR": 2013, "MAXDEPTH": 15, "MAXMSGL": 13,
    "DEFPRTY": 6, "DEFPSIST": 5, "GET": 9, "PUT": 10, "CURDEPTH": 3, "IPPROCS": 17, "OPPROCS": 18, "DEFTYPE": 7,
    "SHARE": 23, "DEFSOPT": 4, "MSGDLVSQ": 16, "RETINTVL": 21, "BOTHRESH": 22, "BOQNAME": 2019, "HARDENBO": 8,
    "TRIGGER": 24, "TRIGTYPE": 28, "TRIGDPTH": 29, "TRIGMPRI": 26, "TRIGDATA": 2023, "INITQ": 2008,
    "PROCESS": 2012, "USAGE": 12, "TARGET": 2002, "RNAME": 2018, "RQMNAME": 2017, "XMITQ": 2024,
    "CFSTRUCT": 2039, "STGCLASS": 2022, "QDEPTHHI": 40, "QDEPTHLO": 41, "QDPMAXEV": 42, "QDPHIEV": 43,
    "QDPLOEV": 44, "QSVCINT": 54, "QSVCIEV": 46, "INDXTYPE": 57, "DEFPRESP": 184, "DEFREADA": 188,
    "DEFBIND": 61, "ACCTQ": 134, "MONQ": 123, "PROPCTL": 190, "CLWLPRTY": 96, "CLWLRANK": 95, "CLWLUSEQ": 98,
    "CLUSTER": 2029, "CLUSNL": 2030, "CUSTOM": 2119, "CAPEXPRY": 2119, "TARGTYPE": 193,
    "ALTDATE": 2027, "ALTTIME": 2028, "CRDATE": 2004, "CRTIME": 2005,
}
_QUEUE.pop("CAPEXPRY")  # z/OS carries CAPEXPRY inside CUSTOM; not a parameter of its own
ATTRS: dict[str, dict[str, int]] = {
    "QUEUE": _QUEUE,
    "PROCESS": {"PROCESS": PROCESS_NAME, "QSGDISP": QSG_DISP, "DESCR": 2011, "APPLICID": 2001, "APPLTYPE": 1,
                "ENVRDATA": 2007, "USERDATA": 2021, "ALTDATE": 2027, "ALTTIME": 2028},
    "CFSTRUCT": {"CFSTRUCT": CF_STRUC_NAME, "DESCR": 2052, "CFLEVEL": 70, "RECOVER": 71, "RECAUTO": 244,
                 "OFFLOAD": 224, "CFCONLOS": 246, "DSBUFS": 228,
                 "ALTDATE": 2027, "ALTTIME": 2028},
    "TOPIC": {"TOPIC": TOPIC_NAME, "QSGDISP": QSG_DISP, "TOPICSTR": 2094, "DESCR": 2093, "PUB": 181, "SUB": 182,
              "DURSUB": 175, "MDURMDL": 2096, "MNDURMDL": 2097, "PUBSCOPE": 219, "SUBSCOPE": 218, "USEDLQ": 234,
              "NPMSGDLV": 196, "PMSGDLV": 195, "DEFPSIST": 185, "DEFPRTY": 6, "DEFPRESP": 184, "WILDCARD": 216,
              "PROXYSUB": 199, "CLUSTER": 2029, "CLROUTE": 255, "CUSTOM": 2119, "ALTDATE": 2027, "ALTTIME": 2028},
    "QMGR": {"QMNAME": Q_MGR_NAME, "DESCR": 2014, "CCSID": 2, "MAXHANDS": 11, "MAXPRTY": 14, "TRIGINT": 25,
             "SYNCPT": 30, "CMDLEVEL": 31, "PLATFORM": 32, "MAXUMSGS": 33, "EXPRYINT": 39, "AUTHOREV": 47,
             "INHIBTEV": 48, "LOCALEV": 49, "REMOTEEV": 50, "CONFIGEV": 51, "STRSTPEV": 52, "PERFMEV": 53,
             "IGQ": 64, "IGQAUT": 65, "IGQUSER": 2041, "COMMANDQ": 2003, "DEADQ": 2006, "DEFXMITQ": 2025,
             "QSGNAME": 2040, "QMID": 2032, "MAXMSGL": 13, "CMDEV": 99, "SSLEV": 75, "CHLEV": 73, "BRIDGEEV": 74,
             "SCYCASE": 141, "ACTIVREC": 138, "ROUTEREC": 137, "PSMODE": 187, "SQQMNAME": 77, "CFCONLOS": 245,
             "ALTDATE": 2027, "ALTTIME": 2028, "CUSTOM": 2119, "ACCTQ": 134, "MONQ": 123},
    "QSTATUS": {"QUEUE": Q_NAME, "QSGDISP": QSG_DISP, "CURDEPTH": 3, "IPPROCS": 17, "OPPROCS": 18,
                "UNCOM": 1027, "LPUTDATE": 3128, "LPUTTIME": 3129, "LGETDATE": 3130, "LGETTIME": 3131,
                "MSGAGE": 1227, "APPLTAG": APPL_TAG, "USERID": USER_IDENTIFIER, "OPENOPTS": 1022},
    "CFSTATUS": {"CFSTRUCT": CF_STRUC_NAME, "STATUS": 1130, "TYPE": 1135},
    "CONN": {"CONN": CONNECTION_ID, "APPLTAG": APPL_TAG, "USERID": USER_IDENTIFIER},
}
ATTRS["QSTATUS"]["TYPE"] = Q_STATUS_TYPE  # row TYPE(QUEUE|HANDLE): MQIACF_Q_STATUS / MQIACF_Q_HANDLE
WORDS["TYPE@QSTATUS"] = {"QUEUE": Q_STATUS, "HANDLE": Q_HANDLE}
WORDS["STATUS@CFSTATUS"] = {"ACTIVE": 1, "INRECOVER": 2, "INBACKUP": 3, "FAILED": 4, "NONE": 5, "UNKNOWN": 6,
                            "RECOVERED": 7, "EMPTY": 8, "NEW": 9}
WORDS["TYPE@CFSTATUS"] = {"SUMMARY": 1136, "CONNECT": 1137, "BACKUP": 1138, "SMDS": 1333}

#: The integer attributes IBM answers as integers although MQSC shows a word for a special value
#: (EXPRYINT(OFF) is 0): ``attributes.AttrSpec.special`` has the numbers.


def word_to_int(name: str, word: Any, family: str = "") -> int | None:
    """IBM's integer for an MQSC word of attribute ``name``; None when the word is not known."""
    table = WORDS.get(f"{name}@{family}") or WORDS.get(name)
    if table is None:
        return None
    return table.get(str(word).upper())


def int_to_word(name: str, value: int, family: str = "") -> str | None:
    table = WORDS.get(f"{name}@{family}") or WORDS.get(name)
    if table is None:
        return None
    for word, number in table.items():
        if number == value:
            return word
    return None


def mqsc_name(family: str, parameter: int) -> str | None:
    """The MQSC keyword of a PCF parameter of ``family``; None when unknown."""
    for name, pid in ATTRS[family].items():
        if pid == parameter:
            return name
    return None
