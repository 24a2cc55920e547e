#!/usr/bin/env python3
"""Regenerates TestVectors/: test keys, MVPD-shaped SAML responses and the attack vectors, with manifest.json.

Signing is done by signxml (Python, lxml + cryptography), an implementation independent of libxmlsec1, so
that a bug shared by signing and verifying cannot hide. Keys are test keys generated here; they protect
nothing. Run: pip install signxml==4.* && python3 TestVectors/generate.py   (the output is committed).
Keys are kept when they exist, so regenerating changes only what the templates change. Encryption (random
session keys and IVs) and ECDSA signatures are not deterministic: to add or change vectors without rewriting
the others, name them: python3 TestVectors/generate.py ID... writes only those responses (and the manifest).
"""
import copy, datetime, json, os, re, sys
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID
from lxml import etree
from signxml import XMLSigner, methods
from cryptography.hazmat.primitives.asymmetric import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms as ciphers, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
import base64

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = os.path.join(HERE, "keys")
OUT = os.path.join(HERE, "responses")
SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML = "urn:oasis:names:tc:SAML:2.0:assertion"
DS = "http://www.w3.org/2000/09/xmldsig#"
EXC = "http://www.w3.org/2001/10/xml-exc-c14n#"

IDP = "https://idp.mvpd.example.com"
AUDIENCE = "https://saml.sp.auth.adobe.com"
DESTINATION = "https://sp.example.com/api/v2/REF30/profiles/sso/Apple"
REQUEST = "_aq-3f9a1b2c"
ISSUED = "2026-11-21T12:00:00Z"
NOW = "2026-11-21T12:01:00Z"


def key_pair(name, make):
    key_path, cert_path = os.path.join(KEYS, name + ".key.pem"), os.path.join(KEYS, name + ".cert.pem")
    if os.path.exists(key_path):
        return open(key_path, "rb").read(), open(cert_path, "rb").read()
    key = make()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "swift-saml test " + name)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(datetime.datetime(2026, 1, 1)).not_valid_after(datetime.datetime(2036, 1, 1))
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    open(key_path, "wb").write(key_pem)
    open(cert_path, "wb").write(cert_pem)
    return key_pem, cert_pem


def response_xml(attributes, issuer=IDP, audience=AUDIENCE, status="urn:oasis:names:tc:SAML:2.0:status:Success",
                 suffix="", pretty=False, name_id="subscriber-0042"):
    attrs = "".join(
        '<saml:Attribute Name="%s" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">%s</saml:Attribute>'
        % (name, "".join("<saml:AttributeValue>%s</saml:AttributeValue>" % v for v in values))
        for name, values in attributes)
    xml = (
        '<samlp:Response xmlns:samlp="%(samlp)s" xmlns:saml="%(saml)s" ID="_resp%(s)s" Version="2.0" '
        'IssueInstant="%(t)s" Destination="%(dest)s" InResponseTo="%(req)s">'
        '<saml:Issuer>%(issuer)s</saml:Issuer>'
        '<samlp:Status><samlp:StatusCode Value="%(status)s"/></samlp:Status>'
        '<saml:Assertion ID="_assert%(s)s" Version="2.0" IssueInstant="%(t)s">'
        '<saml:Issuer>%(issuer)s</saml:Issuer>'
        '<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">%(nameid)s</saml:NameID>'
        '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">'
        '<saml:SubjectConfirmationData InResponseTo="%(req)s" Recipient="%(dest)s" NotOnOrAfter="2026-11-21T12:05:00Z"/>'
        '</saml:SubjectConfirmation></saml:Subject>'
        '<saml:Conditions NotBefore="2026-11-21T11:59:00Z" NotOnOrAfter="2026-11-21T12:05:00Z">'
        '<saml:AudienceRestriction><saml:Audience>%(aud)s</saml:Audience></saml:AudienceRestriction></saml:Conditions>'
        '<saml:AuthnStatement AuthnInstant="2026-11-21T11:58:30Z" SessionIndex="_session-1"><saml:AuthnContext>'
        '<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>'
        '</saml:AuthnContext></saml:AuthnStatement>'
        '<saml:AttributeStatement>%(attrs)s</saml:AttributeStatement>'
        '</saml:Assertion></samlp:Response>'
    ) % dict(samlp=SAMLP, saml=SAML, s=suffix, t=ISSUED, dest=DESTINATION, req=REQUEST, issuer=issuer,
             status=status, nameid=name_id, aud=audience, attrs=attrs)
    root = etree.fromstring(xml.encode())
    if pretty:
        etree.indent(root, space="    ")
    return root


def attributes(count_extra=0):
    base = [("uid", ["subscriber-0042"]), ("householdId", ["hh-7731"]), ("zip", ["10001", "10002"]),
            ("channelId", ["espn", "hbo", "kanal-5 Grüße"]), ("maxRating", ["TV-MA"]),
            ("upstreamUserID", ["u-99f1c2"]), ("language", ["en-US"])]
    extra = [("extra-%03d" % i, ["value-%03d-%s" % (i, "x" * 40), "second-%03d" % i]) for i in range(count_extra)]
    return base + extra


def placeholder(element):
    """An empty ds:Signature right after the element's Issuer, where SAML's schema puts it."""
    sig = etree.Element("{%s}Signature" % DS, nsmap={"ds": DS}, Id="placeholder")
    issuer = element.find("{%s}Issuer" % SAML)
    issuer.addnext(sig)


class LegacySigner(XMLSigner):
    """signxml refuses SHA-1 by default; the SHA-1 vector needs it, to prove the verifier refuses it."""

    def check_deprecated_methods(self):
        pass


def sign(element, key, cert, algorithm="rsa-sha256", digest="sha256", with_cert=True, c14n=EXC):
    placeholder(element)
    signer = LegacySigner(method=methods.enveloped, signature_algorithm=algorithm, digest_algorithm=digest, c14n_algorithm=c14n)
    signed = signer.sign(element, key=key, cert=cert if with_cert else None, reference_uri="#" + element.get("ID"),
                         id_attribute="ID")
    return signed


def sign_assertion(root, key, cert, **kw):
    assertion = root.find("{%s}Assertion" % SAML)
    signed = sign(copy.deepcopy(assertion), key, cert, **kw)
    root.replace(assertion, signed)
    return root


def sign_response(root, key, cert, **kw):
    return sign(root, key, cert, **kw)


XENC = "http://www.w3.org/2001/04/xmlenc#"
XENC11 = "http://www.w3.org/2009/xmlenc11#"


def encrypt_bytes(plaintext, data_algorithm):
    """Returns (session key, CipherValue bytes) for an xmlenc data algorithm, with Python's cryptography."""
    if data_algorithm.endswith("-gcm"):
        key = os.urandom(int(data_algorithm.split("#aes")[1][:3]) // 8)
        iv = os.urandom(12)
        return key, iv + AESGCM(key).encrypt(iv, plaintext, None)
    if data_algorithm.endswith("tripledes-cbc"):
        key, block, cipher = os.urandom(24), 8, ciphers.TripleDES
    else:
        key = os.urandom(int(data_algorithm.split("#aes")[1][:3]) // 8)
        block, cipher = 16, ciphers.AES
    iv = os.urandom(block)
    pad = block - len(plaintext) % block
    padded = plaintext + os.urandom(pad - 1) + bytes([pad])  # ISO 10126, as XML Encryption specifies
    encryptor = Cipher(cipher(key), modes.CBC(iv)).encryptor()
    return key, iv + encryptor.update(padded) + encryptor.finalize()


def encrypted_key_xml(session_key, cert_pem, transport, key_id=None):
    public_key = x509.load_pem_x509_certificate(cert_pem).public_key()
    if transport == "rsa-oaep-mgf1p":
        uri, params = XENC + "rsa-oaep-mgf1p", '<ds:DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/>'
        wrapped = public_key.encrypt(session_key, padding.OAEP(padding.MGF1(hashes.SHA1()), hashes.SHA1(), None))
    elif transport == "rsa-oaep-sha256":
        uri = XENC11 + "rsa-oaep"
        params = ('<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
                  '<xenc11:MGF xmlns:xenc11="%s" Algorithm="%smgf1sha256"/>' % (XENC11, XENC11))
        wrapped = public_key.encrypt(session_key, padding.OAEP(padding.MGF1(hashes.SHA256()), hashes.SHA256(), None))
    else:
        uri, params = XENC + "rsa-1_5", ""
        wrapped = public_key.encrypt(session_key, padding.PKCS1v15())
    identifier = ' Id="%s"' % key_id if key_id else ""
    return ('<xenc:EncryptedKey xmlns:xenc="%s" xmlns:ds="http://www.w3.org/2000/09/xmldsig#"%s><xenc:EncryptionMethod Algorithm="%s">%s</xenc:EncryptionMethod>'
            '<xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>'
            % (XENC, identifier, uri, params, base64.b64encode(wrapped).decode()))


def encrypt_element(element, cert_pem, container, transport="rsa-oaep-mgf1p", data="aes256-gcm", sibling_key=False,
                    strip_namespaces=False, plaintext=None):
    """Replaces `element` by <container><xenc:EncryptedData/>...</container>, the XML Encryption of its bytes
    (or of `plaintext`)."""
    if plaintext is None:
        plaintext = etree.tostring(element)
    if strip_namespaces:
        # Rely on the enclosing document's declaration of the saml prefix.
        plaintext = plaintext.replace(b' xmlns:saml="%s"' % SAML.encode(), b"", 1)
    data_uri = (XENC11 if data.endswith("-gcm") else XENC) + data
    session_key, cipher_value = encrypt_bytes(plaintext, data_uri)
    key = encrypted_key_xml(session_key, cert_pem, transport, key_id="_ek-1" if sibling_key else None)
    key_info = ('<ds:RetrievalMethod Type="http://www.w3.org/2001/04/xmlenc#EncryptedKey" URI="#_ek-1"/>' if sibling_key else key)
    xml = ('<saml:%s xmlns:saml="%s"><xenc:EncryptedData xmlns:xenc="%s" Type="%sElement">'
           '<xenc:EncryptionMethod Algorithm="%s"/><ds:KeyInfo xmlns:ds="%s">%s</ds:KeyInfo>'
           '<xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData></xenc:EncryptedData>%s</saml:%s>'
           % (container, SAML, XENC, XENC, data_uri, DS, key_info, base64.b64encode(cipher_value).decode(),
              key if sibling_key else "", container))
    replacement = etree.fromstring(xml.encode())
    element.getparent().replace(element, replacement)
    return replacement


def serialize(root):
    return etree.tostring(root, encoding="utf-8")


vectors = []
ONLY = set(sys.argv[1:])  # vector ids to write (all when empty); the manifest is always written whole


def add(id, data, description, expect, code=None, cert="rsa-2048", now=NOW, config=None, name_id=None, fields=None, signer=None,
        spKey=None, legacyEncryption=False, missingFields=None, oracle=None):
    path = "responses/%s.xml" % id
    if not ONLY or id in ONLY:
        open(os.path.join(HERE, path), "wb").write(data)
    entry = {"id": id, "file": path, "description": description, "cert": "keys/%s.cert.pem" % cert, "now": now,
             "expect": expect, "code": code, "signed_by": signer or "signxml",
             "config": config or {"issuer": IDP, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": REQUEST}}
    if name_id is not None:
        entry["nameID"] = name_id
    if fields is not None:
        entry["fields"] = fields
    if spKey is not None:
        entry["spKey"] = spKey
    if legacyEncryption:
        entry["legacyEncryption"] = True
    if missingFields is not None:
        entry["missingFields"] = missingFields
    if oracle is not None:
        entry["oracle"] = oracle
    vectors.append(entry)



INCLUSIVE = "http://www.w3.org/TR/2001/REC-xml-c14n-20010315"
SCD = ('<saml:SubjectConfirmationData InResponseTo="%s" Recipient="%s" NotOnOrAfter="2026-11-21T12:05:00Z"/>'
       % (REQUEST, DESTINATION)).encode()


def variant(suffix, replacements=(), sign="assertion", key=None, attrs=None, **kw):
    """A response changed by byte replacements before it is signed (so that the signature covers the change)."""
    xml = serialize(response_xml(attrs if attrs is not None else attributes(2), suffix=suffix, **kw))
    for old, new in replacements:
        assert old in xml, old
        xml = xml.replace(old, new, 1)
    root = etree.fromstring(xml)
    if sign in ("assertion", "both"):
        sign_assertion(root, *key)
    if sign in ("response", "both"):
        root = sign_response(root, *key)
    return serialize(root)


def encrypted_key_raw(wrapped, transport_uri, params=""):
    return ('<xenc:EncryptedKey xmlns:xenc="%s"><xenc:EncryptionMethod Algorithm="%s">%s</xenc:EncryptionMethod>'
            '<xenc:CipherData><xenc:CipherValue>%s</xenc:CipherValue></xenc:CipherData></xenc:EncryptedKey>'
            % (XENC, transport_uri, params, base64.b64encode(wrapped).decode()))


def encrypted_assertion_xml(plaintext, key_xml, data_uri, session_key=None, cipher_data=None):
    """saml:EncryptedAssertion around `plaintext` (bytes) encrypted with `data_uri`; `key_xml` goes in KeyInfo."""
    if cipher_data is None:
        if session_key is None:
            session_key, value = encrypt_bytes(plaintext, data_uri)
        else:
            value = encrypt_with(session_key, plaintext, data_uri)
        cipher_data = "<xenc:CipherValue>%s</xenc:CipherValue>" % base64.b64encode(value).decode()
    return ('<saml:EncryptedAssertion xmlns:saml="%s"><xenc:EncryptedData xmlns:xenc="%s" Type="%sElement">'
            '<xenc:EncryptionMethod Algorithm="%s"/><ds:KeyInfo xmlns:ds="%s">%s</ds:KeyInfo>'
            '<xenc:CipherData>%s</xenc:CipherData></xenc:EncryptedData></saml:EncryptedAssertion>'
            % (SAML, XENC, XENC, data_uri, DS, key_xml, cipher_data)).encode()


def encrypt_with(key, plaintext, data_uri):
    iv = os.urandom(12 if data_uri.endswith("-gcm") else 16)
    if data_uri.endswith("-gcm"):
        return iv + AESGCM(key).encrypt(iv, plaintext, None)
    pad = 16 - len(plaintext) % 16
    padded = plaintext + os.urandom(pad - 1) + bytes([pad])
    encryptor = Cipher(ciphers.AES(key), modes.CBC(iv)).encryptor()
    return iv + encryptor.update(padded) + encryptor.finalize()


def with_encrypted_assertion(suffix, encrypted_xml, key, sign_response_too=True):
    """A response whose Assertion is replaced by `encrypted_xml`, the Response signed (covering the ciphertext)."""
    root = response_xml(attributes(2), suffix=suffix)
    assertion = root.find("{%s}Assertion" % SAML)
    root.replace(assertion, etree.fromstring(encrypted_xml))
    return serialize(sign_response(root, *key) if sign_response_too else root)


def hardening(rsa2048, sp, attacker):
    """The rules of the hardening issue: one vector per rule, signed by signxml, encrypted by cryptography."""
    enc = {"spKey": "keys/sp-rsa-2048.key.pem", "signer": "signxml + cryptography"}
    sp_public = x509.load_pem_x509_certificate(sp[1]).public_key()
    plain_assertion = serialize(sign_assertion(response_xml(attributes(2), suffix="-h-plain"), *rsa2048))
    assertion_bytes = etree.tostring(etree.fromstring(plain_assertion).find("{%s}Assertion" % SAML))
    oaep = padding.OAEP(padding.MGF1(hashes.SHA1()), hashes.SHA1(), None)

    # Nothing is fetched: CipherReference (http, file) and RetrievalMethod to another document.
    gcm = XENC11 + "aes256-gcm"
    good_key = os.urandom(32)
    key_xml = encrypted_key_raw(sp_public.encrypt(good_key, oaep), XENC + "rsa-oaep-mgf1p")
    add("cipher-reference-http", with_encrypted_assertion("-h-cref-http", encrypted_assertion_xml(
        assertion_bytes, key_xml, gcm, cipher_data='<xenc:CipherReference URI="http://127.0.0.1:9/assertion"/>'), rsa2048),
        "EncryptedData whose ciphertext is a CipherReference to an http:// URL (server-side request forgery)",
        "invalid", "decryption.external-reference", **enc)
    file_key = ('<xenc:EncryptedKey xmlns:xenc="%s"><xenc:EncryptionMethod Algorithm="%srsa-oaep-mgf1p"/>'
                '<xenc:CipherData><xenc:CipherReference URI="file:///dev/zero"/></xenc:CipherData></xenc:EncryptedKey>' % (XENC, XENC))
    add("cipher-reference-file", with_encrypted_assertion("-h-cref-file", encrypted_assertion_xml(
        assertion_bytes, file_key, gcm, session_key=good_key), rsa2048),
        "EncryptedKey whose ciphertext is a CipherReference to file:///dev/zero (unbounded read)",
        "invalid", "decryption.external-reference", **enc)
    add("retrieval-method-external", with_encrypted_assertion("-h-retrieval", encrypted_assertion_xml(
        assertion_bytes, '<ds:RetrievalMethod Type="http://www.w3.org/2001/04/xmlenc#EncryptedKey" URI="http://127.0.0.1:9/key"/>',
        gcm, session_key=good_key), rsa2048),
        "KeyInfo/RetrievalMethod pointing to an http:// URL", "invalid", "decryption.external-reference", **enc)

    # One answer for every cryptographic failure (legacy algorithms allowed, where the oracles live).
    cbc = XENC + "aes128-cbc"
    rsa15 = XENC + "rsa-1_5"
    session = os.urandom(16)
    byte_length = (sp_public.key_size + 7) // 8
    bad_padding = bytes([0]) + os.urandom(byte_length - 1)
    while bad_padding[1] == 2:
        bad_padding = bytes([0]) + os.urandom(byte_length - 1)
    bad_padding_wrapped = pow(int.from_bytes(bad_padding, "big"), sp_public.public_numbers().e, sp_public.public_numbers().n).to_bytes(byte_length, "big")
    legacy = dict(enc, legacyEncryption=True)
    add("oracle-rsa15-invalid-padding", with_encrypted_assertion("-h-o1", encrypted_assertion_xml(
        assertion_bytes, encrypted_key_raw(bad_padding_wrapped, rsa15), cbc, session_key=session), rsa2048),
        "RSA-1_5 key transport whose plaintext has invalid PKCS#1 padding", "invalid", "decryption.failed", oracle="rsa15-cbc", **legacy)
    add("oracle-rsa15-valid-padding-wrong-key", with_encrypted_assertion("-h-o2", encrypted_assertion_xml(
        assertion_bytes, encrypted_key_raw(sp_public.encrypt(os.urandom(16), padding.PKCS1v15()), rsa15), cbc, session_key=session), rsa2048),
        "RSA-1_5 key transport with valid padding around another session key", "invalid", "decryption.failed", oracle="rsa15-cbc", **legacy)
    add("oracle-rsa15-valid-padding-wrong-length", with_encrypted_assertion("-h-o3", encrypted_assertion_xml(
        assertion_bytes, encrypted_key_raw(sp_public.encrypt(os.urandom(5), padding.PKCS1v15()), rsa15), cbc, session_key=session), rsa2048),
        "RSA-1_5 key transport with valid padding around a 5-byte key", "invalid", "decryption.failed", oracle="rsa15-cbc", **legacy)
    right = encrypted_key_raw(sp_public.encrypt(session, padding.PKCS1v15()), rsa15)
    add("oracle-cbc-plaintext-ill-formed", with_encrypted_assertion("-h-o4", encrypted_assertion_xml(
        b"<saml:Assertion xmlns:saml=\"" + SAML.encode() + b"\" ID=\"_x\"><unclosed>", right, cbc, session_key=session), rsa2048),
        "AES-CBC plaintext that is not well-formed XML", "invalid", "decryption.failed", oracle="rsa15-cbc", **legacy)
    add("oracle-cbc-plaintext-text-only", with_encrypted_assertion("-h-o5", encrypted_assertion_xml(
        b"just some text", right, cbc, session_key=session), rsa2048),
        "AES-CBC plaintext that is well-formed text, not an element", "invalid", "decryption.failed", oracle="rsa15-cbc", **legacy)
    add("oracle-cbc-bad-padding", with_encrypted_assertion("-h-o6", encrypted_assertion_xml(
        assertion_bytes, right, cbc, cipher_data="<xenc:CipherValue>%s</xenc:CipherValue>" % base64.b64encode(os.urandom(64)).decode()), rsa2048),
        "AES-CBC ciphertext with random bytes (padding fails)", "invalid", "decryption.failed", oracle="rsa15-cbc", **legacy)
    many = b"<saml:Assertion xmlns:saml=\"" + SAML.encode() + b"\" ID=\"_many\"" + b"".join(b" a%d=\"x\"" % i for i in range(100)) + b"/>"
    add("oracle-plaintext-over-limits", with_encrypted_assertion("-h-o7", encrypted_assertion_xml(many, right, cbc, session_key=session), rsa2048),
        "decrypted plaintext with 100 attributes on one element (over the cap, checked before parsing)",
        "invalid", "decryption.failed", oracle="rsa15-cbc", **legacy)

    # Caps before super-linear work (the 1 MiB versions are built by the tests).
    add("attributes-over-cap", variant("-h-attrs", [(b'<saml:Subject>', b'<saml:Subject' + b"".join(b' a%d="x"' % i for i in range(100)) + b'>')], key=rsa2048),
        "100 attributes on one signed element (cap 64, enforced before libxml2 parses)", "invalid", "xml.limit-exceeded")
    add("namespaces-over-cap", variant("-h-ns", [(b'<saml:Subject>', b'<saml:Subject' + b"".join(b' xmlns:n%d="urn:n%d"' % (i, i) for i in range(40)) + b'>')], key=rsa2048),
        "40 namespace declarations on one signed element (cap 32)", "invalid", "xml.limit-exceeded")

    # Bearer confirmation per Profiles 4.1.4.2.
    add("bearer-without-notonorafter", variant("-h-b1", [(SCD, SCD.replace(b' NotOnOrAfter="2026-11-21T12:05:00Z"', b""))], key=rsa2048),
        "bearer SubjectConfirmationData without NotOnOrAfter", "invalid", "subject-confirmation.incomplete")
    add("bearer-without-data", variant("-h-b2", [(SCD, b"")], key=rsa2048),
        "bearer SubjectConfirmation without SubjectConfirmationData", "invalid", "subject-confirmation.incomplete")
    add("bearer-without-recipient", variant("-h-b3", [(SCD, SCD.replace(b' Recipient="' + DESTINATION.encode() + b'"', b""))], key=rsa2048),
        "bearer SubjectConfirmationData without Recipient while the SP knows its endpoint", "invalid", "subject-confirmation.incomplete")
    add("recipient-is-sp-entity-id", variant("-h-b4", [(SCD, SCD.replace(DESTINATION.encode(), AUDIENCE.encode()))], key=rsa2048),
        "attribute-query response whose bearer Recipient names the SP's entity ID, accepted when configured so",
        "valid", name_id="subscriber-0042",
        config={"issuer": IDP, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": REQUEST,
                "recipients": [DESTINATION, AUDIENCE]})
    add("in-response-to-only-on-unsigned-response", variant("-h-irt", [(SCD, SCD.replace(b' InResponseTo="' + REQUEST.encode() + b'"', b""))], key=rsa2048),
        "only the assertion is signed and its bearer data has no InResponseTo; the unsigned Response's does not count",
        "invalid", "in-response-to.missing")
    add("signed-response-without-destination", variant("-h-dest", [(b' Destination="' + DESTINATION.encode() + b'"', b"")], sign="response", key=rsa2048),
        "a signed Response without Destination while the SP knows its endpoint (Bindings 3.5.5.2)", "invalid", "destination.missing")
    add("issuer-format-not-entity", variant("-h-fmt", [(b"<saml:Issuer>" + IDP.encode() + b"</saml:Issuer><saml:Subject>",
                                                        b'<saml:Issuer Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">' + IDP.encode() + b"</saml:Issuer><saml:Subject>")], key=rsa2048),
        "the Assertion's Issuer with a Format other than entity", "invalid", "issuer.format")

    # Impossible times, each read as malformed (never as a later instant).
    for name, bad, where in [("time-november-31", b"2026-11-31T12:00:00Z", "a 31st of November"),
                             ("time-february-29-non-leap", b"2027-02-29T12:00:00Z", "29 February of a non-leap year"),
                             ("time-offset-out-of-range", b"2026-11-21T12:05:00-99:59", "an offset of -99:59"),
                             ("time-offset-minutes-60", b"2026-11-21T12:05:00+00:60", "an offset of +00:60"),
                             ("time-second-60", b"2026-11-21T12:04:60Z", "second 60"),
                             ("time-plus-before-year", b"+2026-11-21T12:05:00Z", "a '+' before the year")]:
        add(name, variant("-h-" + name, [(b'<saml:Conditions NotBefore="2026-11-21T11:59:00Z" NotOnOrAfter="2026-11-21T12:05:00Z">',
                                          b'<saml:Conditions NotBefore="2026-11-21T11:59:00Z" NotOnOrAfter="' + bad + b'">')], key=rsa2048),
            "Conditions/@NotOnOrAfter with %s" % where, "invalid", "time.malformed")

    # The ID table is the one the checks saw: an Id inside the signature that xmlsec would register.
    keyinfo = variant("-h-kid", key=rsa2048).replace(b"<ds:KeyInfo>", b'<ds:KeyInfo Id="_resp-h-kid">', 1)
    add("keyinfo-id-duplicates-response-id", keyinfo,
        "an Id on the (unsigned) ds:KeyInfo equal to the Response's ID", "invalid", "id.duplicate")

    # A decrypted assertion is a document of its own: signed alone with inclusive C14N, then encrypted.
    alone = response_xml(attributes(2), suffix="-h-incl").find("{%s}Assertion" % SAML)
    alone = copy.deepcopy(alone)
    signed_alone = sign(alone, *rsa2048, c14n=INCLUSIVE)
    inclusive_plaintext = etree.tostring(signed_alone)
    add("encrypted-assertion-signed-inclusive-c14n", with_encrypted_assertion("-h-incl", encrypted_assertion_xml(
        inclusive_plaintext, encrypted_key_raw(sp_public.encrypt(good_key, oaep), XENC + "rsa-oaep-mgf1p"), gcm, session_key=good_key),
        rsa2048, sign_response_too=False),
        "an assertion the IdP signed as its own document with inclusive C14N, then encrypted (verified as a document of its own)",
        "valid", name_id="subscriber-0042", **enc)
    oaep256 = padding.OAEP(padding.MGF1(hashes.SHA1()), hashes.SHA256(), None)
    add("encrypted-assertion-oaep-mgf1p-sha256-digest", with_encrypted_assertion("-h-oaep256", encrypted_assertion_xml(
        assertion_bytes, encrypted_key_raw(sp_public.encrypt(good_key, oaep256), XENC + "rsa-oaep-mgf1p",
                                           '<ds:DigestMethod xmlns:ds="%s" Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>' % DS),
        gcm, session_key=good_key), rsa2048),
        "rsa-oaep-mgf1p key transport with a SHA-256 DigestMethod (XML Encryption 1.0, 5.4.2)", "valid", name_id="subscriber-0042", **enc)

    # An IdP's error Response carries no assertion: its status is what is reported.
    error = response_xml(attributes(2), suffix="-h-err")
    error.remove(error.find("{%s}Assertion" % SAML))
    status = error.find("{%s}Status" % SAMLP)
    status.remove(status.find("{%s}StatusCode" % SAMLP))
    etree.SubElement(etree.SubElement(status, "{%s}StatusCode" % SAMLP, Value="urn:oasis:names:tc:SAML:2.0:status:Responder"),
                     "{%s}StatusCode" % SAMLP, Value="urn:oasis:names:tc:SAML:2.0:status:AuthnFailed")
    etree.SubElement(status, "{%s}StatusMessage" % SAMLP).text = "subscriber not entitled"
    add("status-error-without-assertion", serialize(sign_response(error, *rsa2048)),
        "a signed error Response (Responder/AuthnFailed) without an assertion", "invalid", "status.not-success")

    # Attribute values as signed: element content, whitespace kept, empty values never satisfy a field.
    targeted = ('<saml:Attribute Name="urn:oid:1.3.6.1.4.1.5923.1.1.1.10" FriendlyName="eduPersonTargetedID">'
                '<saml:AttributeValue><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">tid-42</saml:NameID>'
                '</saml:AttributeValue></saml:Attribute>'
                '<saml:Attribute Name="padded"><saml:AttributeValue>  10001 </saml:AttributeValue></saml:Attribute>'
                '<saml:Attribute Name="empty"><saml:AttributeValue/><saml:AttributeValue>   </saml:AttributeValue></saml:Attribute>'
                '<saml:Attribute Name="nil"><saml:AttributeValue xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:nil="true"/></saml:Attribute>').encode()
    add("attribute-values-as-signed", variant("-h-values", [(b"<saml:AttributeStatement>", b"<saml:AttributeStatement>" + targeted)], key=rsa2048),
        "an AttributeValue holding a saml:NameID (eduPersonTargetedID: read as the NameID's text, asked for by its Name, "
        "never by its FriendlyName), one with surrounding spaces (kept), empty and nil ones (never satisfy a field)",
        "valid", name_id="subscriber-0042",
        fields={"urn:oid:1.3.6.1.4.1.5923.1.1.1.10": ["tid-42"], "padded": ["  10001 "]},
        missingFields=["empty", "nil", "eduPersonTargetedID"])


XSI = "http://www.w3.org/2001/XMLSchema-instance"
XPATH_ID = "x')|//*[count(//*[count(//*)>0])>0]|id('x"


def with_ids(suffix, key, assertion_id=None, response_id=None):
    """A response whose assertion is signed by signxml with the given IDs (the Reference URI is '#' + the
    assertion's ID, whatever it holds)."""
    root = response_xml(attributes(2), suffix=suffix)
    if assertion_id is not None:
        root.find("{%s}Assertion" % SAML).set("ID", assertion_id)
    if response_id is not None:
        root.set("ID", response_id)
    return serialize(sign_assertion(root, *key))


def saml_rules(rsa2048, sp):
    """Issue 33's rules: IDs are xs:NCNames, one Subject and one Conditions, no unknown condition, FriendlyName
    never finds a field; decrypted identifiers relying on their container's namespace declarations."""
    signed_ids = [
        ("id-xpath-injection", XPATH_ID, None,
         "the Assertion's ID (and its Reference URI '#' + ID) holds an XPath expression whose evaluation is cubic "
         "in the document: refused as not an xs:NCName before any digest, never evaluated"),
        ("id-not-ncname-colon", "a:b", None, "the signed Assertion's ID 'a:b' (a colon: a QName, not an xs:NCName)"),
        ("response-id-not-ncname", None, "_resp-r33 space",
         "the Response's ID holds a space (not an xs:NCName); the Assertion is signed with a well-formed ID"),
    ]
    for id, assertion_id, response_id, description in signed_ids:
        add(id, with_ids("-r33-" + id, rsa2048, assertion_id, response_id), description, "invalid", "id.malformed")
    # A digit first is accepted: NCName characters throughout, as bare UUIDs of real IdPs (SecureWorks, in
    # the conformance corpus) need; nothing an XPointer could read (docs/security.md).
    add("id-leading-digit", with_ids("-r33-id-leading-digit", rsa2048, "1abc-2f9e", None),
        "the signed Assertion's ID '1abc-2f9e' starts with a digit (a bare UUID style, not strictly an xs:NCName): "
        "accepted, every character is an NCName character", "valid", name_id="subscriber-0042")

    second_subject = (b'</saml:Subject><saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">admin</saml:NameID>'
                      b'<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">' + SCD +
                      b'</saml:SubjectConfirmation></saml:Subject>')
    add("assertion-two-subjects", variant("-r33-subjects", [(b"</saml:Subject>", second_subject)], key=rsa2048),
        "a signed assertion with a second saml:Subject (NameID 'admin', a complete bearer confirmation) after the "
        "first: the schema allows one", "invalid", "assertion.duplicate-element")
    second_conditions = (b'</saml:Conditions><saml:Conditions NotBefore="2026-11-21T11:59:00Z" NotOnOrAfter="2026-11-21T13:00:00Z">'
                         b'<saml:AudienceRestriction><saml:Audience>' + AUDIENCE.encode() +
                         b'</saml:Audience></saml:AudienceRestriction></saml:Conditions>')
    add("assertion-two-conditions", variant("-r33-conditions", [(b"</saml:Conditions>", second_conditions)], key=rsa2048),
        "a signed assertion with a second saml:Conditions (same audience, a longer window) after the first: the "
        "schema allows one", "invalid", "assertion.duplicate-element")

    end = b"</saml:AudienceRestriction></saml:Conditions>"
    unknown = ('<saml:Condition xmlns:xsi="%s" xmlns:ext="urn:example:ext" xsi:type="ext:Mystery"/>' % XSI).encode()
    add("condition-unknown-type", variant("-r33-unknown", [(end, end.replace(b"</saml:Conditions>", unknown + b"</saml:Conditions>"))], key=rsa2048),
        "a saml:Condition of an unknown xsi:type (ext:Mystery) inside Conditions: the assertion is Indeterminate "
        "(Core 2.5.1.5), so not valid", "invalid", "conditions.unknown")
    foreign = b'<ext:Mystery xmlns:ext="urn:example:ext"/>'
    add("conditions-foreign-element", variant("-r33-foreign", [(end, end.replace(b"</saml:Conditions>", foreign + b"</saml:Conditions>"))], key=rsa2048),
        "an element of a foreign namespace (ext:Mystery) inside Conditions: a condition nobody can evaluate",
        "invalid", "conditions.unknown")
    known = b"<saml:OneTimeUse/><saml:ProxyRestriction Count=\"1\"/>"
    add("conditions-onetimeuse-proxyrestriction",
        variant("-r33-known", [(end, end.replace(b"</saml:Conditions>", known + b"</saml:Conditions>"))], key=rsa2048),
        "control: saml:OneTimeUse and saml:ProxyRestriction Count=1 inside Conditions are known conditions (Core 2.5.1.5, 2.5.1.6)",
        "valid", name_id="subscriber-0042")
    add("conditions-two-onetimeuse",
        variant("-r33-once", [(end, end.replace(b"</saml:Conditions>", b"<saml:OneTimeUse/><saml:OneTimeUse/></saml:Conditions>"))], key=rsa2048),
        "two saml:OneTimeUse in Conditions (Core 2.5.1.5: at most one)", "invalid", "assertion.duplicate-element")
    second_name_id = b'<saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">admin</saml:NameID><saml:SubjectConfirmation '
    add("subject-two-nameids",
        variant("-r33-nameids", [(b"</saml:NameID><saml:SubjectConfirmation ", b"</saml:NameID>" + second_name_id)], key=rsa2048),
        "a Subject with a second NameID ('admin') after the first: the schema allows one identifier", "invalid",
        "assertion.duplicate-element")

    uid_oid = "urn:oid:0.9.2342.19200300.100.1.1"
    by_oid = ('<saml:Attribute Name="%s" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:uri" FriendlyName="uid">'
              '<saml:AttributeValue>subscriber-0042</saml:AttributeValue></saml:Attribute>' % uid_oid).encode()
    add("field-only-as-friendlyname",
        variant("-r33-friendly", [(b"<saml:AttributeStatement>", b"<saml:AttributeStatement>" + by_oid)], key=rsa2048,
                attrs=[a for a in attributes(2) if a[0] != "uid"]),
        "uid exists only as the FriendlyName of the attribute named %s (Core 2.7.3.1: FriendlyName is not for "
        "processing): asked for by its Name it is present, asked for as 'uid' it is missing" % uid_oid,
        "valid", name_id="subscriber-0042",
        fields={uid_oid: ["subscriber-0042"], "householdId": ["hh-7731"], "NameID": ["subscriber-0042"]},
        missingFields=["uid"])

    # Decrypted plaintexts that use a prefix only their container (EncryptedID, EncryptedAttribute) declares:
    # the container is replaced after decryption, the decrypted element must keep valid namespaces.
    enc = {"spKey": "keys/sp-rsa-2048.key.pem", "signer": "signxml + cryptography"}

    def signed_with_idp_declared(root, container):
        # lxml (and signxml's copy of the assertion) drops a declaration whose URI the ancestors already bind
        # (to saml), so it is added to the signed bytes: exclusive C14N leaves out a prefix the element itself
        # does not use, so the signature covers the same canonical bytes with or without it.
        tag = b"<saml:%s>" % container
        signed = serialize(sign_assertion(root, *rsa2048))
        assert signed.count(tag) == 1, tag
        return signed.replace(tag, b'<saml:%s xmlns:idp="%s">' % (container, SAML.encode()))

    root = response_xml(attributes(2), suffix="-r33-encid", name_id="enc-subscriber-7")
    encrypt_element(root.find(".//{%s}NameID" % SAML), sp[1], "EncryptedID",
                    plaintext=b'<idp:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">enc-subscriber-7</idp:NameID>')
    add("encrypted-nameid-namespace-on-container", signed_with_idp_declared(root, b"EncryptedID"),
        "a signed assertion whose EncryptedID declares xmlns:idp (the SAML assertion namespace), which its plaintext "
        "<idp:NameID> uses without declaring it (the container is freed after decryption: it read freed memory)",
        "valid", name_id="enc-subscriber-7", fields={"NameID": ["enc-subscriber-7"]}, **enc)
    root = response_xml([a for a in attributes(2) if a[0] != "householdId"], suffix="-r33-encattr")
    placeholder_attribute = etree.SubElement(root.find(".//{%s}AttributeStatement" % SAML), "{%s}Attribute" % SAML)
    encrypt_element(placeholder_attribute, sp[1], "EncryptedAttribute",
                    plaintext=b'<idp:Attribute Name="householdId"><idp:AttributeValue>hh-9</idp:AttributeValue></idp:Attribute>')
    add("encrypted-attribute-namespace-on-container", signed_with_idp_declared(root, b"EncryptedAttribute"),
        "a signed assertion whose EncryptedAttribute declares xmlns:idp (the SAML assertion namespace), which its "
        "plaintext <idp:Attribute> uses without declaring it (the container is freed after decryption: it read freed memory)",
        "valid", name_id="subscriber-0042", fields={"householdId": ["hh-9"], "uid": ["subscriber-0042"]}, **enc)


MD = "urn:oasis:names:tc:SAML:2.0:metadata"
IDP_B = "https://idp.mvpd-b.example.com"


def metadata_xml(entity_id, key_descriptors, valid_until="2036-01-01T00:00:00Z", suffix=""):
    """An md:EntityDescriptor with an IDPSSODescriptor holding `key_descriptors` (XML strings)."""
    return etree.fromstring((
        '<md:EntityDescriptor xmlns:md="%s" xmlns:ds="%s" ID="_md%s" entityID="%s" validUntil="%s" cacheDuration="PT6H">'
        '<md:IDPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">%s'
        '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect" Location="%s/sso/redirect"/>'
        '<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="%s/sso/post"/>'
        '</md:IDPSSODescriptor></md:EntityDescriptor>'
        % (MD, DS, suffix, entity_id, valid_until, "".join(key_descriptors), entity_id, entity_id)).encode())


def x509_descriptor(cert_pem, use="signing"):
    der = x509.load_pem_x509_certificate(cert_pem).public_bytes(serialization.Encoding.DER)
    use_attr = ' use="%s"' % use if use else ""
    return ('<md:KeyDescriptor%s><ds:KeyInfo><ds:X509Data><ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data>'
            '</ds:KeyInfo></md:KeyDescriptor>' % (use_attr, base64.b64encode(der).decode()))


def rsa_key_value_descriptor(cert_pem):
    numbers = x509.load_pem_x509_certificate(cert_pem).public_key().public_numbers()
    def b64(n):
        return base64.b64encode(n.to_bytes((n.bit_length() + 7) // 8, "big")).decode()
    return ('<md:KeyDescriptor use="signing"><ds:KeyInfo><ds:KeyValue><ds:RSAKeyValue><ds:Modulus>%s</ds:Modulus>'
            '<ds:Exponent>%s</ds:Exponent></ds:RSAKeyValue></ds:KeyValue></ds:KeyInfo></md:KeyDescriptor>' % (b64(numbers.n), b64(numbers.e)))


def trust_per_mvpd(rsa2048, rsa4096, p256):
    """IdP metadata for the bundled keys, a second MVPD with its own IdP, a two-MVPD configuration and trust file."""
    os.makedirs(os.path.join(HERE, "metadata"), exist_ok=True)
    os.makedirs(os.path.join(HERE, "exchange"), exist_ok=True)
    signer = key_pair("metadata-signer-rsa-2048", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))

    def write(name, root):
        open(os.path.join(HERE, "metadata", name), "wb").write(serialize(root))

    write("idp-a.xml", metadata_xml(IDP, [x509_descriptor(rsa2048[1]), x509_descriptor(signer[1], use="encryption")], suffix="-a"))
    signed = metadata_xml(IDP, [x509_descriptor(rsa2048[1])], suffix="-a-signed")
    placeholder_md = etree.Element("{%s}Signature" % DS, nsmap={"ds": DS}, Id="placeholder")
    signed.insert(0, placeholder_md)
    signed_md = LegacySigner(method=methods.enveloped, signature_algorithm="rsa-sha256", digest_algorithm="sha256",
                             c14n_algorithm=EXC).sign(signed, key=signer[0], cert=signer[1], reference_uri="#_md-a-signed", id_attribute="ID")
    write("idp-a-signed.xml", signed_md)
    tampered = serialize(signed_md).replace(b"/sso/post", b"/sso/evil", 1)
    open(os.path.join(HERE, "metadata", "idp-a-signed-tampered.xml"), "wb").write(tampered)
    write("idp-a-expired.xml", metadata_xml(IDP, [x509_descriptor(rsa2048[1])], valid_until="2026-01-01T00:00:00Z", suffix="-a-expired"))
    # Rotation: the current certificate and the next key (RSA-4096, as a bare KeyValue); then the next one alone.
    write("idp-a-rotation.xml", metadata_xml(IDP, [x509_descriptor(rsa2048[1]), rsa_key_value_descriptor(rsa4096[1])], suffix="-a-rot"))
    write("idp-a-rotated.xml", metadata_xml(IDP, [rsa_key_value_descriptor(rsa4096[1])], suffix="-a-rotated"))
    write("idp-b.xml", metadata_xml(IDP_B, [x509_descriptor(p256[1], use=None)], suffix="-b"))

    # MVPD B's IdP: another entity, another key.
    b = sign_assertion(response_xml(attributes(8), suffix="-mvpd-b", issuer=IDP_B), *p256, algorithm="ecdsa-sha256")
    add("typical-mvpd-b-ecdsa-assertion-signed", serialize(b), "a typical response from MVPD B's IdP (its own entity ID and key)",
        "valid", cert="ecdsa-p256", name_id="subscriber-0042",
        config={"issuer": IDP_B, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": REQUEST})
    add("mvpd-a-response-verified-as-mvpd-b", serialize(sign_assertion(response_xml(attributes(8), suffix="-cross"), *rsa2048)),
        "cross-MVPD substitution: MVPD A's response checked with MVPD B's trust (B's entity ID, B's key)", "invalid",
        "issuer.mismatch", cert="ecdsa-p256",
        config={"issuer": IDP_B, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": REQUEST})

    configuration = {"requestor": {"id": "REF30", "mvpds": [
        {"id": "MVPD-A", "displayName": "MVPD A", "enablePlatformServices": True, "boardingStatus": "SUPPORTED",
         "displayInPlatformPicker": True, "platformMappingId": "ProviderA", "requiredMetadataFields": ["NameID", "uid", "householdId"]},
        {"id": "MVPD-B", "displayName": "MVPD B", "enablePlatformServices": True, "boardingStatus": "SUPPORTED",
         "displayInPlatformPicker": True, "platformMappingId": "ProviderB", "requiredMetadataFields": ["NameID", "uid"]},
        {"id": "MVPD-C", "displayName": "MVPD C (no trust configured)", "enablePlatformServices": True, "boardingStatus": "SUPPORTED",
         "displayInPlatformPicker": True, "platformMappingId": "ProviderC", "requiredMetadataFields": ["NameID"]}]}}
    json.dump(configuration, open(os.path.join(HERE, "exchange", "mvpd-configuration.json"), "w"), indent=1)
    json.dump({"MVPD-A": {"metadata": "../metadata/idp-a-signed.xml", "signer": "../keys/metadata-signer-rsa-2048.cert.pem"},
               "MVPD-B": {"issuer": IDP_B, "certificates": ["../keys/ecdsa-p256.cert.pem"]}},
              open(os.path.join(HERE, "exchange", "trust.json"), "w"), indent=1)
    cases = []
    for response, origin in [("responses/typical-rsa2048-assertion-signed.xml", "MVPD-A"),
                             ("responses/typical-mvpd-b-ecdsa-assertion-signed.xml", "MVPD-B")]:
        for posted_as, provider in [("MVPD-A", "ProviderA"), ("MVPD-B", "ProviderB"), ("MVPD-C", "ProviderC")]:
            match = origin == posted_as
            cases.append({"response": response, "from": origin, "postedAs": posted_as, "providerID": provider,
                          "expect": "valid" if match else "invalid",
                          "status": 201 if match else (500 if posted_as == "MVPD-C" else 400),
                          "code": None if match else ("trust.unknown-mvpd" if posted_as == "MVPD-C" else "issuer.mismatch")})
    json.dump({"now": NOW, "audience": AUDIENCE, "inResponseTo": REQUEST, "cases": cases},
              open(os.path.join(HERE, "exchange", "cases.json"), "w"), indent=1)


SAML2P = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML11P = "urn:oasis:names:tc:SAML:1.1:protocol"
DSIG11 = "http://www.w3.org/2009/xmldsig11#"


def cert_b64(cert_pem):
    return base64.b64encode(x509.load_pem_x509_certificate(cert_pem).public_bytes(serialization.Encoding.DER)).decode()


def x509_element(cert_pem):
    return '<ds:X509Data><ds:X509Certificate>%s</ds:X509Certificate></ds:X509Data>' % cert_b64(cert_pem)


def rsa_key_value_element(cert_pem):
    numbers = x509.load_pem_x509_certificate(cert_pem).public_key().public_numbers()
    def b64(n):
        return base64.b64encode(n.to_bytes((n.bit_length() + 7) // 8, "big")).decode()
    return ('<ds:KeyValue><ds:RSAKeyValue><ds:Modulus>%s</ds:Modulus><ds:Exponent>%s</ds:Exponent></ds:RSAKeyValue>'
            '</ds:KeyValue>' % (b64(numbers.n), b64(numbers.e)))


def ec_key_value_element(cert_pem):
    point = x509.load_pem_x509_certificate(cert_pem).public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return ('<ds:KeyValue><dsig11:ECKeyValue xmlns:dsig11="%s"><dsig11:NamedCurve URI="urn:oid:1.2.840.10045.3.1.7"/>'
            '<dsig11:PublicKey>%s</dsig11:PublicKey></dsig11:ECKeyValue></ds:KeyValue>' % (DSIG11, base64.b64encode(point).decode()))


def key_descriptor(*key_info_children, use="signing"):
    """One md:KeyDescriptor whose single ds:KeyInfo holds `key_info_children` (XML strings)."""
    use_attr = ' use="%s"' % use if use else ""
    return '<md:KeyDescriptor%s><ds:KeyInfo>%s</ds:KeyInfo></md:KeyDescriptor>' % (use_attr, "".join(key_info_children))


def role_xml(entity_id, key_descriptors, protocols=SAML2P, kind="IDPSSODescriptor", valid_until=None, cache=None, path="sso"):
    """An IdP role: `protocols` is the protocolSupportEnumeration as written, `valid_until`/`cache` the role's own."""
    attrs = ' protocolSupportEnumeration="%s"' % protocols
    attrs += ' validUntil="%s"' % valid_until if valid_until else ""
    attrs += ' cacheDuration="%s"' % cache if cache else ""
    endpoints = ""
    if kind == "IDPSSODescriptor":
        endpoints = ('<md:SingleSignOnService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="%s/%s/post"/>'
                     % (entity_id, path))
    else:
        endpoints = ('<md:AttributeService Binding="urn:oasis:names:tc:SAML:2.0:bindings:SOAP" Location="%s/%s/aa"/>'
                     % (entity_id, path))
    return '<md:%s%s>%s%s</md:%s>' % (kind, attrs, "".join(key_descriptors), endpoints, kind)


def entity_xml(entity_id, roles, entity_id_attr, valid_until="2036-01-01T00:00:00Z"):
    return etree.fromstring((
        '<md:EntityDescriptor xmlns:md="%s" xmlns:ds="%s" ID="%s" entityID="%s" validUntil="%s" cacheDuration="PT6H">%s'
        '</md:EntityDescriptor>' % (MD, DS, entity_id_attr, entity_id, valid_until, "".join(roles))).encode())


def sign_metadata(root, signer, algorithm="rsa-sha256", digest="sha256"):
    """Enveloped signature on the root (first child), by signxml, Reference `#` + the root's ID."""
    root.insert(0, etree.Element("{%s}Signature" % DS, nsmap={"ds": DS}, Id="placeholder"))
    return LegacySigner(method=methods.enveloped, signature_algorithm=algorithm, digest_algorithm=digest,
                        c14n_algorithm=EXC).sign(root, key=signer[0], cert=signer[1], reference_uri="#" + root.get("ID"),
                                                 id_attribute="ID")


def metadata_rules(rsa2048, p256, attacker):
    """Metadata for the SAML Metadata rules of issue 33 (read at NOW): SAML 2.0 roles only, role validUntil,
    one KeyInfo = one key, SHA-1 signatures only with an opt-in, IDs that are xs:NCNames."""
    signer = key_pair("metadata-signer-rsa-2048", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))

    def write(name, root):
        open(os.path.join(HERE, "metadata", name), "wb").write(serialize(root))

    # protocolSupportEnumeration: a SAML 1.1-only IdP is no SAML 2.0 IdP; in a mixed entity only the SAML 2.0
    # role counts (the list is whitespace-separated: tab and newline included).
    write("idp-saml11-only.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]))], protocols=SAML11P + " urn:mace:shibboleth:1.0")], "_md-saml11"))
    write("idp-mixed-protocols.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(attacker[1]))], protocols=SAML11P, path="saml1"),
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]))], protocols=SAML11P + "&#10;&#9;" + SAML2P + " ", path="saml2"),
        role_xml(IDP, [key_descriptor(x509_element(attacker[1]))], protocols=SAML11P, kind="AttributeAuthorityDescriptor")],
        "_md-mixed"))
    # A role's own validUntil: the only role expired; an expired role beside a valid one (whose validUntil and
    # cacheDuration narrow the entity's).
    write("idp-role-expired.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]))], valid_until="2026-06-01T00:00:00Z")], "_md-role-expired"))
    write("idp-role-expired-beside-valid.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(attacker[1]))], valid_until="2026-11-21T12:01:00Z", path="old"),
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]))], valid_until="2030-01-01T00:00:00Z", cache="PT1H", path="new")],
        "_md-role-mixed"))
    # One KeyInfo = one key: different keys in one KeyInfo are refused; descriptions of the same key are one key.
    write("idp-keyinfo-certificate-and-other-rsa-key.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]), rsa_key_value_element(attacker[1]))])], "_md-conflict-rsa"))
    write("idp-keyinfo-two-certificates.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]) + x509_element(attacker[1]))])], "_md-conflict-certs"))
    write("idp-keyinfo-certificate-and-other-ec-key.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]), ec_key_value_element(p256[1]))])], "_md-conflict-ec"))
    write("idp-keyinfo-same-key-three-ways.xml", entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]), rsa_key_value_element(rsa2048[1]), x509_element(rsa2048[1])),
                       key_descriptor(ec_key_value_element(p256[1]), x509_element(p256[1]))])], "_md-same-key"))
    # SHA-1: signed by signxml with RSA-SHA1 and a SHA-1 digest (accepted only with AlgorithmPolicy.allowingSHA1).
    write("idp-a-signed-sha1.xml", sign_metadata(entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]))])], "_md-a-signed-sha1"), signer, "rsa-sha1", "sha1"))
    # IDs: signed by signxml over a root ID that is not an xs:NCName (an XPath expression; a colon).
    write("idp-signed-id-xpath.xml", sign_metadata(entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]))])], "x')|//*[count(//*)>0]|id('x"), signer))
    write("idp-signed-id-colon.xml", sign_metadata(entity_xml(IDP, [
        role_xml(IDP, [key_descriptor(x509_element(rsa2048[1]))])], "_md:colon"), signer))


def cookbook_normalise(data):
    """The cookbook's whitespace normalisation (ASCII inputs: the bundled vectors are)."""
    return re.sub(rb"[ \t]+", b" ", data).replace(b"\n", b"").replace(b"\r", b"").strip()


def signed_contents(data):
    """The exclusive canonical form of every element a ds:Signature signs (itself removed), or None."""
    try:
        root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False))
    except etree.XMLSyntaxError:
        return None
    contents = []
    for signature in root.iter("{%s}Signature" % DS):
        parent = copy.deepcopy(signature.getparent())
        for own in parent.findall("{%s}Signature" % DS):
            parent.remove(own)
        try:
            contents.append(etree.tostring(parent, method="c14n", exclusive=True))
        except etree.C14NError:  # an attack vector no canonicaliser accepts: nothing to compare
            return None
    return contents


# Where what a device sends (the cookbook's encoding) gets another verdict than the document as signed.
DEVICE_VERDICTS = {
    # The attribute values are signed with runs of spaces and newlines in their text: the cookbook changes
    # signed text, which no recovery can restore.
    "attribute-values-as-signed": ("invalid", "signature.digest-mismatch"),
}


# Vectors that are the cookbook's output already (their signed content was damaged before they were written).
ALREADY_NORMALISED = {"pretty-printed-then-normalised"}


def device_path(entries):
    """Records, per vector, the verdict after the cookbook's encoding and whether the cookbook's
    normalisation changes (or changed) the signed content: then only the verifier's recovery can make it
    verify (docs/recovery.md)."""
    for entry in entries:
        data = open(os.path.join(HERE, entry["file"]), "rb").read()
        before, after = signed_contents(data), signed_contents(cookbook_normalise(data))
        entry["cookbookDamaged"] = entry["id"] in ALREADY_NORMALISED or (bool(before) and before != after)
        expect, code = DEVICE_VERDICTS.get(entry["id"], (entry["expect"], entry.get("code")))
        entry["device"] = {"expect": expect, "code": code}


def main():
    os.makedirs(KEYS, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    rsa2048 = key_pair("rsa-2048", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    rsa4096 = key_pair("rsa-4096", lambda: rsa.generate_private_key(public_exponent=65537, key_size=4096))
    p256 = key_pair("ecdsa-p256", lambda: ec.generate_private_key(ec.SECP256R1()))
    attacker = key_pair("attacker-rsa-2048", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    fields = {"uid": ["subscriber-0042"], "NameID": ["subscriber-0042"], "zip": ["10001", "10002"],
              "channelId": ["espn", "hbo", "kanal-5 Grüße"]}

    # Valid responses.
    typical = sign_assertion(response_xml(attributes(8), suffix="-typical"), *rsa2048)
    add("typical-rsa2048-assertion-signed", serialize(typical),
        "typical MVPD response (~7 KB), RSA-2048 SHA-256 signature on the Assertion", "valid",
        name_id="subscriber-0042", fields=fields)
    add("small-rsa2048-assertion-signed", serialize(sign_assertion(response_xml(attributes(0)[:2], suffix="-small"), *rsa2048, with_cert=False)),
        "small response (~3 KB), RSA-2048 on the Assertion, no KeyInfo", "valid", name_id="subscriber-0042")
    add("large-rsa2048-assertion-signed", serialize(sign_assertion(response_xml(attributes(230), suffix="-large"), *rsa2048)),
        "large response (~64 KB, 237 attributes), RSA-2048 on the Assertion", "valid", name_id="subscriber-0042")
    add("typical-rsa2048-response-signed", serialize(sign_response(response_xml(attributes(8), suffix="-resp"), *rsa2048)),
        "typical response, RSA-2048 signature on the Response only", "valid", name_id="subscriber-0042", fields=fields)
    both = sign_response(sign_assertion(response_xml(attributes(8), suffix="-both"), *rsa2048), *rsa2048)
    add("typical-rsa2048-both-signed", serialize(both), "typical response signed on the Assertion and on the Response",
        "valid", name_id="subscriber-0042", fields=fields)
    add("typical-rsa4096-assertion-signed", serialize(sign_assertion(response_xml(attributes(8), suffix="-4096"), *rsa4096)),
        "typical response, RSA-4096 on the Assertion", "valid", cert="rsa-4096", name_id="subscriber-0042")
    add("typical-ecdsa-p256-assertion-signed",
        serialize(sign_assertion(response_xml(attributes(8), suffix="-p256"), *p256, algorithm="ecdsa-sha256")),
        "typical response, ECDSA P-256 SHA-256 on the Assertion", "valid", cert="ecdsa-p256", name_id="subscriber-0042")
    add("no-keyinfo-assertion-signed",
        serialize(sign_assertion(response_xml(attributes(2), suffix="-nokeyinfo"), *rsa2048, with_cert=False)),
        "signature without ds:KeyInfo: the pinned key is all that is needed", "valid", name_id="subscriber-0042")
    pretty = sign_assertion(response_xml(attributes(3), suffix="-pretty", pretty=True), *rsa2048)
    pretty_bytes = serialize(pretty)
    add("pretty-printed-assertion-signed", pretty_bytes,
        "pretty-printed response signed as pretty-printed (what an MVPD sends before the cookbook's normalisation)",
        "valid", name_id="subscriber-0042")

    # Comment injection with an intact signature (CVE-2017-11427 class): the NameID must be read whole.
    signed = serialize(sign_assertion(response_xml(attributes(2), suffix="-comment", name_id="user@example.com.evil.example"), *rsa2048))
    injected = signed.replace(b">user@example.com.evil.example<", b">user@example.com<!---->.evil.example<")
    add("comment-in-nameid-signature-intact", injected,
        "comment inserted in the signed NameID (exclusive C14N drops comments, so the digest still matches); "
        "the NameID is the full text, not the first text node", "valid", name_id="user@example.com.evil.example")

    # Attacks and broken responses: each must fail with its own code.
    base = serialize(sign_assertion(response_xml(attributes(2), suffix="-base"), *rsa2048))
    normalized = re.sub(rb"[ \t]+", b" ", pretty_bytes).replace(b"\n", b"").replace(b"\r", b"").strip()
    add("pretty-printed-then-normalised", normalized,
        "the pretty-printed signed response after the cookbook's whitespace normalisation: the signed text changed, "
        "the verifier restores the indentation and the signature proves it (signature.digest-mismatch with recovery off)",
        "valid", name_id="subscriber-0042")
    add("tampered-attribute-value", base.replace(b">hh-7731<", b">hh-0001<"),
        "an attribute value changed after signing", "invalid", "signature.digest-mismatch")
    add("tampered-digest-value", re.sub(rb"(<ds:DigestValue>)[^<]{4}", rb"\1AAAA", base, count=1),
        "the DigestValue changed", "invalid", "signature.digest-mismatch")
    add("tampered-signature-value", re.sub(rb"(<ds:SignatureValue>)[^<]{8}", rb"\1AAAAAAAA", base, count=1),
        "the SignatureValue changed", "invalid", "signature.invalid")
    add("wrong-key-with-certificate",
        serialize(sign_assertion(response_xml(attributes(2), suffix="-attacker"), *attacker)),
        "signed by a key that is not pinned, whose certificate sits in ds:KeyInfo (KeyInfo must never be trusted)",
        "invalid", "signature.untrusted-key")
    add("wrong-key-without-certificate",
        serialize(sign_assertion(response_xml(attributes(2), suffix="-attacker2"), *attacker, with_cert=False)),
        "signed by a key that is not pinned, no KeyInfo", "invalid", "signature.invalid")
    add("unsigned", serialize(response_xml(attributes(2), suffix="-unsigned")),
        "no signature at all", "invalid", "signature.missing")
    add("sha1-without-opt-in",
        serialize(sign_assertion(response_xml(attributes(2), suffix="-sha1"), *rsa2048, algorithm="rsa-sha1", digest="sha1")),
        "RSA-SHA1 and a SHA-1 digest, refused without the explicit opt-in", "invalid", "signature.algorithm-not-allowed")

    root = etree.fromstring(base)
    assertion = root.find("{%s}Assertion" % SAML)
    evil = copy.deepcopy(assertion)
    evil.find("{%s}Signature" % DS).getparent().remove(evil.find("{%s}Signature" % DS))
    evil.set("ID", "_evil")
    evil.find(".//{%s}NameID" % SAML).text = "admin"
    wrapped = copy.deepcopy(root)
    wrapped.insert(2, evil)
    add("xsw-second-assertion-before-signed", serialize(wrapped),
        "signature wrapping: a forged, unsigned Assertion inserted before the signed one", "invalid", "assertion.multiple")
    ext = copy.deepcopy(root)
    original = ext.find("{%s}Assertion" % SAML)
    extensions = etree.SubElement(ext, "{%s}Extensions" % SAMLP)
    ext.remove(original)
    extensions.append(original)
    forged = copy.deepcopy(evil)
    forged.set("ID", original.get("ID"))
    ext.insert(2, forged)
    add("xsw-signed-assertion-hidden-in-extensions", serialize(ext),
        "signature wrapping: the signed Assertion moved into samlp:Extensions, a forged one with the same ID in its place",
        "invalid", "assertion.multiple")
    dup = etree.fromstring(base)
    dup.set("ID", dup.find("{%s}Assertion" % SAML).get("ID"))
    add("duplicate-id", serialize(dup), "the Response carries the same ID as the signed Assertion", "invalid", "id.duplicate")
    moved = etree.fromstring(base)
    a = moved.find("{%s}Assertion" % SAML)
    sig = a.find("{%s}Signature" % DS)
    a.remove(sig)
    a.find("{%s}Subject" % SAML).append(sig)
    add("signature-in-subject", serialize(moved), "the ds:Signature moved inside saml:Subject", "invalid", "signature.misplaced")
    other_ref = base.replace(b'URI="#_assert-base"', b'URI="#_resp-base"')
    add("reference-to-response-from-assertion", other_ref,
        "the Assertion's signature references the Response's ID instead of its parent", "invalid", "signature.reference-mismatch")
    xpath = base.replace(b'<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>',
                         b'<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>'
                         b'<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xpath-19991116"><ds:XPath>not(ancestor-or-self::saml:Attribute)</ds:XPath></ds:Transform>', 1)
    add("xpath-transform", xpath, "an XPath transform added to the Reference", "invalid", "signature.transform-not-allowed")
    xslt = base.replace(b'<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>',
                        b'<ds:Transform Algorithm="http://www.w3.org/TR/1999/REC-xslt-19991116"/>', 1)
    add("xslt-transform", xslt, "the enveloped transform replaced by XSLT", "invalid", "signature.transform-not-allowed")
    obj = base.replace(b"</ds:Signature>", b"<ds:Object Id=\"_obj\"><ds:SignatureProperties/></ds:Object></ds:Signature>", 1)
    add("object-in-signature", obj, "a ds:Object inside the signature", "invalid", "signature.object-forbidden")
    hmac = base.replace(b"http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", b"http://www.w3.org/2000/09/xmldsig#hmac-sha1", 1)
    add("hmac-signature-method", hmac, "SignatureMethod HMAC-SHA1 (a public key is not an HMAC secret)", "invalid",
        "signature.algorithm-not-allowed")
    add("doctype-xxe", b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n' + base.replace(b">hh-7731<", b">&x;<"),
        "an external entity (XXE) in an internal DTD", "invalid", "xml.doctype-forbidden")
    laughs = b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">' \
             b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>\n' + base.replace(b">hh-7731<", b">&d;<")
    add("billion-laughs", laughs, "entity expansion (billion laughs, shortened)", "invalid", "xml.doctype-forbidden")
    add("malformed-truncated", base[: base.rindex(b">", 0, len(base) * 2 // 3) + 1],
        "the document cut off right after a tag", "invalid", "xml.malformed")
    add("expired", base, "a valid response checked after Conditions/@NotOnOrAfter plus the skew", "invalid", "time.expired",
        now="2026-11-21T12:09:00Z")
    add("not-yet-valid", base, "a valid response checked before Conditions/@NotBefore minus the skew", "invalid",
        "time.not-yet-valid", now="2026-11-21T11:54:00Z")
    add("wrong-audience", serialize(sign_assertion(response_xml(attributes(2), suffix="-aud", audience="https://other-sp.example.com"), *rsa2048)),
        "signed for another service provider", "invalid", "audience.mismatch")
    add("wrong-issuer", serialize(sign_assertion(response_xml(attributes(2), suffix="-iss", issuer="https://idp.other.example.com"), *rsa2048)),
        "signed by the pinned key but issued in another IdP's name", "invalid", "issuer.mismatch")
    add("status-responder", serialize(sign_response(response_xml(attributes(2), suffix="-status", status="urn:oasis:names:tc:SAML:2.0:status:Responder"), *rsa2048)),
        "a signed Response whose status is Responder", "invalid", "status.not-success")
    add("wrong-in-response-to", base, "answers another request", "invalid", "in-response-to.mismatch",
        config={"issuer": IDP, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": "_aq-other"})
    add("wrong-destination", base, "posted to another endpoint", "invalid", "destination.mismatch",
        config={"issuer": IDP, "audience": AUDIENCE, "destination": "https://evil.example.com/acs", "inResponseTo": REQUEST})

    # Encrypted assertions (XML Encryption by Python's cryptography, independent of libxmlsec1), to the SP key.
    sp = key_pair("sp-rsa-2048", lambda: rsa.generate_private_key(public_exponent=65537, key_size=2048))
    def encrypted(suffix, **kw):
        root = sign_assertion(response_xml(attributes(2), suffix=suffix), *rsa2048)
        encrypt_element(root.find("{%s}Assertion" % SAML), kw.pop("to", sp)[1], "EncryptedAssertion", **kw)
        return root
    enc = {"spKey": "keys/sp-rsa-2048.key.pem"}
    add("encrypted-assertion-oaep-aes256gcm", serialize(encrypted("-enc1")),
        "signed assertion encrypted to the SP: RSA-OAEP (mgf1p) + AES-256-GCM, EncryptedKey in KeyInfo", "valid",
        name_id="subscriber-0042", signer="signxml + cryptography", **enc)
    add("encrypted-assertion-oaep11-sha256-retrieval", serialize(encrypted("-enc2", transport="rsa-oaep-sha256", data="aes128-gcm",
                                                                            sibling_key=True, strip_namespaces=True)),
        "xmlenc 1.1 rsa-oaep (SHA-256, MGF1-SHA-256) + AES-128-GCM, sibling EncryptedKey found through RetrievalMethod, "
        "plaintext relying on the Response's declaration of the saml prefix", "valid", name_id="subscriber-0042",
        signer="signxml + cryptography", **enc)
    legacy = serialize(encrypted("-enc3", transport="rsa-1_5", data="aes128-cbc"))
    add("encrypted-assertion-rsa15-aes128cbc", legacy, "RSA-1_5 + AES-128-CBC without the legacy opt-in", "invalid",
        "decryption.algorithm-not-allowed", signer="signxml + cryptography", **enc)
    add("encrypted-assertion-rsa15-aes128cbc-legacy-allowed", legacy, "RSA-1_5 + AES-128-CBC with the legacy opt-in",
        "valid", name_id="subscriber-0042", signer="signxml + cryptography", legacyEncryption=True, **enc)
    add("encrypted-assertion-3des-legacy-allowed", serialize(encrypted("-enc4", data="tripledes-cbc")),
        "RSA-OAEP + 3DES-CBC with the legacy opt-in", "valid", name_id="subscriber-0042",
        signer="signxml + cryptography", legacyEncryption=True, **enc)
    response_signed = response_xml(attributes(2), suffix="-enc5")
    encrypt_element(response_signed.find("{%s}Assertion" % SAML), sp[1], "EncryptedAssertion")
    add("encrypted-assertion-response-signed", serialize(sign_response(response_signed, *rsa2048)),
        "an unsigned assertion encrypted to the SP inside a signed Response (the signature covers the ciphertext)",
        "valid", name_id="subscriber-0042", signer="signxml + cryptography", **enc)
    add("encrypted-assertion-for-another-sp", serialize(encrypted("-enc6", to=attacker)),
        "encrypted to another service provider's key", "invalid", "decryption.failed", signer="signxml + cryptography", **enc)
    corrupted = serialize(encrypted("-enc7"))
    marker = corrupted.rindex(b"</xenc:CipherValue>")
    corrupted = corrupted[:marker - 12] + (b"AAAAAAAAAAAA" if corrupted[marker - 12:marker] != b"AAAAAAAAAAAA" else b"BBBBBBBBBBBB") + corrupted[marker:]
    add("encrypted-assertion-corrupted-ciphertext", corrupted, "the EncryptedData's CipherValue altered (GCM tag fails)",
        "invalid", "decryption.failed", signer="signxml + cryptography", **enc)
    add("encrypted-assertion-without-sp-key", serialize(encrypted("-enc8")), "an encrypted assertion and no SP key configured",
        "invalid", "decryption.no-key", signer="signxml + cryptography")
    # EncryptedID and EncryptedAttribute inside a signed assertion: the signature covers the ciphertext.
    inner = response_xml(attributes(2), suffix="-enc9")
    assertion = inner.find("{%s}Assertion" % SAML)
    encrypt_element(assertion.find(".//{%s}NameID" % SAML), sp[1], "EncryptedID")
    statement = assertion.find("{%s}AttributeStatement" % SAML)
    encrypt_element(statement.find("{%s}Attribute" % SAML), sp[1], "EncryptedAttribute", data="aes128-gcm")
    add("encrypted-nameid-and-attribute", serialize(sign_assertion(inner, *rsa2048)),
        "a signed assertion whose NameID and uid attribute are encrypted to the SP (EncryptedID, EncryptedAttribute)",
        "valid", name_id="subscriber-0042", fields={"uid": ["subscriber-0042"], "householdId": ["hh-7731"]},
        signer="signxml + cryptography", **enc)

    hardening(rsa2048, sp, attacker)
    saml_rules(rsa2048, sp)
    trust_per_mvpd(rsa2048, rsa4096, p256)
    metadata_rules(rsa2048, p256, attacker)

    # Written by hand for the codec tests (see TestVectors/README.md); listed so that every file has a verdict.
    vectors.append({"id": "pretty-printed-unsigned", "file": "responses/pretty-printed-unsigned.xml",
                    "description": "hand-written pretty-printed MVPD response, unsigned (codec tests)", "cert": "keys/rsa-2048.cert.pem",
                    "now": NOW, "expect": "invalid", "code": "signature.missing", "signed_by": "none",
                    "config": {"issuer": IDP, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": REQUEST}})
    device_path(vectors)
    json.dump(vectors, open(os.path.join(HERE, "manifest.json"), "w"), indent=1, ensure_ascii=False)
    print("%d vectors" % len(vectors))


if __name__ == "__main__":
    main()
