"""TLS over real loopback sockets: queue managers serving HTTPS with a certificate the group's
development CA signed (app.tls.dev_certificate), clients that trust that CA and clients that do
not, an IBM REST call forwarded between two https members, ``qsg mqsc --ca-file``, the
pymqi-shaped client's ``ca_file``, ``qsg up --tls`` (with its entry point) and the start-up
refusal of a certificate that cannot be used."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

import app.client as pymqi
from app.cli import main as qsg
from app.client import CMQC
from app.tls import DevCertificate, certificate_not_trusted, dev_certificate
from tests.support.mq import MQ
from tests.support.names import uniq
from tests.test_qsg_up import _free_block

IBM_HEADERS = {"ibm-mq-rest-csrf-token": "", "Content-Type": "text/plain;charset=utf-8"}


@pytest.fixture(scope="module")
def certs(tmp_path_factory) -> DevCertificate:
    return dev_certificate(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def group(make_cluster, certs):
    return make_cluster(["QM1", "QM2"], env={"QSG_TLS_CERT": str(certs.cert), "QSG_TLS_KEY": str(certs.key),
                                             "QSG_TLS_CA": str(certs.ca)})


@pytest.fixture
def no_ambient_trust(monkeypatch):
    """No CA from the caller's environment: the tests decide what is trusted."""
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "QSG_CA_FILE"):
        monkeypatch.delenv(name, raising=False)


def trusting(certs: DevCertificate) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(certs.ca))


# ---- the development certificate ---------------------------------------------------------------


def test_the_development_certificate_names_every_loopback_address_and_is_reused(tmp_path):
    from cryptography import x509

    made = dev_certificate(tmp_path / "tls")
    cert = x509.load_pem_x509_certificate(made.cert.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["localhost"]
    assert {str(a) for a in san.get_values_for_type(x509.IPAddress)} == {"127.0.0.1", "::1"}
    assert cert.not_valid_after_utc - datetime.now(UTC) > timedelta(days=800)
    assert made.key.stat().st_mode & 0o077 == 0 and made.ca_key.stat().st_mode & 0o077 == 0
    before = {p: p.read_bytes() for p in (made.ca, made.cert)}
    again = dev_certificate(tmp_path / "tls")  # a client that trusted the CA keeps trusting it
    assert {p: p.read_bytes() for p in (again.ca, again.cert)} == before


# ---- a queue manager serving HTTPS -------------------------------------------------------------


def test_a_queue_manager_answers_over_https_to_a_client_that_trusts_the_ca(group, certs, no_ambient_trust):
    url = group.url("QM1")
    assert url.startswith("https://")
    r = httpx.get(f"{url}/v1/qmgr", verify=trusting(certs), timeout=10)
    assert r.status_code == 200 and r.json()["name"] == "QM1"
    # "localhost" is in the certificate too
    r = httpx.get(f"https://localhost:{group.qms['QM1'].port}/v1/health", verify=trusting(certs), timeout=10)
    assert r.status_code == 200


def test_a_client_that_does_not_trust_the_ca_is_refused(group, no_ambient_trust):
    with pytest.raises(httpx.ConnectError) as caught:
        httpx.get(f"{group.url('QM1')}/v1/qmgr", timeout=10)  # certifi's CAs only
    assert certificate_not_trusted(caught.value) is not None
    with pytest.raises(httpx.HTTPError):  # and plain HTTP is not served on the TLS port
        httpx.get(f"http://127.0.0.1:{group.qms['QM1'].port}/v1/qmgr", timeout=10)


def test_each_queue_manager_advertises_its_https_url_to_the_group(group):
    (result,) = group.mqsc_ok("QM1", "DISPLAY GROUP")
    urls = {o["QMNAME"]: o["URL"] for o in result["objects"] if "QMNAME" in o}
    assert urls == {"QM1": group.url("QM1"), "QM2": group.url("QM2")}, result


def test_an_ibm_rest_call_naming_another_queue_manager_is_forwarded_over_https(group, certs):
    """QM1 forwards to QM2's advertised https URL, verifying it with QSG_TLS_CA."""
    q = uniq("TLS")
    group.mqsc_ok("QM2", f"DEFINE QLOCAL({q})")
    base = f"{group.url('QM1')}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{q}/message"
    with httpx.Client(verify=trusting(certs), timeout=30) as http:
        assert http.post(base, content="over https", headers=IBM_HEADERS).status_code == 201
        r = http.delete(base, headers={"ibm-mq-rest-csrf-token": ""})
    assert r.status_code == 200 and r.text == "over https"


def test_mqi_calls_work_over_https(group, certs):
    q = uniq("TLS")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    mq = MQ(group.url("QM1"), verify=trusting(certs))
    mq.put(mq.open(q, ["OUTPUT"]), "secret", options=["NO_SYNCPOINT"])
    assert mq.get(mq.open(q, ["INPUT_SHARED"]), options=["NO_SYNCPOINT"])["data"] == "secret"


# ---- qsg mqsc ----------------------------------------------------------------------------------


def test_qsg_mqsc_over_https_with_a_ca_file(group, certs, no_ambient_trust):
    runner = CliRunner()
    done = runner.invoke(qsg, ["mqsc", "--url", group.url("QM2"), "--ca-file", str(certs.ca)], input="DISPLAY QMGR\n")
    assert done.exit_code == 0, done.output
    assert "QMNAME(QM2)" in done.output
    done = runner.invoke(qsg, ["mqsc", "--url", group.url("QM2")], input="DISPLAY QMGR\n",
                         env={"QSG_CA_FILE": str(certs.ca)})
    assert done.exit_code == 0, done.output


def test_qsg_mqsc_without_the_ca_says_the_certificate_is_not_trusted(group, no_ambient_trust):
    done = CliRunner().invoke(qsg, ["mqsc", "--url", group.url("QM2")], input="DISPLAY QMGR\n")
    assert done.exit_code == 20
    assert "TLS certificate is not trusted" in done.output and "--ca-file" in done.output


# ---- the pymqi-shaped client -------------------------------------------------------------------


def test_the_client_connects_over_https_with_its_ca_file(group, certs, no_ambient_trust, monkeypatch):
    q = uniq("TLS")
    group.mqsc_ok("QM1", f"DEFINE QLOCAL({q})")
    qmgr = pymqi.connect("QM1", "DEV.APP.SVRCONN", group.url("QM1"), ca_file=certs.ca)
    try:
        queue = pymqi.Queue(qmgr, q, CMQC.MQOO_OUTPUT | CMQC.MQOO_INPUT_SHARED)
        queue.put(b"over https", pymqi.MD(), pymqi.PMO(Options=CMQC.MQPMO_NO_SYNCPOINT))
        assert queue.get(None, pymqi.MD(), pymqi.GMO(Options=CMQC.MQGMO_NO_SYNCPOINT)) == b"over https"
        queue.close()
    finally:
        qmgr.disconnect()
    monkeypatch.setenv("QSG_CA_FILE", str(certs.ca))  # the same through the environment
    qmgr = pymqi.QueueManager("QM1", url=group.url("QM1"))
    assert qmgr.is_connected
    qmgr.disconnect()


def test_the_client_without_the_ca_fails_with_an_mq_reason(group, no_ambient_trust):
    with pytest.raises(pymqi.MQMIError) as caught:
        pymqi.connect("QM1", "DEV.APP.SVRCONN", group.url("QM1"))
    assert caught.value.reason == CMQC.MQRC_HOST_NOT_AVAILABLE and "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    with pytest.raises(pymqi.PYIFError, match="no-such-ca.pem"):
        pymqi.QueueManager(None, ca_file="/no-such-ca.pem")


# ---- start-up checks ---------------------------------------------------------------------------


def serve_with(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``qsg serve`` with these QSG_ variables; the TLS check comes before Redis is needed."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("QSG_")}
    return subprocess.run([sys.executable, "-m", "app.cli", "serve"], env={**base, **env}, capture_output=True,
                          text=True, timeout=60)


def test_a_certificate_that_cannot_be_read_stops_qsg_serve_with_one_line(certs, tmp_path):
    done = serve_with({"QSG_TLS_CERT": str(tmp_path / "missing.pem"), "QSG_TLS_KEY": str(certs.key)})
    assert done.returncode == 2
    assert done.stderr.strip() == f"qsg serve: QM1: cannot read the TLS certificate {tmp_path / 'missing.pem'}: " \
                                  "No such file or directory"
    done = serve_with({"QSG_TLS_CERT": str(certs.cert), "QSG_TLS_KEY": str(certs.ca_key)})  # not its key
    assert done.returncode == 2 and "cannot be used together: key values mismatch" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    done = serve_with({"QSG_TLS_CERT": str(certs.cert)})
    assert done.returncode == 2 and "--tls-key (QSG_TLS_KEY) is missing" in done.stderr
    done = serve_with({"QSG_TLS_CERT": str(certs.cert), "QSG_TLS_KEY": str(certs.key), "QSG_TLS_CA": str(certs.key)})
    assert done.returncode == 2 and f"the CA bundle {certs.key} holds no usable certificate" in done.stderr
    # the entry point checks its files the same way
    done = subprocess.run([sys.executable, "-m", "app.cli", "gateway", "--upstreams", "QM1=https://127.0.0.1:1",
                           "--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", str(certs.key)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip() == f"qsg gateway: cannot read the TLS certificate {tmp_path / 'missing.pem'}: " \
                                  "No such file or directory"


# ---- qsg up --tls ------------------------------------------------------------------------------


def test_qsg_up_tls_prints_https_urls_and_how_to_trust_them(tmp_path, no_ambient_trust):
    base = _free_block(4)
    workdir = tmp_path / "qsg"
    proc = subprocess.Popen([sys.executable, "-m", "app.cli", "up", "--tls", "--dir", str(workdir),
                             "--base-port", str(base + 1)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if "Ctrl-C stops the group" in line:
                break
        text = "".join(lines)
        urls = {ln.split()[0]: next(w for w in ln.split() if w.startswith("http"))
                for ln in lines if ln.strip().startswith(("QM", "any"))}
        assert set(urls) == {"any", "QM1", "QM2", "QM3"}, text
        assert all(u.startswith("https://") for u in urls.values()), text
        ca = workdir.resolve() / "tls" / "ca.pem"
        curl = next(ln.split() for ln in lines if ln.strip().startswith("curl --cacert"))
        assert curl[2] == str(ca), text
        assert f"export QSG_CA_FILE={ca}" in text and f"export SSL_CERT_FILE={ca}" in text
        assert f"export REQUESTS_CA_BUNDLE={ca}" in text and "ca_file=" in text
        # the printed curl command, as printed
        done = subprocess.run(curl[:-1] + ["-sS", "-f", curl[-1]], capture_output=True, text=True, timeout=30)
        assert done.returncode == 0 and '"name":"QM1"' in done.stdout, done.stderr
        # the entry point serves https too, and calls follow their connection through it
        via_entry_point = MQ(urls["any"], verify=ssl.create_default_context(cafile=str(ca)))
        hobj = via_entry_point.open("APP.SHARED.Q", ["OUTPUT"])
        via_entry_point.put(hobj, "through the entry point", options=["NO_SYNCPOINT"])
        get_side = MQ(urls["QM2"], verify=ssl.create_default_context(cafile=str(ca)))
        got = get_side.get(get_side.open("APP.SHARED.Q", ["INPUT_SHARED"]), options=["NO_SYNCPOINT"])
        assert got["data"] == "through the entry point"
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, out
    assert Path(workdir / "tls" / "server.pem").is_file()


# ---- a self-signed certificate shared by the group, no QSG_TLS_CA --------------------------------


def self_signed(folder: Path) -> tuple[Path, Path]:
    """One self-signed certificate for 127.0.0.1 (what an operator may make with openssl req -x509)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "qsg test self-signed")])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "self.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "self-key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                             serialization.PrivateFormat.PKCS8,
                                                             serialization.NoEncryption()))
    return folder / "self.pem", folder / "self-key.pem"


def test_members_sharing_a_self_signed_certificate_trust_each_other_without_a_ca_setting(
        make_cluster, tmp_path_factory):
    """QSG_TLS_CA unset: a QM trusts its own self-signed certificate, so forwarding to a member
    that serves the same one works; a client still needs it as its CA."""
    cert, key = self_signed(tmp_path_factory.mktemp("self"))
    g = make_cluster(["QM1", "QM2"], env={"QSG_TLS_CERT": str(cert), "QSG_TLS_KEY": str(key), "QSG_TLS_CA": ""})
    q = uniq("SELF")
    g.mqsc_ok("QM2", f"DEFINE QLOCAL({q})")
    base = f"{g.url('QM1')}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{q}/message"
    with httpx.Client(verify=ssl.create_default_context(cafile=str(cert)), timeout=30) as http:
        assert http.post(base, content="self-signed", headers=IBM_HEADERS).status_code == 201, "forwarded put"
        r = http.delete(base, headers={"ibm-mq-rest-csrf-token": ""})
    assert r.status_code == 200 and r.text == "self-signed"
    # QM3 serves the development certificate and trusts only its CA: QM2's certificate is not
    # trusted, and the forwarded call says so
    certs = dev_certificate(tmp_path_factory.mktemp("tls"))
    g.extra_env.update({"QSG_TLS_CERT": str(certs.cert), "QSG_TLS_KEY": str(certs.key), "QSG_TLS_CA": str(certs.ca)})
    g.add("QM3")
    via_qm3 = f"{g.url('QM3')}/ibmmq/rest/v2/messaging/qmgr/QM2/queue/{q}/message"
    r = httpx.delete(via_qm3, headers={"ibm-mq-rest-csrf-token": ""}, verify=trusting(certs), timeout=30)
    assert r.status_code == 503, r.text
    assert "TLS certificate is not trusted by QM3" in r.text and "QSG_TLS_CA" in r.text, r.text
