#!/usr/bin/env python3
"""Regenerates TestVectors/recovery/: signed responses as real IdP implementations serialise them, for the
verifier's recovery of the Adobe Pass cookbook's whitespace normalisation (docs/recovery.md).

Each file is what the signer wrote, byte for byte, before any cookbook treatment; the tests apply the
cookbook's normalisation themselves. Signers, all independent of this package:
  signxml (Python, lxml + cryptography), python-xmlsec (libxmlsec1 1.3 bundled in its wheel),
  xmlsec1 1.2.37 (Debian's command line tool), OpenSAML C++ / xml-security-c (Debian's samlsign),
  the JDK's javax.xml.crypto.dsig (JDK 17, Santuario; Signer.java beside this script).
Run: pip install signxml xmlsec && apt-get install -y xmlsec1 opensaml-tools && python3 TestVectors/recovery/generate.py
"""
import importlib.util, json, os, subprocess, tempfile
from lxml import etree

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("vectors_base", os.path.join(os.path.dirname(HERE), "generate.py"))
base = importlib.util.module_from_spec(_spec)  # the response template, keys and constants of TestVectors/
_spec.loader.exec_module(base)

import xmlsec  # noqa: E402

KEY = os.path.join(base.KEYS, "rsa-2048.key.pem")
CERT = os.path.join(base.KEYS, "rsa-2048.cert.pem")
SAML = base.SAML
vectors = []


def template(suffix, indent=None):
    """The bundled response template; `indent` pretty-prints it (lxml's indenter) before signing."""
    root = base.response_xml(base.attributes(4), suffix=suffix)
    if indent is not None:
        etree.indent(root, space=indent)
    return root


def write(id, data, signer, signed, style, wraps=None, tamper=None):
    path = "%s.xml" % id
    open(os.path.join(HERE, path), "wb").write(data)
    entry = {"id": id, "file": "recovery/" + path, "signer": signer, "signed": signed, "style": style}
    if tamper:
        entry["tamper"] = tamper
    vectors.append(entry)


# --- signxml -------------------------------------------------------------------------------------------

def signxml_vectors():
    key, cert = open(KEY, "rb").read(), open(CERT, "rb").read()
    for name, indent in (("2-spaces", "  "), ("4-spaces", "    "), ("tabs", "\t")):
        root = base.sign_assertion(template("-sx-" + name, indent), key, cert)
        write("signxml-assertion-pretty-" + name, base.serialize(root), "signxml", "assertion",
              "content indented by %s; compact Signature" % name)
    root = base.sign_response(base.sign_assertion(template("-sx-both", "  "), key, cert), key, cert)
    write("signxml-both-pretty-2-spaces", base.serialize(root), "signxml", "both",
          "content indented by 2 spaces; both signed")
    root = base.sign_response(base.sign_assertion(template("-sx-both-compact"), key, cert), key, cert)
    write("signxml-both-compact", base.serialize(root), "signxml", "both", "compact; both signed")


# --- libxmlsec1: templates from xmlsec's template API, signed by python-xmlsec or the xmlsec1 tool -----

def xmlsec_template(element, digest=xmlsec.constants.TransformSha256, method=xmlsec.constants.TransformRsaSha256):
    signature = xmlsec.template.create(element, xmlsec.constants.TransformExclC14N, method, ns="ds")
    issuer = element.find("{%s}Issuer" % SAML)
    issuer.addnext(signature)
    reference = xmlsec.template.add_reference(signature, digest, uri="#" + element.get("ID"))
    xmlsec.template.add_transform(reference, xmlsec.constants.TransformEnveloped)
    xmlsec.template.add_transform(reference, xmlsec.constants.TransformExclC14N)
    info = xmlsec.template.ensure_key_info(signature)
    xmlsec.template.add_x509_data(info)
    return signature


def python_xmlsec_sign(root, element, **kw):
    signature = xmlsec_template(element, **kw)
    context = xmlsec.SignatureContext()
    context.key = xmlsec.Key.from_file(KEY, xmlsec.constants.KeyDataFormatPem)
    context.key.load_cert_from_file(CERT, xmlsec.constants.KeyDataFormatPem)
    context.register_id(element, "ID")
    context.sign(signature)
    return root


def xmlsec1_sign(data, element_name):
    with tempfile.NamedTemporaryFile(suffix=".xml", delete=False) as f:
        f.write(data)
    out = f.name + ".signed"
    node = "ns:" + element_name
    namespace = base.SAMLP if element_name == "Response" else SAML
    subprocess.run(["xmlsec1", "--sign", "--privkey-pem", KEY + "," + CERT,
                    "--id-attr:ID", "%s:%s" % (namespace, element_name),
                    "--node-xpath", "(//*[local-name()='Signature'][parent::*[local-name()='%s']])[1]" % element_name,
                    "--output", out, f.name], check=True)
    signed = open(out, "rb").read()
    os.unlink(out)
    os.unlink(f.name)
    return signed


def libxmlsec1_vectors():
    for name, digest, both, indent in (("assertion", xmlsec.constants.TransformSha256, False, None),
                                       ("both", xmlsec.constants.TransformSha256, True, None),
                                       ("both-sha512", xmlsec.constants.TransformSha512, True, None),
                                       ("both-pretty-4-spaces", xmlsec.constants.TransformSha256, True, "    ")):
        suffix = "-px-" + name
        root = template(suffix, indent)
        python_xmlsec_sign(root, root.find("{%s}Assertion" % SAML), digest=digest)
        if both:
            python_xmlsec_sign(root, root, digest=digest)
        write("python-xmlsec-" + name, base.serialize(root), "python-xmlsec", "both" if both else "assertion",
              "xmlsec template (newline-only), Base64 wrapped at 64" + ("; content indented" if indent else ""))
        # The same template, signed by the xmlsec1 command line tool (libxmlsec1 1.2.37).
        root = template("-x1-" + name, indent)
        xmlsec_template(root.find("{%s}Assertion" % SAML), digest=digest)
        data = xmlsec1_sign(base.serialize(root), "Assertion")
        if both:
            root = etree.fromstring(data)
            xmlsec_template(root, digest=digest)
            data = xmlsec1_sign(base.serialize(root), "Response")
        write("xmlsec1-" + name, data, "xmlsec1", "both" if both else "assertion",
              "xmlsec template (newline-only), Base64 wrapped at 64" + ("; content indented" if indent else ""))


# --- OpenSAML C++ (xml-security-c) ---------------------------------------------------------------------

def samlsign_vectors():
    for name, indent in (("compact", None), ("pretty-2-spaces", "  ")):
        root = template("-os-" + name, indent)
        with tempfile.NamedTemporaryFile(suffix=".xml", delete=False) as f:
            f.write(base.serialize(root))
        signed = subprocess.run(["samlsign", "-s", "-k", KEY, "-c", CERT, "-alg", "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
                                 "-dig", "http://www.w3.org/2001/04/xmlenc#sha256", "-f", f.name],
                                check=True, capture_output=True).stdout
        os.unlink(f.name)
        write("opensaml-response-" + name, signed, "OpenSAML C++ samlsign", "response",
              "xml-security-c Signature" + ("; content indented" if indent else ""))


# --- JDK -----------------------------------------------------------------------------------------------

def jdk_vectors():
    build = tempfile.mkdtemp()
    subprocess.run(["javac", "-d", build, os.path.join(HERE, "Signer.java")], check=True)
    def sign(data, element):
        return subprocess.run(["java", "-cp", build, "Signer", KEY, CERT, element,
                               "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "http://www.w3.org/2001/04/xmlenc#sha256"],
                              input=data, check=True,
                              capture_output=True).stdout
    for name, indent, signed in (("assertion-compact", None, "assertion"), ("assertion-pretty-4-spaces", "    ", "assertion"),
                                 ("response-compact", None, "response"), ("both-compact", None, "both")):
        data = base.serialize(template("-jdk-" + name, indent))
        if signed in ("assertion", "both"):
            data = sign(data, "Assertion")
        if signed in ("response", "both"):
            data = sign(data, "Response")
        write("jdk-" + name, data, "JDK 17 javax.xml.crypto.dsig", signed,
              "Santuario serialisation, Base64 wrapped at 76 with &#13;" + ("; content indented" if indent else ""))


def main():
    for old in os.listdir(HERE):
        if old.endswith(".xml"):
            os.unlink(os.path.join(HERE, old))
    signxml_vectors()
    libxmlsec1_vectors()
    samlsign_vectors()
    jdk_vectors()
    json.dump({"now": base.NOW, "cert": "keys/rsa-2048.cert.pem",
               "config": {"issuer": base.IDP, "audience": base.AUDIENCE, "destination": base.DESTINATION,
                          "inResponseTo": base.REQUEST},
               "vectors": vectors}, open(os.path.join(HERE, "manifest.json"), "w"), indent=1)
    print("%d vectors" % len(vectors))


if __name__ == "__main__":
    main()
