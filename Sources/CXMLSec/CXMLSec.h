// Carries libxmlsec1-openssl's link flags and pkg-config include paths into the build.
// It deliberately includes no xmlsec header: without the -D flags of `pkg-config --cflags xmlsec1-openssl`
// (which SwiftPM drops) those headers describe structs of the wrong size. Import CSAMLShim instead.
