#!/usr/bin/env python3
"""Regenerates TestVectors/idp-layouts: signed (and partly encrypted) SAML 2.0 Responses written by real IdP /
XML-DSig implementations, byte for byte as each one serialises them, to test that the Adobe Pass cookbook's
whitespace normalisation can be undone (see README.md).

Run (from anywhere; everything is written beside this script):

    python3 generate.py                      # fresh IdP keys in a temporary directory (deleted afterwards)
    python3 generate.py --idp-keys DIR       # keep/reuse the IdP private keys in DIR (outside the repository!)

It rewrites responses/*.xml, keys/idp-*.cert.pem and manifest.json. The IdP private keys are never written into
this directory: without --idp-keys they are new each run, so the certificates in keys/ are replaced as well. The
SP test key pair keys/sp-rsa-2048.{key,cert}.pem (public test material, needed to decrypt the encrypted vectors)
is reused when present and created otherwise. Output is NOT byte-identical between runs (random keys, IDs, IVs,
session keys, ECDSA nonces, pysaml2's timestamps); the set of vectors, their layouts and the manifest fields are.

Versions used for the committed files (2026-11-25, Debian 12, Python 3.11.7):
  pip:    pysaml2==7.5.5 xmlsec==1.3.17 (wheel bundling libxmlsec1 1.3.9) python3-saml==1.16.0 signxml==5.2.0
          lxml==6.1.3 cryptography==50.0.2
  apt:    xmlsec1 1.2.37-2 (libxmlsec1 1.2.37-2, used by pysaml2 and the xmlsec1 vectors)
          opensaml-tools 3.2.1-3+deb12u1 (samlsign; libxml-security-c20 2.0.4-2)
          openjdk-17-jdk-headless 17.0.15+6-1~deb12u1 (javac/java for ../recovery/Signer.java)
  i.e.    pip install pysaml2==7.5.5 xmlsec==1.3.17 python3-saml==1.16.0 signxml==5.2.0 lxml cryptography
          apt-get install -y xmlsec1 opensaml-tools openjdk-17-jdk-headless
Other versions may lay the XML out differently, which is the point of these files: check the diff.

Every response verifies with: issuer https://idp.corpus.example.org/idp/shibboleth, audience
https://saml.sp.auth.adobe.com, destination/recipient https://sp.auth.adobe.com/sp/saml/SAMLAssertionConsumer,
InResponseTo _req-corpus-0001, now 2027-01-01T00:00:00Z (moved to the day after generation if run later than
2026-12-31: pysaml2 stamps the generation time), the per-vector certificate, and the SP key for encrypted ones.
"""
import argparse, copy, datetime, importlib.metadata, json, os, shutil, subprocess, sys, tempfile, warnings

warnings.filterwarnings("ignore")
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402
from lxml import etree  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = os.path.join(HERE, "keys")
OUT = os.path.join(HERE, "responses")
PRIVATE = None  # directory of the IdP private keys (set in main)

SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol"
SAML = "urn:oasis:names:tc:SAML:2.0:assertion"
DS = "http://www.w3.org/2000/09/xmldsig#"
XENC = "http://www.w3.org/2001/04/xmlenc#"
XENC11 = "http://www.w3.org/2009/xmlenc11#"

ISSUER = "https://idp.corpus.example.org/idp/shibboleth"
AUDIENCE = "https://saml.sp.auth.adobe.com"
DESTINATION = "https://sp.auth.adobe.com/sp/saml/SAMLAssertionConsumer"
REQUEST = "_req-corpus-0001"
ISSUED = "2026-11-21T12:00:00Z"      # IssueInstant of the template-made responses
NOT_BEFORE = "2026-01-01T00:00:00Z"
NOT_AFTER = "2036-01-01T00:00:00Z"


def verification_instant():
    fixed = datetime.datetime(2027, 1, 1, tzinfo=datetime.timezone.utc)
    tomorrow = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    return max(fixed, tomorrow.replace(hour=0, minute=0, second=0, microsecond=0)).strftime("%Y-%m-%dT%H:%M:%SZ")


NOW = verification_instant()

SIG = {"rsa-sha256": "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
       "rsa-sha512": "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
       "rsa-sha1": "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
       "ecdsa-sha384": "http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha384"}
DIG = {"sha256": "http://www.w3.org/2001/04/xmlenc#sha256", "sha512": "http://www.w3.org/2001/04/xmlenc#sha512",
       "sha384": "http://www.w3.org/2001/04/xmldsig-more#sha384", "sha1": "http://www.w3.org/2000/09/xmldsig#sha1"}
# Signing profiles: name -> (key stem, signature algorithm, digest algorithm).
PROFILE = {"rsa2048-sha256": ("idp-rsa-2048", "rsa-sha256", "sha256"),
           "rsa3072-sha512": ("idp-rsa-3072", "rsa-sha512", "sha512"),
           "p384-sha384": ("idp-ecdsa-p384", "ecdsa-sha384", "sha384"),
           "rsa2048-sha1": ("idp-rsa-2048", "rsa-sha1", "sha1"),
           "rsa1024-sha256": ("idp-rsa-1024", "rsa-sha256", "sha256")}
KEY_MAKERS = {"idp-rsa-2048": lambda: rsa.generate_private_key(65537, 2048),
              "idp-rsa-3072": lambda: rsa.generate_private_key(65537, 3072),
              "idp-rsa-1024": lambda: rsa.generate_private_key(65537, 1024),
              "idp-ecdsa-p384": lambda: ec.generate_private_key(ec.SECP384R1()),
              "sp-rsa-2048": lambda: rsa.generate_private_key(65537, 2048)}
INDENTS = {"2sp": "  ", "4sp": "    "}

# ---------------------------------------------------------------------------------------------------------
# Keys: IdP private keys only in PRIVATE; certificates (and the SP test key pair) in keys/.


def key_paths(stem):
    if stem.startswith("sp-"):
        return os.path.join(KEYS, stem + ".key.pem"), os.path.join(KEYS, stem + ".cert.pem")
    return os.path.join(PRIVATE, stem + ".key.pem"), os.path.join(KEYS, stem + ".cert.pem")


def make_keys():
    os.makedirs(KEYS, exist_ok=True)
    for stem, make in KEY_MAKERS.items():
        kp, cp = key_paths(stem)
        if os.path.exists(kp):
            key = serialization.load_pem_private_key(open(kp, "rb").read(), None)
        else:
            key = make()
            open(kp, "wb").write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                   serialization.NoEncryption()))
        spki = lambda k: k.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        if os.path.exists(cp) and spki(x509.load_pem_x509_certificate(open(cp, "rb").read()).public_key()) == \
                spki(key.public_key()):
            continue
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "idp-corpus " + stem)])
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(datetime.datetime(2026, 1, 1)).not_valid_after(datetime.datetime(2046, 1, 1))
                .sign(key, hashes.SHA256()))
        open(cp, "wb").write(cert.public_bytes(serialization.Encoding.PEM))


# ---------------------------------------------------------------------------------------------------------
# The response template (for every signer except pysaml2, which builds its own).

def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


ATTRIBUTES = [("uid", ["subscriber-0042"]), ("householdId", ["hh-7731"]), ("zip", ["10001", "10002"]),
              ("channelId", ["espn", "hbo", "kanal-5 Grüße"]), ("maxRating", ["TV-MA"]),
              ("displayName", ['Zoë 東京 & "Co" <ok> \'x\'']), ("upstreamUserID", ["u-99f1c2"])]


def response_xml(suffix):
    attrs = "".join(
        '<saml:Attribute Name="%s" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">%s</saml:Attribute>'
        % (name, "".join("<saml:AttributeValue>%s</saml:AttributeValue>" % esc(v) for v in values))
        for name, values in ATTRIBUTES)
    return (
        '<samlp:Response xmlns:samlp="%(samlp)s" xmlns:saml="%(saml)s" ID="_resp%(s)s" Version="2.0" '
        'IssueInstant="%(t)s" Destination="%(dest)s" InResponseTo="%(req)s">'
        '<saml:Issuer>%(issuer)s</saml:Issuer>'
        '<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>'
        '<saml:Assertion ID="_assert%(s)s" Version="2.0" IssueInstant="%(t)s">'
        '<saml:Issuer>%(issuer)s</saml:Issuer>'
        '<saml:Subject><saml:NameID Format="urn:oasis:names:tc:SAML:2.0:nameid-format:persistent">subscriber-0042'
        '</saml:NameID>'
        '<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">'
        '<saml:SubjectConfirmationData InResponseTo="%(req)s" Recipient="%(dest)s" NotOnOrAfter="%(na)s"/>'
        '</saml:SubjectConfirmation></saml:Subject>'
        '<saml:Conditions NotBefore="%(nb)s" NotOnOrAfter="%(na)s">'
        '<saml:AudienceRestriction><saml:Audience>%(aud)s</saml:Audience></saml:AudienceRestriction></saml:Conditions>'
        '<saml:AuthnStatement AuthnInstant="%(t)s" SessionIndex="_session-1"><saml:AuthnContext>'
        '<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport'
        '</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>'
        '<saml:AttributeStatement>%(attrs)s</saml:AttributeStatement>'
        '</saml:Assertion></samlp:Response>'
    ) % dict(samlp=SAMLP, saml=SAML, s=suffix, t=ISSUED, dest=DESTINATION, req=REQUEST, issuer=ISSUER,
             aud=AUDIENCE, attrs=attrs, nb=NOT_BEFORE, na=NOT_AFTER)


def template(suffix, style="compact"):
    root = etree.fromstring(response_xml(suffix).encode())
    if style in INDENTS:
        etree.indent(root, space=INDENTS[style])
    return root


def serialize(root):
    return etree.tostring(root, encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------
# Manifest entries: one line of layout description per class of vector.

NOTES = {
    "pysaml2": "xmlsec1 via pysaml2: compact with XML declaration and final newline, no whitespace in Signature, "
               "SignatureValue (and DigestValue over 64) wrapped at 64, X509Certificate on one line",
    "pysaml2-encrypted": "xmlsec1 via pysaml2: compact with XML declaration, no whitespace in Signature, SignatureValue "
                         "at 64, X509Certificate on one line; EncryptedAssertion CipherValues and SP certificate at 64 "
                         "(tripledes-cbc + rsa-oaep-mgf1p)",
    "python-xmlsec": "libxmlsec1 1.3 template via python-xmlsec: newline after every Signature/KeyInfo child, "
                     "SignatureValue at 64, X509Certificate at 64 ending in a newline, no XML declaration",
    "python-xmlsec-enc": "libxmlsec1 1.3 via python-xmlsec: Signature as python-xmlsec (newlines between children, "
                         "Base64 at 64); EncryptedData/EncryptedKey with newlines between children, CipherValue at 64",
    "xmlsec1": "xmlsec1 1.2 command line on a libxmlsec template: XML declaration and final newline, newline after "
               "every Signature/KeyInfo child, SignatureValue at 64, X509Certificate at 64 ending in a newline",
    "samlsign": "xml-security-c via samlsign: newlines in Signature, SignedInfo, Reference, Transforms (not KeyInfo), "
                "SignatureValue at 64, DigestValue over 76 at 76, X509Certificate at 64 ending in a newline",
    "python3-saml": "python3-saml add_sign (libxmlsec1 1.3): newline after every Signature/KeyInfo child, Base64 at 64, "
                    "X509Certificate ending in a newline; EncryptedID (aes128-cbc + rsa-oaep-mgf1p) with newlines",
    "signxml": "signxml: no whitespace in Signature, SignatureValue on one line, X509Certificate at 64 ending in a "
               "newline, no XML declaration",
    "jdk": "JDK javax.xml.crypto.dsig: XML declaration standalone=\"no\", no whitespace in Signature, Base64 at 76 "
           "with &#13; + newline line ends (SignatureValue, X509Certificate, long DigestValue)",
}


def note_class(id):
    if id.startswith("pysaml2-both-encrypted"):
        return "pysaml2-encrypted"
    if id.startswith("python-xmlsec-enc"):
        return "python-xmlsec-enc"
    for prefix in ("python3-saml", "python-xmlsec", "pysaml2", "xmlsec1", "samlsign", "signxml", "jdk"):
        if id.startswith(prefix):
            return prefix
    raise ValueError(id)


def entry(id, implementation, signed, encrypted, profile, pretty, legacy_encryption=False, now=None):
    stem, sig, dig = PROFILE[profile]
    rel = lambda p: os.path.relpath(p, HERE)
    style = "" if not pretty else " (template indented %s before signing)" % ("2 spaces" if id.endswith("2sp") else
                                                                             "4 spaces")
    return {"id": id, "file": "responses/%s.xml" % id, "implementation": implementation, "signed": signed,
            "encrypted": encrypted, "key": profile, "pretty": pretty,
            "cert": rel(os.path.join(KEYS, stem + ".cert.pem")),
            "spKey": rel(os.path.join(KEYS, "sp-rsa-2048.key.pem")) if encrypted != "none" else None,
            "issuer": ISSUER, "audience": AUDIENCE, "destination": DESTINATION, "inResponseTo": REQUEST,
            "now": now or NOW, "allowSHA1": sig.endswith("sha1") or dig == "sha1",
            "allowLegacyEncryption": legacy_encryption,
            "recoverable": "doublespace" not in id,
            "note": NOTES[note_class(id)] + style}


vectors = []


def write(id, data, implementation, signed, encrypted, profile, pretty, legacy_encryption=False):
    if isinstance(data, str):
        data = data.encode("utf-8")
    open(os.path.join(OUT, id + ".xml"), "wb").write(data)
    vectors.append(entry(id, implementation, signed, encrypted, profile, pretty, legacy_encryption))
    print("wrote", id)


def version(dist):
    return importlib.metadata.version(dist)


# ---------------------------------------------------------------------------------------------------------
# 1. pysaml2 as IdP (signs and encrypts through the xmlsec1 binary)

IDENTITY = {"uid": ["subscriber-0042"], "mail": ["subscriber@mvpd.example"], "eduPersonAffiliation": ["member", "tv"],
            "displayName": ["Zoë 東京"]}
SPECIAL = dict(IDENTITY, displayName=['Zoë 東京 & "Co" <ok> \'x\''], cn=["AT&T <Cable> \"TV\" 'plus'"],
               sn=[" leading and trailing "], givenName=["ÅÄÖ ñ — ☃ 東京都"])
DOUBLESPACE = dict(SPECIAL, sn=["  two leading, two trailing  "], givenName=["tab\there, double  space"])


def pysaml2_server(stem, workdir):
    from saml2 import BINDING_HTTP_POST
    from saml2.config import IdPConfig, SPConfig
    from saml2.metadata import create_metadata_string
    from saml2.saml import NAME_FORMAT_URI
    from saml2.server import Server
    md = os.path.join(workdir, "sp-metadata.xml")
    if not os.path.exists(md):
        spk, spc = key_paths("sp-rsa-2048")
        sp_conf = SPConfig().load({
            "entityid": AUDIENCE, "key_file": spk, "cert_file": spc,
            "encryption_keypairs": [{"key_file": spk, "cert_file": spc}],
            "service": {"sp": {"endpoints": {"assertion_consumer_service": [(DESTINATION, BINDING_HTTP_POST)]}}}})
        open(md, "wb").write(create_metadata_string(None, sp_conf, 4, None, None, None, None, None))
    k, c = key_paths(stem)
    conf = IdPConfig().load({
        "entityid": ISSUER, "key_file": k, "cert_file": c, "xmlsec_binary": shutil.which("xmlsec1"),
        "metadata": {"local": [md]},
        "service": {"idp": {
            "endpoints": {"single_sign_on_service": [("https://idp.corpus.example.org/sso", BINDING_HTTP_POST)]},
            "policy": {"default": {"lifetime": {"days": 3650}, "attribute_restrictions": None,
                                   "name_form": NAME_FORMAT_URI}}}}})
    return Server(config=conf)


def pysaml2_vectors():
    from saml2.saml import NameID, NAMEID_FORMAT_PERSISTENT
    work = tempfile.mkdtemp()
    servers = {}
    xmlsec1 = subprocess.run(["xmlsec1", "--version"], capture_output=True, text=True).stdout.split()[1]
    impl = "pysaml2 %s (xmlsec1 %s)" % (version("pysaml2"), xmlsec1)

    def response(profile, sign_response, sign_assertion, identity=IDENTITY, encrypt=False):
        stem, sig, dig = PROFILE[profile]
        if stem not in servers:
            servers[stem] = pysaml2_server(stem, work)
        kw = {}
        if encrypt:  # pysaml2 default algorithms: tripledes-cbc + rsa-oaep-mgf1p
            kw = dict(encrypt_assertion=True, encrypt_cert_assertion=open(key_paths("sp-rsa-2048")[1]).read())
        return str(servers[stem].create_authn_response(
            identity, REQUEST, DESTINATION, AUDIENCE,
            name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text="subscriber-0042"),
            sign_response=sign_response, sign_assertion=sign_assertion, sign_alg=SIG[sig], digest_alg=DIG[dig],
            authn={"class_ref": "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"}, **kw))

    # pysaml2 cannot sign with ECDSA here ("Signature algo not in allowed list") and has no pretty-print option.
    for p in ("rsa2048-sha256", "rsa3072-sha512", "rsa2048-sha1", "rsa1024-sha256"):
        write("pysaml2-both-" + p, response(p, True, True), impl, "both", "none", p, False)
    for p in ("rsa2048-sha256", "rsa3072-sha512"):
        write("pysaml2-response-" + p, response(p, True, False), impl, "response", "none", p, False)
    for p in ("rsa2048-sha256", "rsa3072-sha512"):
        write("pysaml2-assertion-" + p, response(p, False, True), impl, "assertion", "none", p, False)
    for p in ("rsa2048-sha256", "rsa3072-sha512"):  # assertion signed, then encrypted; response signed
        write("pysaml2-both-encrypted-" + p, response(p, True, True, encrypt=True), impl, "both", "assertion", p, False,
              legacy_encryption=True)
    for p in ("rsa2048-sha256", "rsa2048-sha1"):  # & < " ' non-ASCII, single leading/trailing spaces
        write("pysaml2-both-special-chars-" + p, response(p, True, True, identity=SPECIAL), impl, "both", "none", p,
              False)
    # Double spaces and a tab inside attribute values: the cookbook changes signed text, so not recoverable.
    p = "rsa2048-sha256"
    write("pysaml2-both-special-doublespace-" + p, response(p, True, True, identity=DOUBLESPACE), impl, "both", "none",
          p, False)


# ---------------------------------------------------------------------------------------------------------
# 2./3. libxmlsec1: python-xmlsec (1.3, bundled in the wheel) and the xmlsec1 command line (Debian's 1.2)

def xs():
    import xmlsec
    return xmlsec


def xmlsec_template(element, profile):
    xmlsec = xs()
    stem, sig, dig = PROFILE[profile]
    sig_t = {"rsa-sha256": xmlsec.constants.TransformRsaSha256, "rsa-sha512": xmlsec.constants.TransformRsaSha512,
             "rsa-sha1": xmlsec.constants.TransformRsaSha1, "ecdsa-sha384": xmlsec.constants.TransformEcdsaSha384}[sig]
    dig_t = {"sha256": xmlsec.constants.TransformSha256, "sha512": xmlsec.constants.TransformSha512,
             "sha1": xmlsec.constants.TransformSha1, "sha384": xmlsec.constants.TransformSha384}[dig]
    signature = xmlsec.template.create(element, xmlsec.constants.TransformExclC14N, sig_t, ns="ds")
    element.find("{%s}Issuer" % SAML).addnext(signature)
    reference = xmlsec.template.add_reference(signature, dig_t, uri="#" + element.get("ID"))
    xmlsec.template.add_transform(reference, xmlsec.constants.TransformEnveloped)
    xmlsec.template.add_transform(reference, xmlsec.constants.TransformExclC14N)
    xmlsec.template.add_x509_data(xmlsec.template.ensure_key_info(signature))
    return signature


def python_xmlsec_sign(element, profile):
    xmlsec = xs()
    signature = xmlsec_template(element, profile)
    k, c = key_paths(PROFILE[profile][0])
    ctx = xmlsec.SignatureContext()
    ctx.key = xmlsec.Key.from_file(k, xmlsec.constants.KeyDataFormatPem)
    ctx.key.load_cert_from_file(c, xmlsec.constants.KeyDataFormatPem)
    ctx.register_id(element, "ID")
    ctx.sign(signature)


def xmlsec_encrypt(root, node, data, transport):
    """Replaces `node` by an xenc:EncryptedData for the SP's certificate (python-xmlsec template API)."""
    xmlsec = xs()
    data_t = {"aes256-cbc": (xmlsec.constants.TransformAes256Cbc, 256),
              "aes128-gcm": (xmlsec.constants.TransformAes128Gcm, 128),
              "aes256-gcm": (xmlsec.constants.TransformAes256Gcm, 256),
              "aes128-cbc": (xmlsec.constants.TransformAes128Cbc, 128)}[data]
    manager = xmlsec.KeysManager()
    manager.add_key(xmlsec.Key.from_file(key_paths("sp-rsa-2048")[1], xmlsec.constants.KeyDataFormatCertPem))
    enc_data = xmlsec.template.encrypted_data_create(root, data_t[0], type=xmlsec.constants.TypeEncElement, ns="xenc")
    xmlsec.template.encrypted_data_ensure_cipher_value(enc_data)
    key_info = xmlsec.template.encrypted_data_ensure_key_info(enc_data, ns="ds")
    enc_key = xmlsec.template.add_encrypted_key(key_info, xmlsec.constants.TransformRsaOaep)
    method = enc_key.find("{%s}EncryptionMethod" % XENC)
    if transport == "rsa-oaep-xmlenc11":  # xmlenc 1.1 rsa-oaep, SHA-256 digest and MGF1-SHA256
        method.set("Algorithm", XENC11 + "rsa-oaep")
        etree.SubElement(method, "{%s}DigestMethod" % DS, Algorithm="http://www.w3.org/2001/04/xmlenc#sha256")
        etree.SubElement(method, "{%s}MGF" % XENC11, Algorithm=XENC11 + "mgf1sha256", nsmap={"xenc11": XENC11})
    elif transport == "rsa-oaep-mgf1p-sha1":
        etree.SubElement(method, "{%s}DigestMethod" % DS, Algorithm="http://www.w3.org/2000/09/xmldsig#sha1")
    xmlsec.template.encrypted_data_ensure_cipher_value(enc_key)
    ctx = xmlsec.EncryptionContext(manager)
    ctx.key = xmlsec.Key.generate(xmlsec.constants.KeyDataAes, data_t[1], xmlsec.constants.KeyDataTypeSession)
    return ctx.encrypt_xml(enc_data, node)


def wrap(node, tag):
    """Moves `node` into a new saml:`tag` element at its place (the tail stays outside)."""
    wrapper = etree.Element("{%s}%s" % (SAML, tag))
    wrapper.tail, node.tail = node.tail, None
    node.addprevious(wrapper)
    wrapper.append(node)
    return wrapper


def python_xmlsec_vectors():
    xmlsec = xs()
    impl = "python-xmlsec %s (libxmlsec1 %s)" % (version("xmlsec"), ".".join(map(str, xmlsec.get_libxmlsec_version())))
    for profile, style in (("rsa2048-sha256", "compact"), ("p384-sha384", "4sp")):
        root = template("-px-%s-%s" % (profile, style), style)
        python_xmlsec_sign(root.find("{%s}Assertion" % SAML), profile)
        python_xmlsec_sign(root, profile)
        write("python-xmlsec-both-%s-%s" % (profile, style), serialize(root), impl, "both", "none", profile,
              style != "compact")
    # Signed Response around an EncryptedAssertion (the assertion signed first, then encrypted).
    for profile, data, transport, style in (("rsa2048-sha256", "aes256-cbc", "rsa-oaep-mgf1p", "compact"),
                                            ("rsa2048-sha256", "aes128-gcm", "rsa-oaep-xmlenc11", "compact"),
                                            ("p384-sha384", "aes128-gcm", "rsa-oaep-xmlenc11", "compact"),
                                            ("rsa3072-sha512", "aes256-gcm", "rsa-oaep-mgf1p-sha1", "compact"),
                                            ("rsa2048-sha256", "aes128-gcm", "rsa-oaep-xmlenc11", "4sp"),
                                            ("rsa2048-sha1", "aes256-cbc", "rsa-oaep-mgf1p", "4sp")):
        root = template("-pxe-%s-%s-%s" % (profile, data, style), style)
        assertion = root.find("{%s}Assertion" % SAML)
        python_xmlsec_sign(assertion, profile)
        xmlsec_encrypt(root, assertion, data, transport)
        wrap(root.find("{%s}EncryptedData" % XENC), "EncryptedAssertion")
        python_xmlsec_sign(root, profile)
        write("python-xmlsec-encassertion-%s-%s-%s-%s" % (profile, data, transport, style), serialize(root), impl,
              "both", "assertion", profile, style != "compact", legacy_encryption=data.endswith("cbc"))
    # Signed assertion holding an EncryptedAttribute; response signed too.
    for profile, data, transport in (("rsa2048-sha256", "aes128-gcm", "rsa-oaep-xmlenc11"),
                                     ("rsa2048-sha256", "aes128-cbc", "rsa-oaep-mgf1p")):
        root = template("-pxa-%s-%s" % (profile, data))
        attribute = root.find(".//{%s}Attribute[@Name='householdId']" % SAML)
        wrap(attribute, "EncryptedAttribute")
        xmlsec_encrypt(root, attribute, data, transport)
        python_xmlsec_sign(root.find("{%s}Assertion" % SAML), profile)
        python_xmlsec_sign(root, profile)
        write("python-xmlsec-encattribute-%s-%s-%s" % (profile, data, transport), serialize(root), impl, "both",
              "attribute", profile, False, legacy_encryption=data.endswith("cbc"))


def xmlsec1_sign(data, element_name, profile):
    k, c = key_paths(PROFILE[profile][0])
    with tempfile.TemporaryDirectory() as d:
        src, out = os.path.join(d, "in.xml"), os.path.join(d, "out.xml")
        open(src, "wb").write(data)
        namespace = SAMLP if element_name == "Response" else SAML
        subprocess.run(["xmlsec1", "--sign", "--privkey-pem", k + "," + c, "--id-attr:ID",
                        "%s:%s" % (namespace, element_name), "--node-xpath",
                        "(//*[local-name()='Signature'][parent::*[local-name()='%s']])[1]" % element_name,
                        "--output", out, src], check=True, capture_output=True)
        return open(out, "rb").read()


def xmlsec1_vectors():
    impl = subprocess.run(["xmlsec1", "--version"], capture_output=True, text=True).stdout.strip()
    for profile, style in (("rsa2048-sha256", "compact"), ("p384-sha384", "2sp")):
        root = template("-x1-%s-%s" % (profile, style), style)
        xmlsec_template(root.find("{%s}Assertion" % SAML), profile)
        data = xmlsec1_sign(serialize(root), "Assertion", profile)
        root = etree.fromstring(data)
        xmlsec_template(root, profile)
        data = xmlsec1_sign(serialize(root), "Response", profile)
        write("xmlsec1-both-%s-%s" % (profile, style), data, impl, "both", "none", profile, style != "compact")


# ---------------------------------------------------------------------------------------------------------
# 4. OpenSAML C++ samlsign (xml-security-c)

def samlsign(data, profile, id=None):
    stem, sig, dig = PROFILE[profile]
    k, c = key_paths(stem)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in.xml")
        open(src, "wb").write(data)
        cmd = ["samlsign", "-s", "-k", k, "-c", c, "-alg", SIG[sig], "-dig", DIG[dig], "-f", src]
        if id:
            cmd += ["-id", id]
        r = subprocess.run(cmd, capture_output=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError("samlsign exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-400:]))
    return r.stdout


def samlsign_vectors():
    try:
        tools = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "opensaml-tools"], capture_output=True,
                               text=True).stdout.split("-")[0] or "?"
    except OSError:
        tools = "?"
    impl = "OpenSAML C++ samlsign (opensaml-tools %s, xml-security-c)" % tools
    for profile, style in (("rsa2048-sha256", "compact"), ("rsa3072-sha512", "2sp")):
        root = template("-os-r-%s-%s" % (profile, style), style)
        write("samlsign-response-%s-%s" % (profile, style), samlsign(serialize(root), profile), impl, "response",
              "none", profile, style != "compact")
    for profile in PROFILE:
        for style in ("compact", "2sp"):
            suffix = "-os-b-%s-%s" % (profile, style)
            root = template(suffix, style)
            # samlsign -id prints only the signed object: splice it back as the Response's assertion.
            new = etree.fromstring(samlsign(serialize(root), profile, id="_assert" + suffix))
            old = root.find("{%s}Assertion" % SAML)
            new.tail = old.tail
            root.replace(old, new)
            write("samlsign-both-%s-%s" % (profile, style), samlsign(serialize(root), profile), impl, "both", "none",
                  profile, style != "compact")


# ---------------------------------------------------------------------------------------------------------
# 5. python3-saml (OneLogin): EncryptedID from generate_name_id, add_sign on the assertion (and the response)

def onelogin_vectors():
    from onelogin.saml2.utils import OneLogin_Saml2_Utils as U
    impl = "python3-saml %s (python-xmlsec %s)" % (version("python3-saml"), version("xmlsec"))
    spc = open(key_paths("sp-rsa-2048")[1]).read()
    for profile, style, signed in (("rsa2048-sha256", "compact", "both"), ("rsa3072-sha512", "compact", "both"),
                                   ("rsa2048-sha1", "compact", "both"), ("rsa1024-sha256", "compact", "both"),
                                   ("rsa2048-sha256", "2sp", "both"), ("rsa3072-sha512", "4sp", "both"),
                                   ("rsa2048-sha256", "compact", "assertion"), ("rsa2048-sha256", "4sp", "assertion")):
        stem, sig, dig = PROFILE[profile]
        k, c = key_paths(stem)
        key, cert = open(k).read(), open(c).read()
        encrypted_id = U.generate_name_id("subscriber-0042", AUDIENCE,
                                          "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", spc)
        # The (indented) template gets the EncryptedID string as generate_name_id wrote it.
        root = template("-ol-%s-%s-%s" % (profile, style, signed), style)
        name_id = root.find(".//{%s}NameID" % SAML)
        holder = etree.fromstring(('<x xmlns:saml="%s">' % SAML + encrypted_id + "</x>").encode())[0]
        holder.tail = name_id.tail
        name_id.getparent().replace(name_id, holder)
        old = root.find("{%s}Assertion" % SAML)
        new = etree.fromstring(U.add_sign(etree.tostring(old), key, cert, sign_algorithm=SIG[sig],
                                          digest_algorithm=DIG[dig]))
        new.tail = old.tail
        root.replace(old, new)
        out = etree.tostring(root)
        if signed == "both":
            out = U.add_sign(out, key, cert, sign_algorithm=SIG[sig], digest_algorithm=DIG[dig])
        write("python3-saml-%s-encnameid-%s-%s" % (signed, profile, style), out, impl, signed, "nameid", profile,
              style != "compact", legacy_encryption=True)


# ---------------------------------------------------------------------------------------------------------
# 6. signxml and the JDK (../recovery/Signer.java)

def signxml_vectors():
    from signxml import XMLSigner, methods
    from signxml.algorithms import SignatureMethod, DigestAlgorithm

    class Signer(XMLSigner):
        def check_deprecated_methods(self):  # allow SHA-1 (not used by the selected vectors)
            pass

    def sign(element, profile):
        stem, sig, dig = PROFILE[profile]
        k, c = key_paths(stem)
        element.find("{%s}Issuer" % SAML).addnext(etree.Element("{%s}Signature" % DS, nsmap={"ds": DS}, Id="placeholder"))
        signer = Signer(method=methods.enveloped, signature_algorithm=SignatureMethod(SIG[sig]),
                        digest_algorithm=DigestAlgorithm(DIG[dig]),
                        c14n_algorithm="http://www.w3.org/2001/10/xml-exc-c14n#")
        return signer.sign(element, key=open(k, "rb").read(), cert=open(c, "rb").read(),
                           reference_uri="#" + element.get("ID"), id_attribute="ID")

    impl = "signxml %s" % version("signxml")
    for profile, style in (("rsa2048-sha256", "compact"), ("p384-sha384", "compact"), ("rsa2048-sha256", "2sp"),
                           ("rsa3072-sha512", "2sp")):
        root = template("-sx-%s-%s" % (profile, style), style)
        old = root.find("{%s}Assertion" % SAML)
        root.replace(old, sign(copy.deepcopy(old), profile))
        root = sign(root, profile)
        write("signxml-both-%s-%s" % (profile, style), serialize(root), impl, "both", "none", profile,
              style != "compact")


def jdk_vectors():
    build = tempfile.mkdtemp()
    subprocess.run(["javac", "-d", build, os.path.join(HERE, "..", "recovery", "Signer.java")], check=True)
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]

    def sign(data, element, profile):
        stem, sig, dig = PROFILE[profile]
        k, c = key_paths(stem)
        r = subprocess.run(["java", "-cp", build, "Signer", k, c, element, SIG[sig], DIG[dig]], input=data,
                           capture_output=True)
        if r.returncode:
            raise RuntimeError(r.stderr.decode()[-400:])
        return r.stdout

    for profile, style in (("rsa2048-sha256", "compact"), ("rsa3072-sha512", "4sp")):
        data = serialize(template("-jdk-%s-%s" % (profile, style), style))
        data = sign(sign(data, "Assertion", profile), "Response", profile)
        write("jdk-both-%s-%s" % (profile, style), data, "JDK javax.xml.crypto.dsig (%s)" % java, "both", "none",
              profile, style != "compact")


FAMILIES = (("pysaml2", pysaml2_vectors), ("python-xmlsec", python_xmlsec_vectors), ("xmlsec1", xmlsec1_vectors),
            ("samlsign", samlsign_vectors), ("python3-saml", onelogin_vectors), ("signxml", signxml_vectors),
            ("jdk", jdk_vectors))


def main():
    global PRIVATE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idp-keys", metavar="DIR", help="directory for the IdP private keys (default: a temporary "
                        "one; never point it inside the repository)")
    args = parser.parse_args()
    PRIVATE = os.path.abspath(args.idp_keys) if args.idp_keys else tempfile.mkdtemp(prefix="idp-keys-")
    os.makedirs(PRIVATE, exist_ok=True)
    try:
        make_keys()
        os.makedirs(OUT, exist_ok=True)
        for old in os.listdir(OUT):
            if old.endswith(".xml"):
                os.unlink(os.path.join(OUT, old))
        for name, fn in FAMILIES:  # any failure stops the run: the set of vectors must stay complete
            fn()
    finally:
        if not args.idp_keys:
            shutil.rmtree(PRIVATE, ignore_errors=True)
    vectors.sort(key=lambda v: v["id"])
    with open(os.path.join(HERE, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump({"vectors": vectors}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print("%d vectors" % len(vectors))


if __name__ == "__main__":
    main()
