// Allocation-failure injection for libxml2, libxmlsec1 and OpenSSL: the test executable
// SAMLFaultInjection installs counting allocators, then makes the Nth allocation of a verification fail,
// for every N. Test code only; nothing in the library links it.
#ifndef CSAMLFAULTINJECTION_H
#define CSAMLFAULTINJECTION_H

/// Routes libxml2's (and so xmlsec's) and OpenSSL's allocations through counting wrappers. Must run before
/// anything allocates through OpenSSL (CRYPTO_set_mem_functions refuses afterwards): returns 0 when both
/// were installed, -1 when OpenSSL refused.
int saml_fault_install(void);

/// Makes the `n`th allocation from now fail (and every later one succeed), or the first one after it that
/// is not made inside libxml2's parser; 0 disarms. Resets the count.
void saml_fault_arm(long n);

/// Silences libxml2's generic error output on this thread (thousands of "Memory allocation failed").
void saml_fault_silence_libxml2(void);

/// Allocations counted since the last `saml_fault_arm`.
long saml_fault_allocations(void);

/// Whether the armed failure has happened since the last `saml_fault_arm`.
int saml_fault_fired(void);

/// How many allocations made inside libxml2's parser were spared since the last `saml_fault_arm` (the
/// parser of libxml2 2.9.14 does not survive its own allocation failures; see fault_injection.c).
long saml_fault_spared(void);

#endif
