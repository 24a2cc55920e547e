// Swift concurrency's global executor hook, reached through the linker.
//
// SwiftNIO's NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
// finds the runtime's hook variable with dlsym, which a binary linked with --static-swift-stdlib (the
// container's, docs/deploy.md) cannot answer: the static link passes --exclude-libs ALL, so the variable is
// not in the binary's dynamic symbol table, and NIO's call returns false. A reference from C code resolves
// at link time in both kinds of build (the variable is global in libswift_Concurrency.so and .a).
#ifndef CSAML_EXECUTOR_H
#define CSAML_EXECUTOR_H

/// Where a global job goes: `job` is the runtime's Job, as Swift's UnownedJob holds it.
typedef void (*saml_executor_enqueue)(void *_Nonnull job);

/// Installs `enqueue` as Swift concurrency's global executor (every job the runtime would give its own
/// pool). Returns 0, or -1 when a hook is already installed (nothing is changed then). Call once, before
/// the first task runs.
int saml_executor_install(saml_executor_enqueue _Nonnull enqueue);

#endif
