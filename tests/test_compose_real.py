"""docker-compose.yml on a real Docker engine (opt-in: ``pytest -m compose``; the default run
deselects it, and it is skipped, saying why, when no Docker engine answers).

It builds the images, brings the cluster up under a project name of its own (host ports chosen
free through QSG_MQ_PORT / QSG_QM1_PORT..QSG_QM3_PORT), follows the compose guide's walk-through (docs/howto/compose.md)
("Running the group with docker-compose") and takes the cluster down with its volumes.

Images: the base images are the ones QSG_BASE_IMAGE, REDIS_IMAGE and POSTGRES_IMAGE name; unset,
those of deploy/build-base-images.sh when this engine has them (machines without a registry),
else the public images. The build trusts QSG_EXTRA_CA_CERTS, by default the text the guide's own
``export QSG_EXTRA_CA_CERTS="$(cat ...)"`` gives (the site's CAs: a proxy that intercepts TLS to the
package index), so the build re-uses the layers of an operator who followed the guide and tags the
same images. Compose is ``docker compose`` (v2) when the plugin runs, else ``docker-compose`` (v1),
as the guide's ``compose`` function chooses. Untagged images of the project (label
``qsg-emulator.stage``) that the run left behind are removed at its end.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from tests.support.mq import MQ, MQFailed
from tests.support.redis_server import free_port
from tests.support.waits import wait_until
from tests.test_compose import COMPOSE_GUIDE, compose_walk_through

pytestmark = pytest.mark.compose

ROOT = Path(__file__).resolve().parents[1]
LOCAL_BASE = {  # what deploy/build-base-images.sh makes (IMAGE_PREFIX qsg-local, SUITE bookworm)
    "QSG_BASE_IMAGE": "qsg-local/python:3.11-bookworm",
    "REDIS_IMAGE": "qsg-local/redis:7-bookworm",
    "POSTGRES_IMAGE": "qsg-local/postgres:15-bookworm",
}
PASSWORD = compose_walk_through().split("export PW='", 1)[1].split("'", 1)[0]  # the walk-through's $PW
CSRF = {"ibm-mq-rest-csrf-token": "x"}
REDIS_CLUSTER_OVERLAY = "deploy/compose.redis-cluster.yml"  # docs/howto/redis-cluster.md


def _run(argv: list[str], timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)


def _engine() -> str | None:
    """Why no Docker engine can be used, or None when one answers."""
    if shutil.which("docker") is None:
        return "no docker command on the PATH"
    try:
        info = _run(["docker", "info", "--format", "{{.ServerVersion}}"], timeout=20)
    except subprocess.TimeoutExpired:
        return "docker info did not answer within 20 s"
    if info.returncode != 0:
        return f"no Docker engine answers: {(info.stderr.strip().splitlines() or ['?'])[-1]}"
    return None


def _compose_command() -> list[str] | None:
    """``docker compose`` (v2) or ``docker-compose`` (v1, Debian's package), whichever is there."""
    if _run(["docker", "compose", "version"], timeout=20).returncode == 0:
        return ["docker", "compose"]
    if shutil.which("docker-compose") and _run(["docker-compose", "version"], timeout=20).returncode == 0:
        return ["docker-compose"]
    return None


def _guide_ca_certs() -> str:
    """QSG_EXTRA_CA_CERTS as the compose guide's own ``export`` line sets it, run by bash (its
    ``$(cat ...)`` drops the last newline: the build argument must be the same text, byte for byte,
    or the builder installs everything again and re-tags the operator's images)."""
    text = (ROOT / "docs" / COMPOSE_GUIDE).read_text()
    line = re.search(r'`(export QSG_EXTRA_CA_CERTS="\$\(cat [^`]*\)")`', text)
    assert line, "the compose guide's export QSG_EXTRA_CA_CERTS line"
    done = _run(["bash", "-c", line.group(1) + ' 2>/dev/null; printf %s "$QSG_EXTRA_CA_CERTS"'], timeout=20)
    return done.stdout


def _untagged_project_images() -> set[str]:
    """Untagged images of this project (the classic builder's builder stages, or runtime images a
    rebuild replaced): dangling, with the Dockerfile's label qsg-emulator.stage."""
    done = _run(["docker", "images", "-q", "--no-trunc", "--filter", "dangling=true",
                 "--filter", "label=qsg-emulator.stage"], timeout=60)
    return set(done.stdout.split())


@pytest.fixture(scope="module", autouse=True)
def _no_untagged_images_left() -> Iterator[None]:
    """What this module's builds leave untagged (a first build's builder stages; the operator's
    images when the sources changed since they built) is removed when it ends; what was untagged
    before (an operator's build cache) is kept."""
    if _engine():
        yield
        return
    before = _untagged_project_images()
    yield
    # --no-prune: one image at a time, never an untagged parent with it (that parent may be the
    # operator's cache); the classic builder keeps one image per instruction, so a removed image's
    # parent is dangling in the next round when nothing else stands on it
    for _ in range(200):
        new = _untagged_project_images() - before
        if not new:
            break
        _run(["docker", "image", "rm", "--no-prune", *sorted(new)], timeout=300)
    assert _untagged_project_images() <= before, "untagged images left behind"


def _image_exists(name: str) -> bool:
    return _run(["docker", "image", "inspect", name], timeout=30).returncode == 0


class Compose:
    """``docker compose -p <unique> -f docker-compose.yml [-f overlay ...] ...`` with the test's
    environment."""

    def __init__(self, command: list[str], project: str, env: dict[str, str], log_dir: Path,
                 overlays: tuple[str, ...] = ()) -> None:
        files = [str(ROOT / "docker-compose.yml"), *(str(ROOT / o) for o in overlays)]
        self.argv = [*command, "-p", project, *(a for f in files for a in ("-f", f))]
        self.project = project
        # the same project for the guide's commands, which name neither (v1 and v2 read these)
        self.env = {**env, "COMPOSE_PROJECT_NAME": project, "COMPOSE_FILE": os.pathsep.join(files),
                    "COMPOSE_PATH_SEPARATOR": os.pathsep}
        self.log_dir = log_dir

    def __call__(self, *args: str, input: str | None = None, timeout: float = 300,
                 check: bool = True) -> subprocess.CompletedProcess:
        done = _run([*self.argv, *args], timeout=timeout, env=self.env, input=input, cwd=ROOT)
        if check:
            assert done.returncode == 0, f"compose {' '.join(args)}: exit {done.returncode}\n" \
                                         f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    def container(self, service: str) -> str:
        return self("ps", "-q", service).stdout.strip()

    def logs(self, *services: str) -> str:
        done = self("logs", "--no-color", *services, check=False)
        return done.stdout + done.stderr


@contextmanager
def _group(log_dir: Path, overlays: tuple[str, ...] = ()) -> Iterator[tuple[Compose, dict[str, str], dict[str, int]]]:
    """The compose group built and up under a project name of its own (free host ports), its
    queue managers and entry point ready; taken down with its volumes afterwards."""
    why = _engine()
    if why:
        pytest.skip(f"the compose test needs a Docker engine: {why}")
    command = _compose_command()
    if command is None:
        pytest.skip("the compose test needs 'docker compose' or 'docker-compose'; neither runs here")
    ports = {"QSG_MQ_PORT": free_port(), "QSG_QM1_PORT": free_port(), "QSG_QM2_PORT": free_port(),
             "QSG_QM3_PORT": free_port()}
    env = {**os.environ, **{k: str(v) for k, v in ports.items()}}
    for var, local in LOCAL_BASE.items():
        if var not in os.environ and _image_exists(local):
            env[var] = local
    env.setdefault("QSG_EXTRA_CA_CERTS", _guide_ca_certs())
    compose = Compose(command, f"qsgtest{uuid.uuid4().hex[:8]}", env, log_dir, overlays)
    compose("build", timeout=3600)
    try:
        compose("up", "-d", timeout=600)
        urls = {"MQ": f"http://127.0.0.1:{ports['QSG_MQ_PORT']}",
                **{f"QM{i}": f"http://127.0.0.1:{ports[f'QSG_QM{i}_PORT']}" for i in (1, 2, 3)}}
        for url in urls.values():
            _wait_ready(url)
        yield compose, urls, ports
    finally:
        (log_dir / "compose.log").write_text(compose.logs())
        compose("down", "-v", "--remove-orphans", timeout=300, check=False)
        leftover = _run(["docker", "volume", "ls", "-q", "--filter",
                         f"label=com.docker.compose.project={compose.project}"])
        assert leftover.stdout.strip() == "", f"volumes left behind: {leftover.stdout}"


# One group at a time (2 cores): each test brings its own up and takes it down when it ends.
@pytest.fixture
def cluster(tmp_path_factory):
    with _group(tmp_path_factory.mktemp("compose")) as group:
        yield group


@pytest.fixture
def on_redis_cluster(tmp_path_factory):
    with _group(tmp_path_factory.mktemp("compose-redis-cluster"), (REDIS_CLUSTER_OVERLAY,)) as group:
        yield group


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/v1/ready", timeout=3).status_code == 200
    except httpx.HTTPError:
        return False


def _wait_ready(url: str, timeout_s: float = 120) -> None:
    wait_until(lambda: _ready(url), timeout_s, f"{url}/v1/ready answering 200", every_s=0.5)


def _run_readme(compose: Compose, ports: dict[str, int]) -> subprocess.CompletedProcess:
    """The compose guide's walk-through as bash runs it, its own ``compose`` function choosing
    Compose v2 or v1: its project is this test's (COMPOSE_PROJECT_NAME, COMPOSE_FILE), its ports
    the ones chosen here; its last line (down -v) is the fixture's."""
    script = "\n".join(line for line in compose_walk_through().splitlines()
                       if not line.startswith("compose down"))
    for default, var in ((9440, "QSG_MQ_PORT"), (9441, "QSG_QM1_PORT"), (9442, "QSG_QM2_PORT"),
                         (9443, "QSG_QM3_PORT")):
        script = script.replace(f"127.0.0.1:{default}", f"127.0.0.1:{ports[var]}")
    done = _run(["bash", "-c", "set -uo pipefail -x\n" + script], timeout=3600, env=compose.env, cwd=ROOT)
    (compose.log_dir / "readme.log").write_text(done.stdout + "\n----- stderr\n" + done.stderr)
    return done


def test_compose_walk_through(cluster):
    compose, urls, ports = cluster
    today = datetime.now(UTC).date().isoformat()
    # -- the guide's walk-through, as written (its first steps create the administrator admin)
    readme = _run_readme(compose, ports)
    trace = f"{readme.stdout[-4000:]}\n{readme.stderr[-4000:]}"
    assert '"data":"hello from QM1"' in readme.stdout, trace  # put on QM1, got through the entry point
    assert "HTTP/1.1 201" in readme.stdout and "Hello World!" in readme.stdout, trace  # IBM REST across QMs
    assert f"{today}: " in readme.stdout and "report:" in readme.stdout, trace  # the analytics run
    assert today in readme.stdout.rsplit("report:", 1)[1], trace  # listed at /reports
    # the guide waits for peer recovery after its kill -9 of qm2, then its grep shows both lines
    assert re.search(r"CSQE011I QM[13]: peer recovery of QM2 .* started", readme.stdout), trace
    assert re.search(r"CSQE013I QM[13]: peer recovery of QM2 complete", readme.stdout), trace
    for url in urls.values():  # after the guide's kill -9 of qm2 and its Redis restart
        _wait_ready(url)

    first_records = int(readme.stdout.split(f"{today}: ", 1)[1].split(" records", 1)[0])

    # -- the images: unprivileged everywhere; Java and PySpark only in the analytics one
    for service in ("qm1", "mq", "analytics"):
        assert compose("exec", "-T", service, "id", "-u").stdout.strip() == "10001", service
    probe = "import importlib.util as u, shutil; print(shutil.which('java') is None, u.find_spec('pyspark') is None)"
    assert compose("exec", "-T", "qm1", "python3", "-c", probe).stdout.split() == ["True", "True"]
    assert compose("exec", "-T", "analytics", "python3", "-c", probe).stdout.split() == ["False", "False"]
    # the site's CAs were for the build's pip only: not in the runtime images' trust store nor history
    bodies = [pem.split("-----", 3)[2].split()[0] for pem in
              re.findall(r"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----",
                         compose.env["QSG_EXTRA_CA_CERTS"], re.S)]
    for service, image in (("qm1", "qsg-emulator:latest"), ("analytics", "qsg-emulator-analytics:latest")):
        store = compose("exec", "-T", service, "cat", "/etc/ssl/certs/ca-certificates.crt").stdout
        assert "BEGIN CERTIFICATE" in store and not [b for b in bodies if b in store], service
        history = _run(["docker", "history", "--no-trunc", image]).stdout
        assert "EXTRA_CA_CERTS" not in history and not [b for b in bodies if b in history], image

    # -- the same steps again, each checked in detail
    out = compose("run", "--rm", "-T", "migrate", "qsg", "user", "key", "admin").stdout
    key = next(line for line in out.split() if line.startswith("qsg_"))
    headers = {"X-API-Key": key}
    admin = ("admin", PASSWORD)
    # authentication is on: nothing without credentials
    assert httpx.post(f"{urls['MQ']}/v1/connections", json={}, timeout=10).status_code == 401
    results = httpx.post(f"{urls['MQ']}/v1/admin/mqsc", auth=admin, timeout=60,
                         json={"script": "DISPLAY GROUP"}).json()["results"]
    assert {o["QMNAME"] for o in results[0]["objects"]} == {"QM1", "QM2", "QM3"}, results

    # -- put on QM1 (API key), get through the entry point (user and password)
    qm1 = MQ(urls["QM1"], connect=False)
    qm1.http.headers.update(headers)
    qm1.hconn = qm1.call("POST", "/v1/connections", {"appl_name": "DEMO"})["hconn"]
    put = qm1.put(qm1.open("APP.SHARED.Q", ["OUTPUT"]), "hello from QM1", md={"persistence": "PERSISTENT"})
    assert put["md"]["put_qmgr"] == "QM1"
    via = MQ(urls["MQ"], "DEMO", auth=admin)
    got = via.get(via.open("APP.SHARED.Q", ["INPUT_SHARED"]), wait_ms=5000)
    assert got["data"] == "hello from QM1"
    via.disconnect()  # its input handle would keep the IBM REST get below out (DEFSOPT(EXCL))

    # -- IBM REST across queue managers: each forwards to the advertised URL of the QM named
    r = httpx.post(f"{urls['QM1']}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/APP.SHARED.Q/message", auth=admin,
                   headers={**CSRF, "Content-Type": "text/plain;charset=utf-8", "ibm-mq-md-persistence": "persistent"},
                   content="Hello World!", timeout=30)
    assert r.status_code == 201, r.text
    r = httpx.delete(f"{urls['QM3']}/ibmmq/rest/v2/messaging/qmgr/QM1/queue/APP.SHARED.Q/message?wait=5000",
                     auth=admin, headers=CSRF, timeout=30)
    assert r.status_code == 200, r.text
    assert r.text == "Hello World!"

    # -- kill -9 of a queue manager's container: Docker restarts it (restart: unless-stopped) and
    # its unit of work in flight is backed out; what it committed stays.
    qm2 = MQ(urls["QM2"], "CRASH", auth=admin)
    h2 = qm2.open("APP.SHARED.Q", ["OUTPUT"])
    qm2.put(h2, "committed on QM2", md={"persistence": "PERSISTENT"})
    qm2.put(h2, "in flight on QM2", md={"persistence": "PERSISTENT"}, options=["SYNCPOINT"])
    _crash(compose, "qm2")
    _wait_ready(urls["QM2"])
    wait_until(lambda: "peer recovery of QM2 complete: 1 unit(s) of work backed out" in compose.logs(),
               60, "CSQE013I for QM2 in docker compose logs", every_s=1)
    logs = compose.logs("qm2")
    assert logs.count("CSQY022I") >= 3, logs[-3000:]  # started, and started again after each kill
    assert "/v1/ready" not in logs  # the health checks every 5 s write no access lines
    via = MQ(urls["MQ"], "DEMO", auth=admin)  # a new connection: the one before may have been on QM2
    assert via.drain(via.open("APP.SHARED.Q", ["INPUT_SHARED"])) == ["committed on QM2"]

    # -- a Redis restart: with AOF and fsync always, the persistent messages are kept
    sent = [f"persistent {i}" for i in range(5)]
    hput = via.open("APP.SHARED.Q", ["OUTPUT"])
    for text in sent:
        via.put(hput, text, md={"persistence": "PERSISTENT"})
    compose("restart", "redis", timeout=120)
    for url in urls.values():
        _wait_ready(url)
    after = MQ(urls["MQ"], "AFTER", auth=admin)
    wait_until(lambda: _depth(after) == len(sent), 60, "the queue's depth after the Redis restart",
               tolerate=(MQFailed, httpx.HTTPError))
    assert after.drain(after.open("APP.SHARED.Q", ["INPUT_SHARED"])) == sent

    # -- Redis crashes (kill -9 of redis-server): nobody starts it, Docker does (restart:
    # unless-stopped), from its AOF on the cfdata volume; the group serves again by itself, with
    # every message it had. Meanwhile the QMs answer 2345 (503), or 2009 once their lease lapsed.
    kept = [f"before the crash {i}" for i in range(5)]
    hput = after.open("APP.SHARED.Q", ["OUTPUT"])
    for text in kept:
        after.put(hput, text, md={"persistence": "PERSISTENT"})
    after.put(hput, "non-persistent, in a CF that is not volatile")
    crashed = time.monotonic()
    _crash(compose, "redis")
    back = time.monotonic()

    def put_through_the_entry_point() -> bool:
        mq = MQ(urls["MQ"], "RECOVERED", auth=admin)  # a new connection on each try
        try:
            mq.put(mq.open("APP.SHARED.Q", ["OUTPUT"]), "after the crash", md={"persistence": "PERSISTENT"})
        finally:
            with contextlib.suppress(MQFailed, httpx.HTTPError):
                mq.disconnect()
        return True

    wait_until(put_through_the_entry_point, 120, "a put through the entry point after Redis crashed",
               tolerate=(MQFailed, httpx.HTTPError), every_s=0.5)
    serving = time.monotonic()
    for url in urls.values():
        _wait_ready(url)
    ready = time.monotonic()
    reader = MQ(urls["MQ"], "RECOVERED", auth=admin)
    assert reader.drain(reader.open("APP.SHARED.Q", ["INPUT_SHARED"])) \
        == [*kept, "non-persistent, in a CF that is not volatile", "after the crash"]
    reader.disconnect()
    print(f"Redis crash: Docker restarted it {back - crashed:.1f} s after the kill; a put through the "
          f"entry point succeeded {serving - crashed:.1f} s after the kill, every QM ready after "
          f"{ready - crashed:.1f} s")

    # -- the analytics run right after traffic says what the spools still hold
    first = compose("exec", "-T", "analytics", "qsg", "analytics", "run", "--date", today, "--no-progress",
                    timeout=900)
    assert "still in the queue managers' spools" in first.stderr, first.stderr[-2000:]
    # a queue manager's stop ships its file: then the run sees the day's calls
    compose("restart", "qm1", "qm2", "qm3", timeout=300)
    for url in urls.values():
        _wait_ready(url)
    second = compose("exec", "-T", "analytics", "qsg", "analytics", "run", "--date", today, "--no-progress",
                     timeout=900)
    records = int(second.stdout.split(f"{today}: ", 1)[1].split(" records", 1)[0])
    assert records > first_records, (first_records, second.stdout)  # the spools' records shipped at the stop
    index = httpx.get(f"{urls['QM1']}/reports", auth=admin, timeout=30)
    assert index.status_code == 200 and today in index.text, index.text[:2000]
    report = httpx.get(f"{urls['QM2']}/reports/{today}", headers=headers, timeout=30)
    assert report.status_code == 200 and "<svg" in report.text, report.text[:2000]

    # -- /docs from the image alone (Swagger UI's files are in the package, nothing from a CDN)
    page = httpx.get(f"{urls['QM1']}/docs", timeout=30)
    sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert page.status_code == 200 and sources and all(s.startswith("/docs/assets/") for s in sources), sources
    for source in sources:
        assert httpx.get(f"{urls['QM3']}{source}", timeout=30).status_code == 200, source


def _crash(compose: Compose, service: str) -> None:
    """Kill -9 ``service``'s main process from the host, as a crash (``docker kill`` and ``docker
    compose kill`` are deliberate stops, after which Docker restarts nothing), and wait until
    Docker has started the container again by its restart policy."""
    container = compose.container(service)
    pid = int(_run(["docker", "inspect", "-f", "{{.State.Pid}}", container]).stdout.strip())
    restarts = int(_run(["docker", "inspect", "-f", "{{.RestartCount}}", container]).stdout.strip())
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: int(_run(["docker", "inspect", "-f", "{{.RestartCount}}", container]).stdout.strip())
               > restarts, 60, f"Docker restarting {service}", every_s=0.2)


def _depth(mq: MQ) -> int:
    results = mq.call("POST", "/v1/admin/mqsc", {"script": "DISPLAY QLOCAL(APP.SHARED.Q) CURDEPTH"})["results"]
    return int(results[0]["objects"][0]["CURDEPTH"])


REDIS_NODES = ("redis", "redis-2", "redis-3", "redis-4", "redis-5", "redis-6")


def _owner(compose: Compose, key: str) -> str:
    """``host:port`` of the master holding ``key``'s slot, as Redis itself says it: the node
    ``redis`` answers a command on the key with MOVED when another master holds the slot."""
    reply = compose("exec", "-T", "redis", "redis-cli", "exists", key).stdout.strip()
    if reply.startswith("MOVED "):
        return reply.split()[2]
    assert reply in ("0", "1"), reply
    return "redis:6379"


def test_compose_on_redis_cluster(on_redis_cluster):
    """deploy/compose.redis-cluster.yml: the coupling facility on six Redis Cluster nodes (three
    masters, a replica each) formed by redis-cluster-init; the queue managers share queues on it."""
    compose, urls, _ports = on_redis_cluster
    from app.cf import keys

    # -- the cluster: formed by the one-shot service, every node sees the other five
    init = compose.logs("redis-cluster-init")
    assert "[OK] All 16384 slots covered." in init and "cluster_state:ok" in init, init[-3000:]
    for node in REDIS_NODES:
        info = compose("exec", "-T", node, "redis-cli", "cluster", "info").stdout
        assert "cluster_state:ok" in info and "cluster_known_nodes:6" in info, (node, info)
    roles = [compose("exec", "-T", n, "redis-cli", "role").stdout.split()[0] for n in REDIS_NODES]
    assert sorted(roles) == ["master"] * 3 + ["slave"] * 3, roles
    # run again, it creates nothing (and says so)
    again = compose("run", "--rm", "-T", "redis-cluster-init", timeout=180)
    assert "formed already" in again.stdout and "cluster_state:ok" in again.stdout, again.stdout[-2000:]

    # -- an administrator, three structures, a shared queue on each
    compose("run", "--rm", "-T", "migrate", "qsg", "user", "add", "admin", "--admin", "--password-stdin",
            input=f"{PASSWORD}\n", timeout=180)
    admin = ("admin", PASSWORD)
    structures = ("APPL1", "APPL2", "APPL3")
    script = "\n".join([*(f"DEFINE CFSTRUCT({s}) CFLEVEL(5) RECOVER(YES)" for s in structures),
                        *(f"DEFINE QLOCAL(APP.Q.{s}) QSGDISP(SHARED) CFSTRUCT({s})" for s in structures)])
    results = httpx.post(f"{urls['MQ']}/v1/admin/mqsc", auth=admin, timeout=60,
                         json={"script": script}).json()["results"]
    assert [r["completion_code"] for r in results] == [0] * 6, results
    # every queue manager knows the definitions (broadcast through the cluster) before it is used
    for qm in ("QM1", "QM2", "QM3"):
        shown = httpx.post(f"{urls[qm]}/v1/admin/mqsc", auth=admin, timeout=60,
                           json={"script": "DISPLAY QLOCAL(APP.Q.*) CFSTRUCT"}).json()["results"]
        assert {o["QUEUE"] for o in shown[0]["objects"]} == {f"APP.Q.{s}" for s in structures}, (qm, shown)

    # -- put on QM1, get on QM2, on each structure's queue
    qm1 = MQ(urls["QM1"], "PUTTER", auth=admin)
    qm2 = MQ(urls["QM2"], "GETTER", auth=admin)
    for s in structures:
        put = qm1.put(qm1.open(f"APP.Q.{s}", ["OUTPUT"]), f"to {s} from QM1", md={"persistence": "PERSISTENT"})
        assert put["md"]["put_qmgr"] == "QM1"
        got = qm2.get(qm2.open(f"APP.Q.{s}", ["INPUT_SHARED"]), wait_ms=5000)
        assert got["data"] == f"to {s} from QM1", (s, got)

    # -- DISPLAY CFSTATUS(*): CFNODE is the master Redis names for each structure's slot, and
    # these three structures' hash tags fall in the slot ranges of different masters
    rows = httpx.post(f"{urls['QM3']}/v1/admin/mqsc", auth=admin, timeout=60,
                      json={"script": "DISPLAY CFSTATUS(*)"}).json()["results"][0]["objects"]
    cfnode = {str(r["CFSTATUS"]): str(r["CFNODE"]) for r in rows}
    owners = {s: _owner(compose, keys.structure_state(keys.shared_tag("QSG1", s))) for s in cfnode}
    assert cfnode == owners, (cfnode, owners)
    spread = {cfnode[s] for s in structures}
    assert len(spread) > 1, cfnode
    # the addresses in the slot map and MOVED replies are service names the QMs reach
    for address in spread:
        host, port = address.rsplit(":", 1)
        assert host in REDIS_NODES and port == "6379", address
        probe = f"import socket; socket.create_connection(({host!r}, {port}), timeout=2).close()"
        compose("exec", "-T", "qm1", "python3", "-c", probe)

    # -- a master fails (its container killed with 'docker compose kill', a deliberate stop: Docker
    # does not restart it): its replica takes over (cluster-node-timeout 1000 ms), the structure
    # serves again on the new master, and the queue managers stay in the group. The master
    # chosen holds the group's records (heartbeats)
    # too when one of these structures shares it (as the hash tags fall now), else another
    # structure's (not the node redis: _owner asks it).
    group_master = _owner(compose, keys.heartbeat_key("QSG1", "QM1"))
    candidates = [s for s in structures if cfnode[s] != "redis:6379"]
    s = next((s for s in candidates if cfnode[s] == group_master), candidates[0])
    victim = cfnode[s].split(":")[0]
    compose("kill", victim)
    victim_container = compose("ps", "-a", "-q", victim).stdout.strip()
    mq = MQ(urls["MQ"], "FAILOVER", auth=admin)

    def served() -> bool:
        h = mq.open(f"APP.Q.{s}", ["OUTPUT", "INPUT_SHARED"])
        try:
            mq.put(h, "after the failover")
            return mq.get(h, wait_ms=2000)["data"] == "after the failover"
        finally:
            mq.close(h)

    wait_until(served, 60, f"a put and get on APP.Q.{s} after {victim} failed",
               tolerate=(MQFailed, httpx.HTTPError), every_s=0.5)
    moved = _owner(compose, keys.structure_state(keys.shared_tag("QSG1", s)))
    assert moved.split(":")[0] in REDIS_NODES and moved != cfnode[s], moved
    rows = httpx.post(f"{urls['QM1']}/v1/admin/mqsc", auth=admin, timeout=60,
                      json={"script": f"DISPLAY CFSTATUS({s})"}).json()["results"][0]["objects"]
    assert rows[0]["CFNODE"] == moved, rows
    for url in urls.values():
        assert _ready(url), url
    members = httpx.post(f"{urls['QM2']}/v1/admin/mqsc", auth=admin, timeout=60,
                         json={"script": "DISPLAY GROUP"}).json()["results"][0]["objects"]
    assert {(o["QMNAME"], o["STATUS"]) for o in members} \
        == {("QM1", "ACTIVE"), ("QM2", "ACTIVE"), ("QM3", "ACTIVE")}, members
    assert _state(victim_container) == "exited"  # a deliberate kill: no restart policy applies

    # -- the new master crashes (kill -9; it has no replica now, its old master is down): Docker
    # restarts it (restart: unless-stopped) from its AOF, and the structure serves again by itself
    # with the message put before the crash
    h = mq.open(f"APP.Q.{s}", ["OUTPUT"])
    mq.put(h, "before the crash", md={"persistence": "PERSISTENT"})
    mq.close(h)
    new_master = moved.split(":")[0]
    crashed = time.monotonic()
    _crash(compose, new_master)
    back = time.monotonic()
    recovered: list[str] = []

    def drained() -> bool:
        reader = MQ(urls["MQ"], "RECOVERED", auth=admin)  # a new connection on each try
        try:
            recovered.extend(reader.drain(reader.open(f"APP.Q.{s}", ["INPUT_SHARED"])))
        finally:
            with contextlib.suppress(MQFailed, httpx.HTTPError):
                reader.disconnect()
        return True

    wait_until(drained, 120, f"APP.Q.{s} served after {new_master} crashed",
               tolerate=(MQFailed, httpx.HTTPError), every_s=0.5)
    serving = time.monotonic()
    assert recovered == ["before the crash"], recovered
    assert _owner(compose, keys.structure_state(keys.shared_tag("QSG1", s))) == moved  # no replica to take over

    def served_again() -> bool:
        fresh = MQ(urls["MQ"], "AGAIN", auth=admin)
        try:
            h = fresh.open(f"APP.Q.{s}", ["OUTPUT", "INPUT_SHARED"])
            fresh.put(h, "after the restart")
            return fresh.get(h, wait_ms=2000)["data"] == "after the restart"
        finally:
            with contextlib.suppress(MQFailed, httpx.HTTPError):
                fresh.disconnect()

    wait_until(served_again, 60, f"a put and get on APP.Q.{s} after {new_master} came back",
               tolerate=(MQFailed, httpx.HTTPError), every_s=0.5)
    print(f"cluster master crash: Docker restarted {new_master} {back - crashed:.1f} s after the kill; "
          f"APP.Q.{s} served again {serving - crashed:.1f} s after it")

    # -- the master stopped by hand is started by hand: it rejoins as a replica of the master that
    # took over, and every node sees the whole cluster again (three masters, a replica each)
    compose("start", victim)

    def whole() -> bool:
        for node in REDIS_NODES:
            info = compose("exec", "-T", node, "redis-cli", "cluster", "info", check=False).stdout
            if "cluster_state:ok" not in info or "cluster_known_nodes:6" not in info:
                return False
            nodes = compose("exec", "-T", node, "redis-cli", "cluster", "nodes", check=False).stdout
            if nodes.count(" connected") != 6 or "fail" in nodes:
                return False
        return True

    wait_until(whole, 90, "the six nodes whole again", every_s=1)
    master_id = compose("exec", "-T", new_master, "redis-cli", "cluster", "myid").stdout.strip()
    myself = next(line.split() for line in compose("exec", "-T", victim, "redis-cli", "cluster", "nodes")
                  .stdout.splitlines() if "myself" in line)
    assert "slave" in myself[2] and myself[3] == master_id, (victim, myself, master_id)
    roles = [compose("exec", "-T", n, "redis-cli", "role").stdout.split()[0] for n in REDIS_NODES]
    assert sorted(roles) == ["master"] * 3 + ["slave"] * 3, roles


def _state(container: str) -> str:
    return _run(["docker", "inspect", "-f", "{{.State.Status}}", container]).stdout.strip()
