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

int saml_baseline_verify(const saml_baseline *baseline, const char *base64, size_t length) {
    int result = -1;
    char *text = malloc(length + 1);
    memcpy(text, base64, length);
    text[length] = 0;
    int decoded = xmlSecBase64Decode((const xmlChar *)text, (xmlSecByte *)text, (xmlSecSize)length);
    xmlDocPtr doc = decoded > 0 ? xmlReadMemory(text, decoded, NULL, NULL, XML_PARSE_NONET) : NULL;
    free(text);
    if (doc == NULL) {
        return -1;
    }
    xmlSecDSigCtxPtr ctx = NULL;
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlNodePtr assertion = root != NULL ? child(root, "Assertion", samlNs) : NULL;
    xmlAttrPtr id = assertion != NULL ? xmlHasProp(assertion, (const xmlChar *)"ID") : NULL;
    xmlNodePtr signature = assertion != NULL ? child(assertion, "Signature", xmlSecDSigNs) : NULL;
    if (id == NULL || signature == NULL) {
        goto done;
    }
    xmlChar *value = xmlNodeListGetString(doc, id->children, 1);
    xmlAddID(NULL, doc, value, id);
    xmlFree(value);
    ctx = xmlSecDSigCtxCreate(NULL);
    ctx->signKey = xmlSecKeyDuplicate(baseline->key);
    if (xmlSecDSigCtxVerify(ctx, signature) < 0 || ctx->status != xmlSecDSigStatusSucceeded) {
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
    if (ctx != NULL) {
        xmlSecDSigCtxDestroy(ctx);
    }
    xmlFreeDoc(doc);
    return result;
}
