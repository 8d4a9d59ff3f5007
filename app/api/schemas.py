"""Request bodies of the REST API, for parsing and the OpenAPI schema.

Field types are kept broad where IBM's reason codes decide what is wrong (the MQMD, option
names): the domain validates those and answers with the right MQRC. Where a type is given,
it is strict (docs/design.md §5: lax mode would take ``true`` for an integer).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ConnectRequest(_Body):
    appl_name: StrictStr | None = Field(None, max_length=28, description="PutApplName of this connection's messages")


class OpenRequest(_Body):
    object_name: StrictStr = Field("", max_length=48, examples=["APP.Q"],
                                   description="A queue, or (object_type TOPIC) a TOPIC object (may be blank)")
    object_qmgr: StrictStr = Field("", max_length=48, description="Empty for this QM")
    options: list[StrictStr] = Field(..., max_length=16, examples=[["INPUT_SHARED", "OUTPUT"]])
    dynamic_q_name: StrictStr = Field("", max_length=48, examples=["APP.REPLY.*"],
                                      description="MQOD DynamicQName, used when object_name is a model queue: a "
                                                  "trailing * is replaced by a unique suffix (default CSQ.*)")
    alternate_user_id: StrictStr = Field("", max_length=12, examples=["PAYAPP"],
                                         description="MQOD AlternateUserId: with ALTERNATE_USER_AUTHORITY the open "
                                                     "is checked against this user's authority (and its puts carry "
                                                     "it as UserIdentifier)")
    object_type: StrictStr | StrictInt = Field("Q", examples=["Q", "TOPIC", "Q_MGR", "NAMELIST"],
                                               description="MQOD ObjectType: Q (MQOT_Q), TOPIC (MQOT_TOPIC), Q_MGR "
                                                           "(MQOT_Q_MGR, the queue manager object, for MQINQ) or "
                                                           "NAMELIST (MQOT_NAMELIST, for MQINQ)")
    object_string: StrictStr = Field("", max_length=10240, examples=["price/fruit/apples"],
                                     description="MQOD ObjectString: the topic string (object_type TOPIC), joined to "
                                                 "the TOPICSTR of the TOPIC object named by object_name")


class StatRequest(_Body):
    type: StrictStr | StrictInt = Field(..., examples=["ASYNC_ERROR"],
                                        description="MQSTAT Type: ASYNC_ERROR, RECONNECTION or RECONNECTION_ERROR")


class CloseRequest(_Body):
    options: list[StrictStr] = Field(default_factory=list, max_length=4, examples=[["DELETE"]],
                                     description="MQCO_ options: NONE, DELETE or DELETE_PURGE (a dynamic queue)")


class PutRequest(_Body):
    md: dict[str, Any] | None = Field(None, description="MQMD fields (docs/api.md §6); omitted fields take their "
                                                        "defaults")
    options: list[StrictStr] = Field(default_factory=list, max_length=16, examples=[["NO_SYNCPOINT"]])
    data: StrictStr = Field("", description="The message body: text, or base64 with data_encoding base64")
    data_encoding: StrictStr = Field("utf-8", description="utf-8 or base64")
    context: StrictStr | None = Field(None, description="MQPMO Context: with PASS_IDENTITY_CONTEXT or "
                                                        "PASS_ALL_CONTEXT, the hobj of a handle opened with "
                                                        "SAVE_ALL_CONTEXT whose last got message's context is passed")


class Put1Request(PutRequest):
    object_name: StrictStr = Field("", max_length=48)
    object_qmgr: StrictStr = Field("", max_length=48)
    alternate_user_id: StrictStr = Field("", max_length=12, description="MQOD AlternateUserId: with the put option "
                                                                        "ALTERNATE_USER_AUTHORITY the put is checked "
                                                                        "against this user's authority")
    object_type: StrictStr | StrictInt = Field("Q", description="Q, or TOPIC to publish (MQPUT1 of a topic)")
    object_string: StrictStr = Field("", max_length=10240, description="the topic string (object_type TOPIC)")


class GetRequest(_Body):
    options: list[StrictStr] = Field(default_factory=list, max_length=16, examples=[["WAIT", "SYNCPOINT"]])
    wait_ms: StrictInt = Field(0, description="With WAIT: how long to wait; -1 waits up to the server's maximum")
    match: dict[str, Any] | None = Field(
        None, description="msg_id, correl_id, group_id (48 hex digits), msg_seq_number, offset, "
                          "msg_token (32 hex digits)")
    buffer_length: StrictInt = Field(100 * 1024 * 1024, description="Longest body to return")
    md: dict[str, Any] | None = Field(None, description="MQMD fields that steer the get: coded_char_set_id and "
                                                        "encoding wanted with CONVERT (default 1208, 546)")


class PutBatchMessage(_Body):
    """One message of a put-batch: a put request's md, data and data_encoding."""

    md: dict[str, Any] | None = Field(None, description="MQMD fields (docs/api.md §6)")
    data: StrictStr = Field("", description="The message body: text, or base64 with data_encoding base64")
    data_encoding: StrictStr = Field("utf-8", description="utf-8 or base64")


class PutBatchRequest(_Body):
    options: list[StrictStr] = Field(default_factory=list, max_length=16, examples=[["NO_SYNCPOINT"]],
                                     description="Put options for every message of the batch")
    # Kept broad: each message is checked by the MQI rules with its index in the message, and
    # the count (1 to 1000) gives MQRC_PMO_ERROR, not a framework error.
    messages: list[Any] = Field(..., description="1 to 1000 messages, put in order",
                                examples=[[{"data": "one"}, {"md": {"priority": 7}, "data": "two"}]])
    context: StrictStr | None = Field(None, description="MQPMO Context for every message (see the put)")


class GetBatchRequest(GetRequest):
    max_messages: StrictInt = Field(100, description="Most messages to return, 1 to 1000")


class MqscRequest(_Body):
    script: StrictStr = Field(..., max_length=1_000_000,
                              examples=["DEFINE QLOCAL(APP.Q) QSGDISP(SHARED) CFSTRUCT(APPL1) +\n  MAXDEPTH(5000)"])


class SubscribeRequest(_Body):
    """MQSUB: the MQSD fields, by IBM's names in snake_case."""

    object_name: StrictStr = Field("", max_length=48, description="A TOPIC object whose TOPICSTR starts the topic")
    object_string: StrictStr = Field("", max_length=10240, examples=["price/fruit/#"],
                                     description="The topic string (IBM's wildcards # and +, or * and ? with "
                                                 "WILDCARD_CHAR)")
    sub_name: StrictStr = Field("", max_length=10240, description="SubName: needed for DURABLE, RESUME and ALTER")
    options: list[StrictStr] = Field(..., max_length=24, examples=[["CREATE", "MANAGED", "NON_DURABLE"]],
                                     description="MQSO_ names: CREATE, RESUME, ALTER, DURABLE, NON_DURABLE, MANAGED, "
                                                 "WILDCARD_TOPIC, WILDCARD_CHAR, SET_CORREL_ID, FAIL_IF_QUIESCING, ...")
    hobj: StrictStr | None = Field(None, description="Unmanaged: the handle of a queue this connection opened, "
                                                     "where publications go")
    sub_correl_id: StrictStr | None = Field(None, description="With SET_CORREL_ID: 48 hex digits (zeros: keep the "
                                                              "publisher's CorrelId)")


class SubCloseRequest(_Body):
    options: list[StrictStr] = Field(default_factory=list, max_length=4, examples=[["REMOVE_SUB"]],
                                     description="MQCO_ options of a subscription: KEEP_SUB or REMOVE_SUB")
