#include "CSAMLExecutor.h"

#include <stddef.h>

// libswift_Concurrency's hook (ConcurrencyHooks.def): a Swift-convention function taking the job and the
// runtime's own enqueue, which this hook does not call.
typedef __attribute__((swiftcall)) void (*saml_enqueue_global_hook)(void *job, void *original);
extern saml_enqueue_global_hook swift_task_enqueueGlobal_hook;

static saml_executor_enqueue saml_enqueue;

static __attribute__((swiftcall)) void saml_enqueue_global(void *job, void *original) {
    (void)original;
    saml_enqueue(job);
}

int saml_executor_install(saml_executor_enqueue enqueue) {
    saml_enqueue = enqueue;
    saml_enqueue_global_hook expected = NULL;
    return __atomic_compare_exchange_n(&swift_task_enqueueGlobal_hook, &expected, saml_enqueue_global, 0, __ATOMIC_SEQ_CST,
                                       __ATOMIC_SEQ_CST)
               ? 0
               : -1;
}
