"""The Alembic migrations run for real, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import inspect

from app.core.objects import ObjectDef
from app.repository.db import alembic_config, make_engine, schema_status, upgrade
from app.repository.store import Repository
from tests.support.cluster import create_pg_database, drop_pg_database


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'm.db'}"
    else:
        url, name = create_pg_database()
        yield url
        drop_pg_database(name)


def test_upgrade_creates_the_schema_and_is_a_no_op_when_current(database_url):
    engine = make_engine(database_url)
    assert schema_status(engine)[0] is None
    upgrade(database_url)
    current, head = schema_status(engine)
    assert current == head
    tables = set(inspect(engine).get_table_names())
    assert {"qsg", "qmgr", "object_def", "alembic_version"} <= tables
    upgrade(database_url)  # again: nothing to do, nothing broken
    assert schema_status(engine)[0] == head
    engine.dispose()


def test_downgrade_and_upgrade_again(database_url):
    upgrade(database_url)
    command.downgrade(alembic_config(database_url), "base")
    engine = make_engine(database_url)
    assert "object_def" not in inspect(engine).get_table_names()
    upgrade(database_url)
    assert "object_def" in inspect(engine).get_table_names()
    engine.dispose()


def test_repository_namespace_rules(database_url):
    """One queue name per page set whatever its type; shared and private may share a name."""
    from app.core.errors import MQError

    upgrade(database_url)
    engine = make_engine(database_url)
    repo = Repository(engine, "QSG1")
    repo.register_qmgr("QM1", {"PERFMEV": "DISABLED"})
    repo.insert(ObjectDef("QLOCAL", "A.Q", "QMGR", "QM1", {"MAXDEPTH": 5}))
    with pytest.raises(MQError) as info:
        repo.insert(ObjectDef("QALIAS", "A.Q", "QMGR", "QM1", {"TARGET": "X"}))
    assert info.value.reason == 2100
    repo.insert(ObjectDef("QLOCAL", "A.Q", "SHARED", "@SHARED", {"CFSTRUCT": "APPL1"}))
    assert {d.qsgdisp for d in repo.visible_to("QM1")} == {"QMGR", "SHARED"}
    assert {d.qsgdisp for d in repo.visible_to("QM2")} == {"SHARED"}
    saved = repo.update(repo.find("QUEUE", "A.Q", "QM1"), lambda cur: {**cur.attrs, "MAXDEPTH": 6})
    assert saved.attrs["MAXDEPTH"] == 6 and saved.version == 2
    engine.dispose()


def test_igqaut_is_respelled_def_as_ibm_spells_it(database_url):
    """0003: a queue manager registered when IGQAUT's default was stored as DEFAULT gets DEF."""
    config = alembic_config(database_url)
    command.upgrade(config, "0002")
    engine = make_engine(database_url)
    repo = Repository(engine, "QSG1")
    repo.register_qmgr("QM1", {"IGQAUT": "DEFAULT", "IGQUSER": ""})
    repo.register_qmgr("QM2", {"IGQAUT": "CTX", "IGQUSER": ""})
    upgrade(database_url)
    assert (repo.qmgr_attrs("QM1")["IGQAUT"], repo.qmgr_attrs("QM2")["IGQAUT"]) == ("DEF", "CTX")
    command.downgrade(config, "0002")
    assert (repo.qmgr_attrs("QM1")["IGQAUT"], repo.qmgr_attrs("QM2")["IGQAUT"]) == ("DEFAULT", "CTX")
    engine.dispose()
