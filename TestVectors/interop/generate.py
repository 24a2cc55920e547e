#!/usr/bin/env python3
"""Regenerates TestVectors/interop/: SAML responses made by pysaml2 acting as the IdP, with manifest.json.

pysaml2 (https://pypi.org/project/pysaml2/, made with 7.5.5) builds the responses with its own
`Server.create_authn_response` and signs and encrypts them with its default backend, Debian's xmlsec1 command
line tool (1.2.37). The test keys of TestVectors/keys/ are used: rsa-2048 signs (the IdP), sp-rsa-2048 is
the SP's encryption key (its certificate is in the SP metadata given to pysaml2). The clock is fixed so that
the manifest's `config` and `now` verify them: issued 2026-11-21T12:00:00Z, Conditions and bearer data valid
for 5 minutes, checked at 12:01; IdP, audience, destination and InResponseTo are those of TestVectors/.

  pysaml2-encrypted-not-self-contained  signed assertion, encrypted for the SP with
                                        encrypt_assertion_self_contained=False: the plaintext uses prefixes
                                        (ns1 = saml, ns2 = ds, xsi) that only the Response declares
  pysaml2-targeted-id                   signed assertion with eduPersonTargetedID, whose AttributeValue holds
                                        a saml:NameID as pysaml2 writes it

As pysaml2 does by default: the Response itself is not signed; data encryption is 3DES-CBC with RSA-OAEP
(mgf1p) key transport (pre_encryption_part's defaults, which create_authn_response offers no way to change),
so the encrypted vector needs the legacy encryption opt-in. Signatures are RSA-SHA256 / SHA-256, asked for
with sign_alg / digest_alg (pysaml2's default is RSA-SHA1). IDs, session keys and IVs are random: each run
rewrites every file. The manifest has the format of TestVectors/manifest.json (paths relative to
TestVectors/).

Run: pip install pysaml2==7.5.* signxml==4.* && apt-get install -y xmlsec1 && python3 TestVectors/interop/generate.py
"""
import base64, calendar, datetime, importlib.metadata, importlib.util, json, os, re, sys, tempfile, time, warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)
warnings.filterwarnings("ignore", message=".*has been moved to cryptography.hazmat.decrepit.*")

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("vectors_base", os.path.join(os.path.dirname(HERE), "generate.py"))
base = importlib.util.module_from_spec(_spec)  # constants, keys and the device-path verdicts of TestVectors/
_spec.loader.exec_module(base)

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import padding  # noqa: E402
from cryptography.hazmat.primitives.ciphers import Cipher, modes  # noqa: E402
from lxml import etree  # noqa: E402

# pysaml2 reads the clock through saml2.time_util (time.gmtime() and datetime.now()): both are fixed.
import saml2  # noqa: E402
from saml2 import time_util  # noqa: E402

FIXED = calendar.timegm((2026, 11, 21, 12, 0, 0, 0, 0, 0))
_gmtime = time.gmtime


class _FixedDateTime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return datetime.datetime.fromtimestamp(FIXED, tz or datetime.timezone.utc)


def _fixed_gmtime(seconds=None):
    return _gmtime(FIXED if seconds is None else seconds)


time_util.datetime = _FixedDateTime
time.gmtime = _fixed_gmtime

from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT  # noqa: E402
from saml2.config import IdPConfig  # noqa: E402
from saml2.saml import NAME_FORMAT_URI, NAMEID_FORMAT_PERSISTENT, NameID  # noqa: E402
from saml2.server import Server  # noqa: E402

PYSAML2_VERSION = importlib.metadata.version("pysaml2")

RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
UID_OID = "urn:oid:0.9.2342.19200300.100.1.1"
EPTID_OID = "urn:oid:1.3.6.1.4.1.5923.1.1.1.10"
SP_KEY = os.path.join(base.KEYS, "sp-rsa-2048.key.pem")
XENC = "http://www.w3.org/2001/04/xmlenc#"
vectors = []


def der_base64(cert_path):
    cert = x509.load_pem_x509_certificate(open(cert_path, "rb").read())
    return base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()


def identity_provider(workdir):
    """A pysaml2 IdP for TestVectors' IdP entity, knowing the SP (audience, ACS, encryption key) by metadata."""
    sp_metadata = os.path.join(workdir, "sp-metadata.xml")
    open(sp_metadata, "w").write(
        '<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" xmlns:ds="http://www.w3.org/2000/09/xmldsig#" '
        'entityID="%s"><md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol" '
        'WantAssertionsSigned="true"><md:KeyDescriptor use="encryption"><ds:KeyInfo><ds:X509Data><ds:X509Certificate>%s'
        '</ds:X509Certificate></ds:X509Data></ds:KeyInfo></md:KeyDescriptor>'
        '<md:AssertionConsumerService Binding="%s" Location="%s" index="0"/></md:SPSSODescriptor></md:EntityDescriptor>'
        % (base.AUDIENCE, der_base64(os.path.join(base.KEYS, "sp-rsa-2048.cert.pem")), BINDING_HTTP_POST, base.DESTINATION))
    config = IdPConfig().load({
        "entityid": base.IDP,
        "key_file": os.path.join(base.KEYS, "rsa-2048.key.pem"),
        "cert_file": os.path.join(base.KEYS, "rsa-2048.cert.pem"),
        "xmlsec_binary": "/usr/bin/xmlsec1",
        "metadata": {"local": [sp_metadata]},
        "service": {"idp": {
            "endpoints": {"single_sign_on_service": [(base.IDP + "/sso", BINDING_HTTP_REDIRECT)]},
            "policy": {"default": {"lifetime": {"minutes": 5}, "attribute_restrictions": None, "name_form": NAME_FORMAT_URI}},
            "name_id_format": [NAMEID_FORMAT_PERSISTENT],
        }},
    })
    return Server(config=config)


def authn_response(idp, identity, **kw):
    response = idp.create_authn_response(
        identity, base.REQUEST, base.DESTINATION, base.AUDIENCE,
        name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text="subscriber-0042"),
        authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport", "authn_instant": FIXED},
        sign_assertion=True, sign_response=False, sign_alg=RSA_SHA256, digest_alg=SHA256, **kw)
    return str(response).encode()


def decrypted_assertion(data):
    """The plaintext of the EncryptedAssertion, decrypted here with the SP key (RSA-OAEP, 3DES-CBC) to check
    what the vector is for."""
    root = etree.fromstring(data)
    encrypted_data = root.find(".//{%s}EncryptedData" % XENC)
    assert encrypted_data.find("{%s}EncryptionMethod" % XENC).get("Algorithm") == XENC + "tripledes-cbc"
    wrapped = base64.b64decode(encrypted_data.find(".//{%s}EncryptedKey//{%s}CipherValue" % (XENC, XENC)).text)
    key = serialization.load_pem_private_key(open(SP_KEY, "rb").read(), None)
    session = key.decrypt(wrapped, padding.OAEP(padding.MGF1(hashes.SHA1()), hashes.SHA1(), None))
    value = base64.b64decode(encrypted_data.find("{%s}CipherData/{%s}CipherValue" % (XENC, XENC)).text)
    try:
        from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    except ImportError:
        from cryptography.hazmat.primitives.ciphers.algorithms import TripleDES
    decryptor = Cipher(TripleDES(session), modes.CBC(value[:8])).decryptor()
    padded = decryptor.update(value[8:]) + decryptor.finalize()
    return padded[:-padded[-1]]


def add(id, data, description, fields, missing_fields=None, **extra):
    path = "interop/%s.xml" % id
    open(os.path.join(base.HERE, path), "wb").write(data)
    entry = {"id": id, "file": path, "description": description, "cert": "keys/rsa-2048.cert.pem", "now": base.NOW,
             "expect": "valid", "code": None, "signed_by": "pysaml2 %s (xmlsec1)" % PYSAML2_VERSION,
             "config": {"issuer": base.IDP, "audience": base.AUDIENCE, "destination": base.DESTINATION,
                        "inResponseTo": base.REQUEST},
             "nameID": "subscriber-0042", "fields": fields}
    entry.update(extra)
    if missing_fields:
        entry["missingFields"] = missing_fields
    vectors.append(entry)


def main():
    with tempfile.TemporaryDirectory() as workdir:
        idp = identity_provider(workdir)
        encrypted = authn_response(idp, {"uid": ["subscriber-0042"], "householdId": ["hh-7731"]},
                                   encrypt_assertion=True, encrypt_assertion_self_contained=False)
        targeted = authn_response(idp, {"uid": ["subscriber-0042"], "eduPersonTargetedID": [
            {"text": "tid-42", "NameQualifier": base.IDP, "SPNameQualifier": base.AUDIENCE}]})

    # What the encrypted vector is for: the plaintext's prefixes are declared on the Response only.
    plaintext = decrypted_assertion(encrypted)
    start = plaintext[:plaintext.index(b">") + 1]
    assert start.startswith(b"<ns1:Assertion") and b"xmlns" not in start, start
    assert b"<ns2:Signature" in plaintext and b"xmlns:ns2" not in plaintext and b" xsi:type=" in plaintext
    assert re.search(rb'^(<\?xml[^>]*>\s*)?<ns0:Response [^>]*xmlns:ns1="%s"[^>]*xmlns:ns2="%s"[^>]*xmlns:xsi=' % (
        base.SAML.encode(), base.DS.encode()), encrypted), encrypted[:400]
    assert b'<ns0:EncryptedData xmlns:ns0="%s" xmlns:ns1="%s"' % (XENC.encode(), base.DS.encode()) in encrypted

    add("pysaml2-encrypted-not-self-contained", encrypted,
        "pysaml2 IdP, encrypt_assertion_self_contained=False: a signed assertion encrypted for the SP (3DES-CBC, "
        "RSA-OAEP) whose plaintext <ns1:Assertion> uses ns1 (saml), ns2 (ds) and xsi declared only on the unsigned "
        "Response (the xenc/ds EncryptedData rebinds ns0 and ns1 around the ciphertext): decrypted in the "
        "EncryptedAssertion's namespace context it verifies",
        {UID_OID: ["subscriber-0042"], "householdId": ["hh-7731"], "NameID": ["subscriber-0042"]},
        missing_fields=["uid"], spKey="keys/sp-rsa-2048.key.pem", legacyEncryption=True)
    add("pysaml2-targeted-id", targeted,
        "pysaml2 IdP: eduPersonTargetedID (Name %s) whose AttributeValue holds a saml:NameID with NameQualifier and "
        "SPNameQualifier: its value is the NameID's text; asked for by FriendlyName it is missing" % EPTID_OID,
        {EPTID_OID: ["tid-42"], UID_OID: ["subscriber-0042"], "NameID": ["subscriber-0042"]},
        missing_fields=["eduPersonTargetedID", "uid"])

    base.device_path(vectors)
    json.dump(vectors, open(os.path.join(HERE, "manifest.json"), "w"), indent=1, ensure_ascii=False)
    print("%d vectors (pysaml2 %s)" % (len(vectors), PYSAML2_VERSION))


if __name__ == "__main__":
    main()
