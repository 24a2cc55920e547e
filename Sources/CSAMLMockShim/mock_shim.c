// The mock IdP's C: signs and encrypts SAML responses for `SAMLMockIdP` (`saml generate`, load and
// integration tests). Kept out of CSAMLShim, which holds only what the verifier and the SP need.
#include "CSAMLMockShim.h"

#include <xmlsec/templates.h>
#include <xmlsec/xmlenc.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

// Encrypts `assertion` in place (see saml_mock_sign_encrypt_response).
static int saml_mock_encrypt_assertion(xmlDocPtr doc, xmlNodePtr assertion, xmlSecKeyPtr recipient) {
    static const xmlChar assertionNs[] = "urn:oasis:names:tc:SAML:2.0:assertion";
    unsigned char sessionKey[32];
    if (RAND_bytes(sessionKey, sizeof(sessionKey)) != 1) {
        return -1;
    }
    int result = -1;
    xmlSecEncCtxPtr dataCtx = NULL;
    xmlSecEncCtxPtr keyCtx = NULL;
    xmlNodePtr container = xmlNewDocNode(doc, NULL, (const xmlChar *)"EncryptedAssertion", NULL);
    xmlNsPtr ns = container != NULL ? xmlNewNs(container, assertionNs, (const xmlChar *)"saml") : NULL;
    xmlNodePtr encData = xmlSecTmplEncDataCreate(doc, xmlSecOpenSSLTransformAes256GcmId, NULL, xmlSecTypeEncElement, NULL, NULL);
    if (container == NULL || ns == NULL || encData == NULL) {
        goto done;
    }
    xmlSetNs(container, ns);
    if (xmlSecTmplEncDataEnsureCipherValue(encData) == NULL) {
        goto done;
    }
    // The assertion moves into the container first, so that the EncryptedData takes its place there.
    xmlReplaceNode(assertion, container);
    xmlAddChild(container, assertion);
    dataCtx = xmlSecEncCtxCreate(NULL);
    if (dataCtx == NULL) {
        goto done;
    }
    dataCtx->encKey = xmlSecKeyReadMemory(xmlSecOpenSSLKeyDataAesId, sessionKey, sizeof(sessionKey));
    if (dataCtx->encKey == NULL || xmlSecEncCtxXmlEncrypt(dataCtx, encData, assertion) < 0) {
        goto done;
    }
    encData = NULL;  // now in the tree, in place of the assertion
    xmlNodePtr placed = xmlSecFindChild(container, xmlSecNodeEncryptedData, xmlSecEncNs);
    xmlNodePtr keyInfo = placed != NULL ? xmlSecTmplEncDataEnsureKeyInfo(placed, NULL) : NULL;
    xmlNodePtr encKey = keyInfo != NULL ? xmlSecTmplKeyInfoAddEncryptedKey(keyInfo, xmlSecOpenSSLTransformRsaOaepId, NULL, NULL, NULL) : NULL;
    if (encKey == NULL || xmlSecTmplEncDataEnsureCipherValue(encKey) == NULL) {
        goto done;
    }
    keyCtx = xmlSecEncCtxCreate(NULL);
    if (keyCtx == NULL) {
        goto done;
    }
    keyCtx->mode = xmlEncCtxModeEncryptedKey;
    keyCtx->encKey = xmlSecKeyDuplicate(recipient);
    if (keyCtx->encKey == NULL || xmlSecEncCtxBinaryEncrypt(keyCtx, encKey, sessionKey, sizeof(sessionKey)) < 0) {
        goto done;
    }
    saml_shim_compact_for_transport(container);
    result = 0;
done:
    OPENSSL_cleanse(sessionKey, sizeof(sessionKey));
    if (encData != NULL) {
        xmlFreeNode(encData);
    }
    if (dataCtx != NULL) {
        xmlSecEncCtxDestroy(dataCtx);
    }
    if (keyCtx != NULL) {
        xmlSecEncCtxDestroy(keyCtx);
    }
    return result;
}

int saml_mock_sign_encrypt_response(const char *xml, int length, xmlSecKeyPtr key, int signAssertion, int signResponse,
                                    xmlSecKeyPtr recipient, unsigned char **output, int *outputLength) {
    int ecdsa = xmlSecKeyDataCheckId(xmlSecKeyGetValue(key), xmlSecOpenSSLKeyDataEcdsaId);
    *output = NULL;
    *outputLength = 0;
    xmlDocPtr doc = xmlReadMemory(xml, length, NULL, "UTF-8", XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc == NULL) {
        return -1;
    }
    int result = -1;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlNodePtr assertion = root != NULL ? xmlSecFindChild(root, (const xmlChar *)"Assertion", (const xmlChar *)"urn:oasis:names:tc:SAML:2.0:assertion") : NULL;
    // The assertion first (its signature covers the plaintext), then its encryption, then the Response
    // (whose signature covers the ciphertext).
    if (assertion == NULL
        || (signAssertion && saml_shim_sign_element(doc, assertion, key, ecdsa) < 0)
        || (recipient != NULL && saml_mock_encrypt_assertion(doc, assertion, recipient) < 0)
        || (signResponse && saml_shim_sign_element(doc, root, key, ecdsa) < 0)) {
        goto done;
    }
    xmlChar *buffer = NULL;
    int size = 0;
    xmlDocDumpMemoryEnc(doc, &buffer, &size, "UTF-8");
    if (buffer != NULL) {
        *output = (unsigned char *)buffer;
        *outputLength = size;
        result = 0;
    }
done:
    xmlFreeDoc(doc);
    return result;
}

