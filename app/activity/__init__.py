"""Activity records of the queue managers (SMF accounting/statistics counterpart): the schema,
the recorder used by the MQI verbs, and the asynchronous writer that ships rotated files to
the activity store read by the nightly analytics job (``spark_jobs``)."""

from app.activity.hooks import note, record_batch, recorded, room_for_batch
from app.activity.log import ActivityLog
from app.activity.schema import FIELDS, SCHEMA_VERSION, Verb

__all__ = ["ActivityLog", "FIELDS", "SCHEMA_VERSION", "Verb", "note", "record_batch", "recorded", "room_for_batch"]
