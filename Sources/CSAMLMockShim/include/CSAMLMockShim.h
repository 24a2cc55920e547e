// The mock IdP's C (see mock_shim.c). Only SAMLMockIdP imports it.
#ifndef CSAMLMOCKSHIM_H
#define CSAMLMOCKSHIM_H

#include "CSAMLShim.h"

/// Parses a SAML response (safe options), signs its Assertion and/or its Response with enveloped
/// signatures (exclusive C14N, SHA-256, RSA-SHA256 or ECDSA-SHA256 after the key's type, the certificate in
/// KeyInfo), each placed right after the element's Issuer; with `recipient` (a key loaded from the SP's
/// certificate, or NULL) the signed Assertion is then encrypted to it: a fresh AES-256-GCM session key,
/// RSA-OAEP (mgf1p) key transport, the EncryptedKey inside the EncryptedData's KeyInfo, all inside
/// saml:EncryptedAssertion. Serialises the result into a buffer the caller frees with
/// `saml_shim_free_buffer`. Returns 0 on success.
int saml_mock_sign_encrypt_response(const char *xml, int length, xmlSecKeyPtr key, int signAssertion, int signResponse,
                                    xmlSecKeyPtr recipient, unsigned char **output, int *outputLength);

#endif
