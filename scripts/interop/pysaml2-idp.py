#!/usr/bin/env python3
"""Reads a SAML request as a pysaml2 identity provider (saml2.server.Server) would receive it.

Usage: pysaml2-idp.py REQUEST.xml --issuer SP_ENTITY_ID --destination IDP_ENDPOINT --sp-cert SP_CERT.pem

Writes, in a temporary directory, SP metadata naming SP_CERT.pem as the SP's signing key and an IdP
configuration with DESTINATION as its attribute service and single sign-on service, then hands the
request, Base64-encoded as the device carries it, to Server.parse_attribute_query or
Server.parse_authn_request with BINDING_HTTP_POST. pysaml2 checks the XML Schema (its saml2.xml.schema
validator is run on the request as sent, too), its own rules (valid_instance), the issue instant and the
destination, and a signature when there is one: the SAML signature profile's constraints, then the
xmlsec1 command with the metadata's key. Prints what it read as one JSON object and exits 0; exits 1 with
the reason on stderr when pysaml2 refuses the request.

Not BINDING_SOAP: pysaml2 7.5.5 takes the request out of the SOAP envelope by re-serialising it with
xml.etree (saml2/soap.py, parse_soap_enveloped_saml_thingy), which renames the prefixes to ns0, ns1...;
prefixes are part of the exclusive canonical form, so every signed request from an SP that does not
happen to use those prefixes fails there. The Apple SSO flow has no SOAP leg anyway: the service hands the
request to the device as Base64.
"""

import argparse
import base64
import json
import os
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

from saml2 import BINDING_HTTP_POST
from saml2.config import IdPConfig
from saml2.server import Server
from saml2.sigver import get_xmlsec_binary
from saml2.xml.schema import validate as validate_with_schema

PROTOCOL = "urn:oasis:names:tc:SAML:2.0:protocol"
METADATA = "urn:oasis:names:tc:SAML:2.0:metadata"
DSIG = "http://www.w3.org/2000/09/xmldsig#"
IDP_ENTITY_ID = "https://idp.interop.invalid/idp"


def certificate_base64(pem_path):
    with open(pem_path, encoding="ascii") as pem:
        lines = pem.read().strip().splitlines()
    return "".join(line for line in lines if not line.startswith("-----"))


def sp_metadata(entity_id, certificate):
    ElementTree.register_namespace("md", METADATA)
    ElementTree.register_namespace("ds", DSIG)
    entity = ElementTree.Element(f"{{{METADATA}}}EntityDescriptor", entityID=entity_id)
    sp = ElementTree.SubElement(
        entity,
        f"{{{METADATA}}}SPSSODescriptor",
        protocolSupportEnumeration=PROTOCOL,
        AuthnRequestsSigned="false",
    )
    key = ElementTree.SubElement(sp, f"{{{METADATA}}}KeyDescriptor", use="signing")
    info = ElementTree.SubElement(key, f"{{{DSIG}}}KeyInfo")
    data = ElementTree.SubElement(info, f"{{{DSIG}}}X509Data")
    ElementTree.SubElement(data, f"{{{DSIG}}}X509Certificate").text = certificate
    ElementTree.SubElement(
        sp,
        f"{{{METADATA}}}AssertionConsumerService",
        Binding=BINDING_HTTP_POST,
        Location=entity_id.rstrip("/") + "/acs",
        index="0",
    )
    return ElementTree.tostring(entity, encoding="unicode")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("request")
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--destination", required=True)
    parser.add_argument("--sp-cert", required=True)
    arguments = parser.parse_args()

    with open(arguments.request, "rb") as file:
        request = file.read()
    kind = ElementTree.fromstring(request).tag

    with tempfile.TemporaryDirectory(prefix="pysaml2-idp-") as directory:
        metadata_path = os.path.join(directory, "sp-metadata.xml")
        with open(metadata_path, "w", encoding="utf-8") as file:
            file.write(sp_metadata(arguments.issuer, certificate_base64(arguments.sp_cert)))
        config = IdPConfig().load(
            {
                "entityid": IDP_ENTITY_ID,
                "service": {
                    "idp": {
                        "endpoints": {
                            "attribute_service": [(arguments.destination, BINDING_HTTP_POST)],
                            "single_sign_on_service": [(arguments.destination, BINDING_HTTP_POST)],
                        },
                    },
                },
                "metadata": {"local": [metadata_path]},
                "xmlsec_binary": get_xmlsec_binary(),
                "delete_tmpfiles": True,
            }
        )
        server = Server(config=config)
        try:
            validate_with_schema(request.decode("utf-8"))
            carried = base64.b64encode(request).decode("ascii")
            if kind == f"{{{PROTOCOL}}}AttributeQuery":
                parsed = server.parse_attribute_query(carried, BINDING_HTTP_POST)
            elif kind == f"{{{PROTOCOL}}}AuthnRequest":
                parsed = server.parse_authn_request(carried, BINDING_HTTP_POST)
            else:
                raise ValueError("not an AttributeQuery or an AuthnRequest")
            if parsed is None or not parsed.verify():
                raise ValueError("pysaml2 found the request not valid (issue instant or destination)")
        except Exception as error:  # noqa: BLE001 - every refusal is reported the same way
            print(f"refused: {type(error).__name__}: {error}", file=sys.stderr)
            return 1

    message = parsed.message
    name_id = None
    if getattr(message, "subject", None) is not None and message.subject.name_id is not None:
        name_id = {"format": message.subject.name_id.format, "value": message.subject.name_id.text}
    print(
        json.dumps(
            {
                "type": type(message).__name__,
                "id": message.id,
                "issuer": parsed.sender(),
                "signed": message.signature is not None,
                "nameID": name_id,
                "attributes": [attribute.name for attribute in getattr(message, "attribute", [])],
            },
            sort_keys=True,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
