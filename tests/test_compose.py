"""docker-compose.yml, the Dockerfile and the compose guide's walk-through (docs/howto/compose.md) kept honest without a
Docker engine: every command they run is a real `qsg` command, every QSG_ variable a real
setting, the images split as documented. tests/test_compose_real.py (`pytest -m compose`) runs
them on a real engine."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import yaml

from app.cli import main
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def _resolve(cmd: list[str]) -> click.Command:
    assert cmd[0] == "qsg", cmd
    command: click.Command = main
    for word in cmd[1:]:
        if not isinstance(command, click.Group) or word.startswith("-"):
            break
        assert word in command.commands, f"'qsg {' '.join(cmd[1:])}' is not a command"
        command = command.commands[word]
    return command


def test_compose_services_use_real_commands_and_settings():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    fields = {f"QSG_{name.upper()}" for name in Settings.model_fields}
    ours = {name: svc for name, svc in compose["services"].items() if "build" in svc}
    assert {"migrate", "qm1", "qm2", "qm3"} <= set(ours)
    for name, svc in ours.items():
        command = _resolve(svc["command"])
        # what the command really reads: its options' variables and the queue manager settings
        known = fields | {p.envvar for p in command.params if isinstance(p.envvar, str)}
        for var in svc.get("environment", {}):
            assert var in known, \
                f"{name}: {var} is read by neither 'qsg {' '.join(svc['command'][1:])}' nor the settings"
    qm_names = sorted(svc["environment"]["QSG_QMGR"] for n, svc in ours.items() if n.startswith("qm"))
    assert qm_names == ["QM1", "QM2", "QM3"]
    assert "--appendfsync" in compose["services"]["redis"]["command"]  # the durability the docs promise


def test_dockerfile_runs_qsg_serve():
    text = (ROOT / "Dockerfile").read_text()
    assert 'CMD ["qsg", "serve"]' in text
    _resolve(["qsg", "serve"])


def test_compose_commands_run_locally_as_one_group(tmp_path, redis_server):
    """Start the compose file's own commands with its own variables (addresses made local) and
    use the group through its single entry point."""
    import os
    import subprocess
    import sys

    from tests.support.cluster import QmProcess, create_pg_database, drop_pg_database
    from tests.support.mq import MQ, MQFailed
    from tests.support.redis_server import free_port

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    db_url, db_name = create_pg_database()
    ports = {name: free_port() for name in services if name.startswith("qm")}

    def local_env(env: dict) -> dict[str, str]:
        out = {**os.environ}
        for key, value in env.items():
            value = str(value).replace("redis://redis:6379", redis_server.url.rsplit("/", 1)[0])
            if key == "QSG_DATABASE_URL":
                value = db_url
            if key in ("QSG_ACTIVITY_DIR", "QSG_REPORTS_DIR", "QSG_MQLOG_DIR"):  # the volumes, as folders of this test
                value = str(tmp_path / value.strip("/"))
            for svc, port in ports.items():
                value = value.replace(f"http://{svc}:9441", f"http://127.0.0.1:{port}")
            out[key] = value
        return out

    def argv(cmd: list[str]) -> list[str]:
        return [sys.executable, "-m", "app.cli", *cmd[1:]]

    started: list[subprocess.Popen] = []
    try:
        migrate = services["migrate"]
        done = subprocess.run(argv(migrate["command"]), env=local_env(migrate["environment"]),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        # the compose file runs with QSG_AUTH "on": its documented first step is the administrator
        assert services["qm1"]["environment"]["QSG_AUTH"] == "on"
        admin = ("admin", "compose-admin-pw")
        done = subprocess.run(argv(["qsg", "user", "add", "admin", "--admin", "--password-stdin"]),
                              env=local_env(migrate["environment"]), input=admin[1] + "\n",
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        qms = []
        for name, port in ports.items():
            env = {**local_env(services[name]["environment"]), "QSG_PORT": str(port)}
            qm = QmProcess(services[name]["environment"]["QSG_QMGR"], port, env, log_path=tmp_path / f"{name}.log")
            qm.proc = subprocess.Popen(argv(services[name]["command"]), env=env,
                                       stdout=open(qm.log_path, "wb"), stderr=subprocess.STDOUT)
            started.append(qm.proc)
            qms.append(qm)
        for qm in qms:
            qm.wait_ready()
        gw_port = free_port()
        gw_env = {**local_env(services["mq"]["environment"]), "QSG_GATEWAY_PORT": str(gw_port), "QSG_HOST": "127.0.0.1"}
        gw = QmProcess("MQ", gw_port, gw_env, log_path=tmp_path / "mq.log")
        gw.proc = subprocess.Popen(argv(services["mq"]["command"]), env=gw_env,
                                   stdout=open(gw.log_path, "wb"), stderr=subprocess.STDOUT)
        started.append(gw.proc)
        gw.wait_ready()
        with pytest.raises(MQFailed) as refused:  # without credentials
            MQ(gw.url, "NOBODY")
        assert refused.value.status == 401
        results = MQ(gw.url, connect=False, auth=admin).call("POST", "/v1/admin/mqsc", {"script": (
            "DEFINE CFSTRUCT(APPL1) CFLEVEL(5) RECOVER(YES)\nDEFINE QLOCAL(COMPOSE.Q) QSGDISP(SHARED) CFSTRUCT(APPL1)\n"
            "DISPLAY GROUP")})["results"]
        assert all(r["completion_code"] == 0 for r in results), results
        assert {o["QMNAME"] for o in results[2]["objects"]} == {"QM1", "QM2", "QM3"}
        # connections are spread over the queue managers; each call follows its connection
        clients = [MQ(gw.url, f"APP{i}", auth=admin) for i in range(3)]
        assert {c.hconn.split("-")[0] for c in clients} == {"QM1", "QM2", "QM3"}
        for i, c in enumerate(clients):
            c.put(c.open("COMPOSE.Q", ["OUTPUT"]), f"via gateway {i}")
        reader = clients[0]
        assert sorted(reader.drain(reader.open("COMPOSE.Q", ["INPUT_SHARED"]))) \
            == [f"via gateway {i}" for i in range(3)]
    finally:
        for p in started:
            p.terminate()
        for p in started:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        drop_pg_database(db_name)


def test_redis_cluster_overlay_points_every_cf_user_at_a_whole_cluster():
    """deploy/compose.redis-cluster.yml: six nodes with the settings docs/howto/redis-cluster.md asks
    for, each announcing its service name; every service of docker-compose.yml that uses the
    coupling facility gets the cluster's URL (every node a seed) and waits for the init service."""
    from app.cf.redisconn import cluster_seeds

    base = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    overlay = yaml.safe_load((ROOT / "deploy" / "compose.redis-cluster.yml").read_text())
    nodes = [n for n, svc in overlay["services"].items() if "--cluster-enabled" in svc.get("command", [])]
    assert nodes == ["redis", "redis-2", "redis-3", "redis-4", "redis-5", "redis-6"]
    for name in nodes:
        command = overlay["services"][name]["command"]
        options = dict(zip(command[1::2], command[2::2], strict=True))
        assert int(options["--cluster-node-timeout"]) < Settings().heartbeat_ttl_s * 1000, name
        assert options["--cluster-require-full-coverage"] == "no", name
        assert (options["--appendonly"], options["--appendfsync"]) == ("yes", "always"), name
        assert options["--cluster-announce-hostname"] == name, name
        assert options["--cluster-preferred-endpoint-type"] == "hostname", name
    volumes = [overlay["services"][n]["volumes"][0].split(":")[0] for n in nodes]
    assert len(set(volumes)) == 6 and "cfdata" not in volumes  # not the single Redis's data
    init = overlay["services"]["redis-cluster-init"]
    assert init["depends_on"] == {n: {"condition": "service_healthy"} for n in nodes}
    assert "redis-cli --cluster create" in init["command"][-1]
    users = [n for n, svc in base["services"].items() if "QSG_REDIS_URL" in svc.get("environment", {})]
    assert sorted(users) == ["migrate", "qm1", "qm2", "qm3"]
    for name in users:
        svc = overlay["services"][name]
        seeds, _ = cluster_seeds(svc["environment"]["QSG_REDIS_URL"])
        assert seeds == [(n, 6379) for n in nodes], name
        assert svc["depends_on"] == {"redis-cluster-init": {"condition": "service_completed_successfully"}}


ONE_SHOT = {"migrate", "redis-cluster-init"}  # run to completion at "up"; nothing to restart


def test_every_long_running_service_comes_back_by_itself():
    """Every service that runs for good - Redis (each cluster node too), PostgreSQL, the queue
    managers, the entry point, analytics, Prometheus - restarts by itself after a crash or an
    engine restart and has a healthcheck; what needs another service waits for it to be healthy
    (or done); the coupling facility keeps its contents across a restart (AOF on a volume)."""
    base = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    overlay = yaml.safe_load((ROOT / "deploy" / "compose.redis-cluster.yml").read_text())
    for source, services in (("docker-compose.yml", base["services"]), ("overlay", overlay["services"])):
        for name, svc in services.items():
            if name in ONE_SHOT or "image" not in svc and "build" not in svc:
                continue  # an overlay's additions to a base service: checked in the base
            assert svc.get("restart") == "unless-stopped", f"{source}: {name} has no restart policy"
            check = svc.get("healthcheck", {})
            assert check.get("test") and check.get("retries"), f"{source}: {name} has no healthcheck"
            for needed, condition in svc.get("depends_on", {}).items():
                wanted = "service_completed_successfully" if needed in ONE_SHOT else "service_healthy"
                assert condition == {"condition": wanted}, (source, name, needed, condition)
    for name in ("redis", "postgres", "migrate"):
        assert name in base["x-qmgr"]["depends_on"], name
    for name, svc in [("redis", base["services"]["redis"]),
                      *((n, s) for n, s in overlay["services"].items() if "--cluster-enabled" in s.get("command", []))]:
        command = svc["command"]
        assert command[command.index("--appendonly") + 1] == "yes", name
        assert command[command.index("--appendfsync") + 1] == "always", name
        assert any(v.endswith(":/data") and not v.startswith(("/", ".")) for v in svc["volumes"]), name
        assert "PONG" in " ".join(svc["healthcheck"]["test"]), name  # not healthy while -LOADING the AOF


def test_images_split_qmgr_without_java_and_spark_analytics_with():
    """The queue managers' image (target qmgr) has neither Java nor PySpark; only the analytics
    service runs the analytics image. Both run as the unprivileged user, with pinned versions."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name, svc in compose["services"].items():
        if "build" not in svc:
            continue
        want = "analytics" if svc["command"][1:2] == ["analytics"] else "qmgr"
        assert svc["build"]["target"] == want, name
        assert svc["image"] == ("qsg-emulator-analytics:latest" if want == "analytics" else "qsg-emulator:latest")
    stages = _dockerfile_stages()
    assert list(stages)[-1] == "qmgr"  # the default target
    for stage in ("qmgr", "analytics"):
        body = "\n".join(stages[stage])
        assert "USER qsg" in body, stage
    assert "openjdk" in "\n".join(stages["analytics"]) and "openjdk" not in "\n".join(stages["qmgr"])
    assert "COPY --from=deps /opt/qsg /opt/qsg" in stages["qmgr"]  # no PySpark in its venv
    assert "COPY --from=deps-analytics /opt/qsg /opt/qsg" in stages["analytics"]
    assert "-c /tmp/src/constraints.txt" in "\n".join(stages["deps"])
    assert "-c /tmp/src/constraints.txt" in "\n".join(stages["deps-analytics"])


def _dockerfile_stages() -> dict[str, list[str]]:
    """The Dockerfile's stages by name, each with its lines (its FROM line first)."""
    stages: dict[str, list[str]] = {}
    current = ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("FROM "):
            current = line.split(" AS ")[-1].strip() if " AS " in line else ""
            stages[current] = [line]
        elif current:
            stages[current].append(line)
    return stages


def _lineage(stages: dict[str, list[str]], stage: str) -> list[str]:
    """``stage`` and the stages it is built FROM, nearest first."""
    chain = [stage]
    while (parent := stages[chain[-1]][0].split()[1]) in stages:
        chain.append(parent)
    return chain


def test_site_ca_and_builder_stages_stay_out_of_the_runtime_images():
    """The site's CAs (EXTRA_CA_CERTS) reach the builder stages only, never a stage the runtime
    images are built FROM; the builder stages carry the label the guide prunes by; the
    dependencies' venvs are built before any source is copied (a source change reuses them) and
    the runtime images add the project's wheel on top, offline."""
    stages = _dockerfile_stages()
    runtime = ("qmgr", "analytics")
    for stage in runtime:
        for ancestor in _lineage(stages, stage):
            body = "\n".join(stages[ancestor])
            assert "EXTRA_CA_CERTS" not in body and "update-ca-certificates" not in body, (stage, ancestor)
            assert "qsg-emulator.stage=build" not in body, (stage, ancestor)
    assert "LABEL qsg-emulator.stage=runtime" in stages["base"]
    builders = [s for s in stages if s not in (*runtime, "base")]
    assert set(builders) == {"deps", "deps-analytics", "build"}
    for stage in builders:
        nearest = next(line for s in _lineage(stages, stage) for line in stages[s]
                       if line.startswith("LABEL qsg-emulator.stage="))
        assert nearest == "LABEL qsg-emulator.stage=build", stage
    assert any("EXTRA_CA_CERTS" in line for line in stages["deps"])
    for stage in ("deps", "deps-analytics"):
        assert not [line for line in stages[stage] if line.startswith("COPY") and "pyproject.toml" not in line], stage
    assert "COPY app /tmp/src/app" in stages["build"]
    assert not [line for line in stages["build"] if "-r /tmp/src/requirements" in line]
    for stage in runtime:
        body = "\n".join(stages[stage])
        assert "COPY --from=build /tmp/wheels /tmp/wheels" in body, stage
        assert "pip install --no-index --no-deps /tmp/wheels/*.whl" in body, stage  # the project only


def test_qmgr_commands_need_no_pyspark_or_matplotlib():
    """What the slim image runs imports neither PySpark nor matplotlib (the 'analytics' extra)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "for m in ('pyspark', 'matplotlib', 'py4j', 'numpy'): sys.modules[m] = None  # absent\n"
        "import app.api.app, app.gateway, migrations\n"
        "from click.testing import CliRunner\n"
        "from app.cli import main\n"
        "for args in (['serve', '--help'], ['gateway', '--help'], ['db', 'upgrade', '--help'],"
        " ['user', 'add', '--help'], ['mqsc', '--help']):\n"
        "    r = CliRunner().invoke(main, args)\n"
        "    assert r.exit_code == 0, (args, r.output, r.exception)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_analytics_extra_holds_pyspark():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0] for d in project["dependencies"]}
    assert not names & {"pyspark", "matplotlib"}
    assert {"pyspark>=3.5", "matplotlib>=3.8"} <= set(project["optional-dependencies"]["analytics"])
    assert "qsg-emulator[analytics]" in project["optional-dependencies"]["test"]  # .ci/run installs all


#: The how-to guide whose walk-through tests/test_compose_real.py runs for real (opt-in: -m compose).
COMPOSE_GUIDE = "howto/compose.md"


def compose_walk_through() -> str:
    """The bash block of the docker-compose guide's walk-through (docs/howto/compose.md)."""
    text = (ROOT / "docs" / COMPOSE_GUIDE).read_text()
    return text.split("```bash\n", 1)[1].split("```", 1)[0]


def test_compose_walk_through_fits_the_compose_file():
    """Compose runs with authentication on: every call of the walk-through carries credentials,
    and the queue it uses is defined first (qsg up's sample is not there)."""
    block = compose_walk_through()
    assert "QSG_AUTH: \"on\"" in (ROOT / "docker-compose.yml").read_text()
    calls = [line for line in block.splitlines() if "curl " in line]
    assert len(calls) >= 8
    for line in calls:
        assert '-u "admin:$PW"' in line or '"X-API-Key: $KEY"' in line, line
    assert block.index("DEFINE QLOCAL(APP.SHARED.Q) QSGDISP(SHARED)") < block.index("APP.SHARED.Q\",\"options\"")
    assert "qsg user add admin --admin --password-stdin" in block and "qsg user key admin" in block


def test_compose_walk_through_runs_either_compose_and_waits_for_peer_recovery():
    """The walk-through runs Compose v2 or Debian's v1 through one shell function, and after its
    kill -9 of qm2 waits (bounded) for peer recovery's CSQE013I before it greps the logs: the
    lines come after QM2's lease lapses, some seconds after the kill."""
    lines = compose_walk_through().splitlines()
    function = 'compose() { if docker compose version >/dev/null 2>&1; then docker compose "$@"; ' \
               'else docker-compose "$@"; fi; }'
    assert lines.index(function) < min(i for i, line in enumerate(lines) if line.startswith("compose "))
    commands = [line.split("#", 1)[0] for line in lines if line != function]
    assert not [c for c in commands if "docker compose" in c or "docker-compose" in c]
    kill = next(i for i, line in enumerate(lines) if line.startswith("kill -9") and "qm2" in line)
    wait = next(i for i, line in enumerate(lines) if "grep -q CSQE013I" in line)
    grep = next(i for i, line in enumerate(lines) if line.endswith("| grep CSQE01"))
    assert kill < wait < grep
    assert lines[wait].startswith("for i in $(seq 60); do compose logs ") and "&& break; sleep 1; done" in lines[wait]
    page = (ROOT / "docs" / COMPOSE_GUIDE).read_text()
    assert '`export QSG_EXTRA_CA_CERTS="$(cat /usr/local/share/ca-certificates/*.crt)"`' in page
