// What a build of swift-saml was made from: the commit, when the build was given it
// (SAML_BUILD_COMMIT=<hash> in the build's environment, as scripts/ci/release and the Dockerfile set it), else
// "unknown".
#ifndef CSAML_BUILD_INFO_H
#define CSAML_BUILD_INFO_H

const char *saml_build_commit(void);

#endif
