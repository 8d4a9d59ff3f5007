"""TLS for the queue managers and the entry point: checking the files an operator gives, the
context a queue manager trusts its peers with, and ``qsg up --tls``'s development certificate.

Serving HTTPS itself is uvicorn's (``ssl_certfile`` / ``ssl_keyfile``); this module only makes sure
that what it is handed loads, so that a wrong path is one clear line at start-up instead of a
traceback from inside the server, and that a queue manager which forwards a call to another
member (app/ibmrest/routing.py) verifies that member against the group's CA.
"""

from __future__ import annotations

import ipaddress
import os
import platform
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path


class TlsError(Exception):
    """A certificate, key or CA bundle that cannot be used; the message names the file and why."""


def _readable(path: str, what: str) -> None:
    """Raise TlsError unless ``path`` is a file this process can read."""
    try:
        with open(path, "rb") as f:
            f.read(1)
    except OSError as exc:
        raise TlsError(f"cannot read the {what} {path}: {exc.strerror or exc}") from None


def _reason(exc: ssl.SSLError) -> str:
    """OpenSSL's reason in words (``KEY_VALUES_MISMATCH`` -> ``key values mismatch``)."""
    return exc.reason.lower().replace("_", " ") if exc.reason else str(exc)


def check_server_files(cert: str, key: str) -> None:
    """Raise TlsError unless ``cert`` and ``key`` are both given, readable, and form a pair
    (the same check OpenSSL makes when the server starts, made before anything else starts)."""
    if bool(cert) != bool(key):
        missing = "--tls-key (QSG_TLS_KEY)" if cert else "--tls-cert (QSG_TLS_CERT)"
        raise TlsError(f"HTTPS needs a certificate and its key: {missing} is missing")
    if not cert:
        return
    _readable(cert, "TLS certificate")
    _readable(key, "TLS key")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        raise TlsError(f"the TLS certificate {cert} and key {key} cannot be used together: "
                       f"{_reason(exc)}") from None


def check_ca_file(ca_file: str) -> None:
    """Raise TlsError unless ``ca_file`` is a readable bundle of PEM certificates."""
    _readable(ca_file, "CA bundle")
    try:
        ssl.create_default_context(cafile=ca_file)
    except ssl.SSLError as exc:
        raise TlsError(f"the CA bundle {ca_file} holds no usable certificate: {_reason(exc)}") from None


def _is_self_signed(cert_file: str) -> bool:
    """Whether the first certificate of ``cert_file`` is its own issuer."""
    from cryptography import x509

    cert = x509.load_pem_x509_certificate(Path(cert_file).read_bytes())
    return cert.issuer == cert.subject


def peer_ssl_context(ca_file: str, own_cert: str) -> ssl.SSLContext:
    """What a queue manager verifies another member of the group with when it calls it over
    https: the CA bundle ``ca_file`` (``QSG_TLS_CA``) when given, else the system's trust store
    plus this QM's own certificate when it is self-signed - members of a group usually share
    one certificate, and a self-signed one is in no system store."""
    if ca_file:
        return ssl.create_default_context(cafile=ca_file)
    context = ssl.create_default_context()
    if own_cert and _is_self_signed(own_cert):
        context.load_verify_locations(cafile=own_cert)
    return context


def certificate_not_trusted(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate verification failure behind ``exc`` (an httpx error wraps it), if any:
    callers say "not trusted, give the CA" instead of a bare connection error."""
    cause: BaseException | None = exc
    seen = 0
    while cause is not None and seen < 10:  # a bounded walk: chains can, in principle, loop
        if isinstance(cause, ssl.SSLCertVerificationError):
            return cause
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return None


# ---- qsg up --tls: a development CA and a server certificate it signs ---------------------------

# Names every local client uses to reach the QMs of ``qsg up``.
DEV_DNS_NAMES = ("localhost",)
DEV_IP_ADDRESSES = ("127.0.0.1", "::1")
_CA_DAYS = 3650
# Browsers and macOS refuse server certificates valid longer than 825 days.
_SERVER_DAYS = 825
# A certificate that ends sooner than this is made anew rather than reused.
_RENEW_BEFORE = timedelta(days=30)


@dataclass(frozen=True)
class DevCertificate:
    """The files of ``qsg up --tls``: ``ca`` is what clients trust; ``cert``/``key`` what the
    queue managers and the entry point serve."""

    ca: Path
    ca_key: Path
    cert: Path
    key: Path


def dev_certificate(folder: Path) -> DevCertificate:
    """The development certificate under ``folder`` (``<qsg up --dir>/tls``): reused while it is
    valid for another 30 days and names localhost, 127.0.0.1 and ::1, so a client told to trust
    its CA once keeps trusting it across restarts; made anew otherwise (the CA too when it ends)."""
    files = DevCertificate(folder / "ca.pem", folder / "ca-key.pem", folder / "server.pem", folder / "server-key.pem")
    folder.mkdir(parents=True, exist_ok=True)
    if not _still_good(files.ca, files.ca_key):
        _write_ca(files)
        _write_server(files)  # a new CA: the old server certificate is no longer trusted
    elif not _still_good(files.cert, files.key) or not _names_loopback(files.cert):
        _write_server(files)
    return files


def _still_good(cert: Path, key: Path) -> bool:
    from cryptography import x509

    if not (cert.is_file() and key.is_file()):
        return False
    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    except ValueError:
        return False
    return loaded.not_valid_after_utc - datetime.now(UTC) > _RENEW_BEFORE


def _names_loopback(cert: Path) -> bool:
    """Whether the server certificate names localhost, 127.0.0.1 and ::1 (an older or hand-made
    one may not)."""
    from cryptography import x509

    loaded = x509.load_pem_x509_certificate(cert.read_bytes())
    try:
        san = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    ips = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    return set(DEV_DNS_NAMES) <= set(san.get_values_for_type(x509.DNSName)) and set(DEV_IP_ADDRESSES) <= ips


def _write_private(path: Path, data: bytes) -> None:
    """Write a private key readable by its owner only (created so, never world-readable even briefly)."""
    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)  # O_CREAT keeps the mode of a file that already exists
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    tmp.replace(path)


def _write_ca(files: DevCertificate) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "qsg up development"),
                      x509.NameAttribute(NameOID.COMMON_NAME, f"qsg up development CA ({platform.node()})")])
    now = datetime.now(UTC)
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=_CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(ski, critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
            .sign(key, hashes.SHA256()))
    _write_private(files.ca_key, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()))
    files.ca.write_bytes(cert.public_bytes(serialization.Encoding.PEM))


def _write_server(files: DevCertificate) -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_cert = x509.load_pem_x509_certificate(files.ca.read_bytes())
    ca_key = serialization.load_pem_private_key(files.ca_key.read_bytes(), password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise TlsError(f"{files.ca_key} is not the EC key qsg up made: remove {files.ca.parent} to start afresh")
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.now(UTC)
    san = x509.SubjectAlternativeName([*(x509.DNSName(n) for n in DEV_DNS_NAMES),
                                       *(x509.IPAddress(ipaddress.ip_address(a)) for a in DEV_IP_ADDRESSES)])
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5)).not_valid_after(now + timedelta(days=_SERVER_DAYS))
            .add_extension(san, critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=False, crl_sign=False,
                                         content_commitment=False, key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False, decipher_only=False),
                           critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
            .sign(ca_key, hashes.SHA256()))
    _write_private(files.key, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    files.cert.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
