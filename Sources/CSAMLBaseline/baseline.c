#include "CSAMLBaseline.h"

#include <stdlib.h>
#include <string.h>
// The project's one view of the C libraries, with pkg-config's dropped defines restated.
#include "CSAMLShim.h"
#include <xmlsec/base64.h>

struct saml_baseline {
    xmlSecKeyPtr key;
};

static const xmlChar samlNs[] = "urn:oasis:names:tc:SAML:2.0:assertion";
saml_baseline *saml_baseline_create(const unsigned char *pem, size_t length) {
    xmlSecKeyPtr withCertificate = xmlSecOpenSSLAppKeyLoadMemory(pem, (xmlSecSize)length, xmlSecKeyDataFormatCertPem, NULL, NULL, NULL);
    if (withCertificate == NULL) {
        return NULL;
    }
    xmlSecKeyPtr bare = xmlSecKeyCreate();
    xmlSecKeyDataPtr value = xmlSecKeyDataDuplicate(xmlSecKeyGetValue(withCertificate));
    xmlSecKeyDestroy(withCertificate);
    if (bare == NULL || value == NULL || xmlSecKeySetValue(bare, value) < 0) {
        return NULL;
    }
    saml_baseline *baseline = malloc(sizeof(saml_baseline));
    baseline->key = bare;
    return baseline;
}

void saml_baseline_destroy(saml_baseline *baseline) {
    if (baseline != NULL) {
        xmlSecKeyDestroy(baseline->key);
        free(baseline);
    }
}

static xmlNodePtr child(xmlNodePtr parent, const char *name, const xmlChar *ns) {
    return xmlSecFindChild(parent, (const xmlChar *)name, ns);
}

/// Registers `element`'s ID and verifies its direct ds:Signature child, if it has one.
/// Returns 1 when there is no signature, 2 when it verifies, 0 when it does not.
static int verify_signature_of(const saml_baseline *baseline, xmlDocPtr doc, xmlNodePtr element) {
    xmlNodePtr signature = child(element, "Signature", xmlSecDSigNs);
    if (signature == NULL) {
        return 1;
    }
    xmlAttrPtr id = xmlHasProp(element, (const xmlChar *)"ID");
    if (id == NULL) {
        return 0;
    }
    xmlChar *value = xmlNodeListGetString(doc, id->children, 1);
    xmlAddID(NULL, doc, value, id);
    xmlFree(value);
    xmlSecDSigCtxPtr ctx = xmlSecDSigCtxCreate(NULL);
    if (ctx == NULL) {
        return 0;
    }
    ctx->signKey = xmlSecKeyDuplicate(baseline->key);
    int ok = xmlSecDSigCtxVerify(ctx, signature) >= 0 && ctx->status == xmlSecDSigStatusSucceeded;
    xmlSecDSigCtxDestroy(ctx);
    return ok ? 2 : 0;
}

int saml_baseline_verify(const saml_baseline *baseline, const char *base64, size_t length) {
    int result = -1;
    char *text = malloc(length + 1);
    if (text == NULL) {
        return -1;
    }
    memcpy(text, base64, length);
    text[length] = 0;
    xmlSecSize decoded = 0;
    int status = xmlSecBase64Decode_ex((const xmlChar *)text, (xmlSecByte *)text, (xmlSecSize)length, &decoded);
    xmlDocPtr doc = status >= 0 && decoded > 0 ? xmlReadMemory(text, (int)decoded, NULL, NULL, XML_PARSE_NONET) : NULL;
    free(text);
    if (doc == NULL) {
        return -1;
    }
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlNodePtr assertion = root != NULL ? child(root, "Assertion", samlNs) : NULL;
    if (assertion == NULL) {
        goto done;
    }
    // Every signature present must verify, and at least one must be there.
    int onResponse = verify_signature_of(baseline, doc, root);
    int onAssertion = verify_signature_of(baseline, doc, assertion);
    if (onResponse == 0 || onAssertion == 0 || (onResponse == 1 && onAssertion == 1)) {
        goto done;
    }
    xmlNodePtr subject = child(assertion, "Subject", samlNs);
    xmlNodePtr nameID = subject != NULL ? child(subject, "NameID", samlNs) : NULL;
    if (nameID == NULL) {
        goto done;
    }
    xmlChar *name = xmlNodeGetContent(nameID);
    xmlFree(name);
    result = 0;
    xmlNodePtr statement = child(assertion, "AttributeStatement", samlNs);
    for (xmlNodePtr attribute = statement != NULL ? statement->children : NULL; attribute != NULL; attribute = attribute->next) {
        for (xmlNodePtr v = attribute->children; v != NULL; v = v->next) {
            if (v->type == XML_ELEMENT_NODE) {
                xmlChar *content = xmlNodeGetContent(v);
                xmlFree(content);
                result += 1;
            }
        }
    }
done:
    xmlFreeDoc(doc);
    return result;
}
