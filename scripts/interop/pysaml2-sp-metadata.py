#!/usr/bin/env python3
"""Reads SP metadata as a pysaml2 identity provider loads it (saml2.mdstore.MetadataStore).

Usage: pysaml2-sp-metadata.py METADATA.xml [--signer CERT.pem]

Loads the file with MetadataStore.load("local", ...), validity checked (an expired validUntil leaves the
entity out), and prints one JSON object per entity that has an SPSSODescriptor: its entity ID, the
assertion consumer services, the number of signing and encryption certificates, the NameID formats and
the AuthnRequestsSigned / WantAssertionsSigned flags. With --signer, the root signature is checked first,
as pysaml2 checks signed metadata (MetaDataFile.parse_and_check_signature): its security context runs the
xmlsec1 command with that certificate's key on the md:EntityDescriptor. Exits 0 when at least one SP
entity was read, 1 with the reason on stderr otherwise.
"""

import argparse
import json
import sys

from saml2.attribute_converter import ac_factory
from saml2.config import Config
from saml2.mdstore import MetadataStore
from saml2.sigver import get_xmlsec_binary, security_context

ENTITY_DESCRIPTOR = "urn:oasis:names:tc:SAML:2.0:metadata:EntityDescriptor"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("metadata")
    parser.add_argument("--signer")
    arguments = parser.parse_args()

    config = Config().load({"xmlsec_binary": get_xmlsec_binary(), "delete_tmpfiles": True})
    try:
        if arguments.signer:
            with open(arguments.metadata, "rb") as file:
                text = file.read()
            security_context(config).verify_signature(text, node_name=ENTITY_DESCRIPTOR, cert_file=arguments.signer)
        store = MetadataStore(ac_factory(), config, check_validity=True)
        store.load("local", arguments.metadata)
    except Exception as error:  # noqa: BLE001 - every refusal is reported the same way
        print(f"refused: {type(error).__name__}: {error}", file=sys.stderr)
        return 1

    entities = []
    for entity_id in store.service_providers():
        role = store[entity_id]["spsso_descriptor"][0]
        entities.append(
            {
                "entityID": entity_id,
                "assertionConsumerServices": [
                    {
                        "binding": service["binding"],
                        "location": service["location"],
                        "index": service["index"],
                        "isDefault": service.get("is_default") == "true",
                    }
                    for service in store.assertion_consumer_service(entity_id)
                ],
                "signingCertificates": len(store.certs(entity_id, "spsso", "signing")),
                "encryptionCertificates": len(store.certs(entity_id, "spsso", "encryption")),
                "nameIDFormats": [format["text"] for format in role.get("name_id_format", [])],
                "authnRequestsSigned": role.get("authn_requests_signed"),
                "wantAssertionsSigned": role.get("want_assertions_signed"),
            }
        )
    if not entities:
        print("refused: no entity with an SPSSODescriptor was loaded", file=sys.stderr)
        return 1
    print(json.dumps(entities, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
