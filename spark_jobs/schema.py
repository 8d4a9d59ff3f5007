"""The Spark read schema of activity records, built from the one documented schema
(``app.activity.schema.FIELDS``), so the job and the writer can never disagree."""

from __future__ import annotations

from pyspark.sql.types import (
    BooleanType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from app.activity.schema import FIELDS

_TYPES: dict[str, DataType] = {"string": StringType(), "int": IntegerType(), "long": LongType(),
                               "bool": BooleanType()}

#: Every field nullable: a record leaves out what does not apply to it.
ACTIVITY_SCHEMA = StructType([StructField(f.name, _TYPES[f.type], True) for f in FIELDS])
