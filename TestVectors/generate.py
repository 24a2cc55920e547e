#!/usr/bin/env python3
"""Regenerates TestVectors/: test keys, MVPD-shaped SAML responses and the attack vectors, with manifest.json.

Signing is done by signxml (Python, lxml + cryptography), an implementation independent of libxmlsec1, so
that a bug shared by signing and verifying cannot hide. Keys are test keys generated here; they protect
nothing. Run: pip install signxml==4.* && python3 TestVectors/generate.py   (the output is committed).
Keys are kept when they exist, so regenerating changes only what the templates change.
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


def sign(element, key, cert, algorithm="rsa-sha256", digest="sha256", with_cert=True):
    placeholder(element)
    signer = LegacySigner(method=methods.enveloped, signature_algorithm=algorithm, digest_algorithm=digest, c14n_algorithm=EXC)
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
                    strip_namespaces=False):
    """Replaces `element` by <container><xenc:EncryptedData/>...</container>, the XML Encryption of its bytes."""
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


def add(id, data, description, expect, code=None, cert="rsa-2048", now=NOW, config=None, name_id=None, fields=None, signer=None,
        spKey=None, legacyEncryption=False):
    path = "responses/%s.xml" % id
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
    vectors.append(entry)


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
        "the pretty-printed signed response after the cookbook's whitespace normalisation: the signed text changed",
        "invalid", "signature.digest-mismatch")
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

    # Written by hand for the codec tests (see TestVectors/README.md); listed so that every file has a verdict.
    vectors.append({"id": "pretty-printed-unsigned", "file": "responses/pretty-printed-unsigned.xml",
                    "description": "hand-written pretty-printed MVPD response, unsigned (codec tests)", "cert": "keys/rsa-2048.cert.pem",
                    "now": NOW, "expect": "invalid", "code": "signature.missing", "signed_by": "none",
                    "config": {"issuer": IDP, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": REQUEST}})
    json.dump(vectors, open(os.path.join(HERE, "manifest.json"), "w"), indent=1, ensure_ascii=False)
    print("%d vectors" % len(vectors))


if __name__ == "__main__":
    main()
