#include "CSAMLBuildInfo.h"

const char *saml_build_commit(void) {
#ifdef SAML_BUILD_COMMIT
    return SAML_BUILD_COMMIT;
#else
    return "unknown";
#endif
}
