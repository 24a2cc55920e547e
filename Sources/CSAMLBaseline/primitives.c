#include "CSAMLPrimitives.h"

#include <stdlib.h>
#include <string.h>
#include "CSAMLShim.h"
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <xmlsec/base64.h>

enum { SAML_PRIMITIVES_MAX_DEPTH = 8 };

struct saml_primitives {
    /// The signed element, as child indexes (elements only) from the root: followed, not searched.
    int path[SAML_PRIMITIVES_MAX_DEPTH];
    int depth;
    unsigned char digest[32];
    unsigned char *signedInfo;
    size_t signedInfoLength;
    unsigned char *signatureValue;
    size_t signatureLength;
    EVP_PKEY *key;
    EVP_MD *sha256;
};

typedef struct {
    xmlNodePtr element;
    xmlNodePtr excluded;
} saml_primitives_subtree;

static int saml_primitives_is_within(xmlNodePtr node, xmlNodePtr ancestor) {
    for (; node != NULL; node = node->parent) {
        if (node == ancestor) {
            return 1;
        }
    }
    return 0;
}

/// Visible: the nodes of the signed element's subtree (its namespaces and attributes included), but the
/// enveloped signature's: the enveloped-signature transform, then exclusive C14N.
static int saml_primitives_visible(void *data, xmlNodePtr node, xmlNodePtr parent) {
    const saml_primitives_subtree *subtree = data;
    xmlNodePtr at = (node != NULL && node->type != XML_NAMESPACE_DECL) ? node : parent;
    return saml_primitives_is_within(at, subtree->element) && !saml_primitives_is_within(at, subtree->excluded);
}

static int saml_primitives_write(void *context, const char *buffer, int length) {
    xmlBufferPtr out = context;
    return xmlBufferAdd(out, (const xmlChar *)buffer, length) == 0 ? length : -1;
}

/// Exclusive C14N 1.0 without comments of `element`'s subtree minus `excluded`'s, into `out`.
static int saml_primitives_c14n(xmlDocPtr doc, xmlNodePtr element, xmlNodePtr excluded, xmlBufferPtr out) {
    saml_primitives_subtree subtree = { .element = element, .excluded = excluded };
    xmlOutputBufferPtr buffer = xmlOutputBufferCreateIO(saml_primitives_write, NULL, out, NULL);
    if (buffer == NULL) {
        return -1;
    }
    int written = xmlC14NExecute(doc, saml_primitives_visible, &subtree, XML_C14N_EXCLUSIVE_1_0, NULL, 0, buffer);
    return xmlOutputBufferClose(buffer) < 0 ? -1 : written;
}

static xmlNodePtr saml_primitives_element_child(xmlNodePtr parent, int index) {
    int seen = 0;
    for (xmlNodePtr child = parent->children; child != NULL; child = child->next) {
        if (child->type == XML_ELEMENT_NODE && seen++ == index) {
            return child;
        }
    }
    return NULL;
}

static xmlNodePtr saml_primitives_find(xmlNodePtr node, const char *name) {
    for (; node != NULL; node = node->next) {
        if (node->type != XML_ELEMENT_NODE) {
            continue;
        }
        if (xmlStrEqual(node->name, (const xmlChar *)name) && node->ns != NULL && xmlStrEqual(node->ns->href, xmlSecDSigNs)) {
            return node;
        }
        xmlNodePtr found = saml_primitives_find(node->children, name);
        if (found != NULL) {
            return found;
        }
    }
    return NULL;
}

/// Base64 text of `node` decoded into a new buffer.
static unsigned char *saml_primitives_base64(xmlNodePtr node, size_t *length) {
    xmlChar *text = node != NULL ? xmlNodeGetContent(node) : NULL;
    if (text == NULL) {
        return NULL;
    }
    xmlSecSize size = (xmlSecSize)xmlStrlen(text);
    unsigned char *out = malloc(size + 1);
    xmlSecSize decoded = 0;
    if (out == NULL || xmlSecBase64Decode_ex(text, out, size + 1, &decoded) < 0) {
        free(out);
        out = NULL;
    }
    xmlFree(text);
    *length = decoded;
    return out;
}

long saml_primitives_run(const saml_primitives *p, const char *xml, size_t length) {
    xmlDocPtr doc = xmlReadMemory(xml, (int)length, NULL, NULL, XML_PARSE_NONET);
    if (doc == NULL) {
        return -1;
    }
    long result = -1;
    xmlBufferPtr canonical = xmlBufferCreateSize(length);
    xmlNodePtr element = xmlDocGetRootElement(doc);
    for (int i = 0; i < p->depth && element != NULL; ++i) {
        element = saml_primitives_element_child(element, p->path[i]);
    }
    // The enveloped signature: the signed element's ds:Signature child.
    xmlNodePtr signature = element != NULL ? xmlSecFindChild(element, xmlSecNodeSignature, xmlSecDSigNs) : NULL;
    unsigned char digest[32];
    unsigned int digestLength = 0;
    EVP_MD_CTX *verify = EVP_MD_CTX_new();
    if (canonical == NULL || signature == NULL || verify == NULL || saml_primitives_c14n(doc, element, signature, canonical) <= 0) {
        goto done;
    }
    if (EVP_Digest(xmlBufferContent(canonical), (size_t)xmlBufferLength(canonical), digest, &digestLength, p->sha256, NULL) != 1
        || digestLength != 32 || memcmp(digest, p->digest, 32) != 0) {
        goto done;
    }
    if (EVP_DigestVerifyInit(verify, NULL, p->sha256, NULL, p->key) == 1
        && EVP_DigestVerify(verify, p->signatureValue, p->signatureLength, p->signedInfo, p->signedInfoLength) == 1) {
        result = xmlBufferLength(canonical);
    }
done:
    EVP_MD_CTX_free(verify);
    if (canonical != NULL) {
        xmlBufferFree(canonical);
    }
    xmlFreeDoc(doc);
    return result;
}

void saml_primitives_destroy(saml_primitives *p) {
    if (p == NULL) {
        return;
    }
    free(p->signedInfo);
    free(p->signatureValue);
    EVP_PKEY_free(p->key);
    EVP_MD_free(p->sha256);
    free(p);
}

saml_primitives *saml_primitives_create(const unsigned char *pem, size_t pemLength, const char *xml, size_t length) {
    saml_primitives *p = calloc(1, sizeof(saml_primitives));
    xmlDocPtr doc = xmlReadMemory(xml, (int)length, NULL, NULL, XML_PARSE_NONET);
    BIO *bio = BIO_new_mem_buf(pem, (int)pemLength);
    X509 *certificate = bio != NULL ? PEM_read_bio_X509(bio, NULL, NULL, NULL) : NULL;
    BIO_free(bio);
    xmlBufferPtr signedInfo = xmlBufferCreate();
    int ok = 0;
    if (p == NULL || doc == NULL || certificate == NULL || signedInfo == NULL) {
        goto done;
    }
    p->key = X509_get_pubkey(certificate);
    p->sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
    xmlNodePtr root = xmlDocGetRootElement(doc);
    // The assertion's signature when there is one, else the first (the response's).
    xmlNodePtr signature = NULL;
    for (xmlNodePtr child = root != NULL ? root->children : NULL; child != NULL && signature == NULL; child = child->next) {
        if (child->type == XML_ELEMENT_NODE && xmlStrEqual(child->name, (const xmlChar *)"Assertion")) {
            signature = xmlSecFindChild(child, xmlSecNodeSignature, xmlSecDSigNs);
        }
    }
    if (signature == NULL) {
        signature = saml_primitives_find(root, "Signature");
    }
    xmlNodePtr info = signature != NULL ? xmlSecFindChild(signature, xmlSecNodeSignedInfo, xmlSecDSigNs) : NULL;
    xmlNodePtr method = info != NULL ? xmlSecFindChild(info, xmlSecNodeSignatureMethod, xmlSecDSigNs) : NULL;
    xmlChar *algorithm = method != NULL ? xmlGetProp(method, (const xmlChar *)"Algorithm") : NULL;
    int rsaSHA256 = algorithm != NULL && xmlStrEqual(algorithm, (const xmlChar *)"http://www.w3.org/2001/04/xmldsig-more#rsa-sha256");
    xmlFree(algorithm);
    if (p->key == NULL || p->sha256 == NULL || info == NULL || !rsaSHA256) {
        goto done;
    }
    // The signed element's path from the root.
    xmlNodePtr element = signature->parent;
    int indexes[SAML_PRIMITIVES_MAX_DEPTH];
    int depth = 0;
    for (xmlNodePtr node = element; node != root; node = node->parent) {
        if (node == NULL || node->type != XML_ELEMENT_NODE || depth == SAML_PRIMITIVES_MAX_DEPTH) {
            goto done;
        }
        int index = 0;
        for (xmlNodePtr sibling = node->prev; sibling != NULL; sibling = sibling->prev) {
            index += sibling->type == XML_ELEMENT_NODE;
        }
        indexes[depth++] = index;
    }
    for (int i = 0; i < depth; ++i) {
        p->path[i] = indexes[depth - 1 - i];
    }
    p->depth = depth;
    if (saml_primitives_c14n(doc, info, NULL, signedInfo) <= 0) {
        goto done;
    }
    p->signedInfoLength = (size_t)xmlBufferLength(signedInfo);
    p->signedInfo = malloc(p->signedInfoLength);
    if (p->signedInfo == NULL) {
        goto done;
    }
    memcpy(p->signedInfo, xmlBufferContent(signedInfo), p->signedInfoLength);
    p->signatureValue = saml_primitives_base64(xmlSecFindChild(signature, xmlSecNodeSignatureValue, xmlSecDSigNs), &p->signatureLength);
    xmlNodePtr reference = xmlSecFindChild(info, xmlSecNodeReference, xmlSecDSigNs);
    size_t digestLength = 0;
    unsigned char *digest = saml_primitives_base64(
        reference != NULL ? xmlSecFindChild(reference, xmlSecNodeDigestValue, xmlSecDSigNs) : NULL, &digestLength);
    if (digest != NULL && digestLength == 32) {
        memcpy(p->digest, digest, 32);
        ok = p->signatureValue != NULL;
    }
    free(digest);
done:
    X509_free(certificate);
    if (signedInfo != NULL) {
        xmlBufferFree(signedInfo);
    }
    xmlFreeDoc(doc);
    if (ok && saml_primitives_run(p, xml, length) > 0) {
        return p;
    }
    saml_primitives_destroy(p);
    return NULL;
}
