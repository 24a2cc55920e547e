// Carries libxml2's link flag and pkg-config include path into the build.
// Declarations are imported only through CSAMLShim, so that every C header the Swift code sees is
// compiled once, with the xmlsec defines that SwiftPM drops restated (see CSAMLShim.h).
#include <libxml/xmlversion.h>
