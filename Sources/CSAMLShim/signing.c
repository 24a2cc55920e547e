// Signing: requests and SP metadata (and the mock IdP's responses) signed with an enveloped signature laid
// out to survive the cookbook's normalisation.
#include "CSAMLShim.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <xmlsec/templates.h>
#include <xmlsec/io.h>
#include <xmlsec/parser.h>
#include <libxml/hash.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <stdio.h>
#include <pthread.h>
#include <xmlsec/keysmngr.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <xmlsec/openssl/evp.h>
#include <openssl/hmac.h>
#include "shim_private.h"

static xmlNodePtr saml_shim_child(xmlNodePtr parent, const char *name, const char *ns) {
    return xmlSecFindChild(parent, (const xmlChar *)name, (const xmlChar *)ns);
}

// xmlsec's templates put "\n" text nodes between the elements of ds:Signature. Those would sit inside
// the signed SignedInfo, and the Adobe Pass cookbook's whitespace normalisation deletes newlines on the
// device: the signature would no longer verify after encoding. Generated signatures carry none.
static void saml_shim_strip_blank_text(xmlNodePtr node) {
    xmlNodePtr child = node->children;
    while (child != NULL) {
        xmlNodePtr next = child->next;
        if (child->type == XML_TEXT_NODE && xmlIsBlankNode(child)) {
            xmlUnlinkNode(child);
            xmlFreeNode(child);
        } else if (child->type == XML_ELEMENT_NODE) {
            saml_shim_strip_blank_text(child);
        }
        child = next;
    }
}

// xmlsec writes Base64 (SignatureValue, X509Certificate) in lines of 64 characters. Line breaks are
// insignificant to Base64 readers but not to a signature that covers them: a Response signature over a
// signed Assertion would break under the cookbook's normalisation. They are removed after signing.
static void saml_shim_unwrap_base64(xmlNodePtr node) {
    for (xmlNodePtr child = node->children; child != NULL; child = child->next) {
        if (child->type == XML_TEXT_NODE && child->content != NULL) {
            xmlChar *read = child->content;
            xmlChar *write = child->content;
            for (; *read != 0; ++read) {
                if (*read != '\n' && *read != '\r') {
                    *write++ = *read;
                }
            }
            *write = 0;
        } else if (child->type == XML_ELEMENT_NODE) {
            saml_shim_unwrap_base64(child);
        }
    }
}

void saml_shim_compact_for_transport(xmlNodePtr node) {
    saml_shim_strip_blank_text(node);
    saml_shim_unwrap_base64(node);
}

int saml_shim_sign_element(xmlDocPtr doc, xmlNodePtr element, xmlSecKeyPtr key, int ecdsa) {
    static const char *assertionNs = "urn:oasis:names:tc:SAML:2.0:assertion";
    static const char *metadataNs = "urn:oasis:names:tc:SAML:2.0:metadata";
    xmlAttrPtr id = xmlHasProp(element, (const xmlChar *)"ID");
    xmlNodePtr issuer = saml_shim_child(element, "Issuer", assertionNs);
    // Metadata elements have no Issuer: their schema puts ds:Signature first (SAML Metadata 2.3.1, 2.3.2).
    int metadata = element->ns != NULL && xmlStrEqual(element->ns->href, (const xmlChar *)metadataNs);
    if (id == NULL || id->children == NULL || id->children->content == NULL || (issuer == NULL && !metadata)) {
        return -1;
    }
    const xmlChar *value = id->children->content;
    if (!saml_shim_plain_name(value) || (xmlGetID(doc, value) == NULL && xmlAddID(NULL, doc, value, id) == NULL)) {
        return -1;
    }
    xmlNodePtr signature = xmlSecTmplSignatureCreateNsPref(doc, xmlSecTransformExclC14NId,
        ecdsa ? xmlSecOpenSSLTransformEcdsaSha256Id : xmlSecOpenSSLTransformRsaSha256Id, NULL, (const xmlChar *)"ds");
    if (signature == NULL) {
        return -1;
    }
    xmlNodePtr placed;
    if (issuer != NULL) {
        placed = xmlAddNextSibling(issuer, signature);
    } else if (element->children != NULL) {
        placed = xmlAddPrevSibling(element->children, signature);
    } else {
        placed = xmlAddChild(element, signature);
    }
    if (placed == NULL) {
        xmlFreeNode(signature);
        return -1;
    }
    size_t length = xmlStrlen(value);
    xmlChar *uri = (xmlChar *)malloc(length + 2);
    if (uri == NULL) {
        return -1;
    }
    uri[0] = '#';
    memcpy(uri + 1, value, length + 1);
    xmlNodePtr reference = xmlSecTmplSignatureAddReference(signature, xmlSecOpenSSLTransformSha256Id, NULL, uri, NULL);
    free(uri);
    if (reference == NULL
        || xmlSecTmplReferenceAddTransform(reference, xmlSecTransformEnvelopedId) == NULL
        || xmlSecTmplReferenceAddTransform(reference, xmlSecTransformExclC14NId) == NULL) {
        return -1;
    }
    xmlNodePtr keyInfo = xmlSecTmplSignatureEnsureKeyInfo(signature, NULL);
    if (keyInfo == NULL || xmlSecTmplKeyInfoAddX509Data(keyInfo) == NULL) {
        return -1;
    }
    saml_shim_strip_blank_text(signature);
    xmlSecDSigCtxPtr ctx = xmlSecDSigCtxCreate(NULL);
    if (ctx == NULL) {
        return -1;
    }
    ctx->signKey = xmlSecKeyDuplicate(key);
    ctx->flags |= XMLSEC_DSIG_FLAGS_USE_VISA3D_HACK;  // `#ID` by direct lookup when signing too: never XPointer
    int result = ctx->signKey != NULL && xmlSecDSigCtxSign(ctx, signature) >= 0 ? 0 : -1;
    xmlSecDSigCtxDestroy(ctx);
    if (result == 0) {
        saml_shim_unwrap_base64(signature);
    }
    return result;
}

int saml_shim_sign_root(const char *xml, int length, xmlSecKeyPtr key, unsigned char **output, int *outputLength) {
    *output = NULL;
    *outputLength = 0;
    xmlDocPtr doc = xmlReadMemory(xml, length, NULL, "UTF-8", XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    if (doc == NULL) {
        return -1;
    }
    int ecdsa = xmlSecKeyDataCheckId(xmlSecKeyGetValue(key), xmlSecOpenSSLKeyDataEcdsaId);
    int result = -1;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    if (root != NULL && saml_shim_sign_element(doc, root, key, ecdsa) == 0) {
        xmlChar *buffer = NULL;
        int size = 0;
        xmlDocDumpMemoryEnc(doc, &buffer, &size, "UTF-8");
        if (buffer != NULL) {
            *output = (unsigned char *)buffer;
            *outputLength = size;
            result = 0;
        }
    }
    xmlFreeDoc(doc);
    return result;
}
