// Clang thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html) under
// abseil's names. clang checks them with -Wthread-safety (cmake/flags.cmake turns it on for
// clang, so CI's clang builds fail on a violation); under GCC every macro expands to nothing.
// Annotate with the types of common/mutex.h: libstdc++'s std::mutex carries no capability
// attributes, so the analysis cannot see it being locked.
#pragma once

#if defined(__clang__)
#define STEWARD_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define STEWARD_THREAD_ANNOTATION(x)
#endif

// On a data member: reads need `x` held shared, writes need it held exclusively.
#define GUARDED_BY(x) STEWARD_THREAD_ANNOTATION(guarded_by(x))
// On a pointer (or smart pointer) member: the pointee is guarded by `x`, the pointer is not.
#define PT_GUARDED_BY(x) STEWARD_THREAD_ANNOTATION(pt_guarded_by(x))

// On a mutex member: the lock-order it must be taken in relative to the named mutexes.
#define ACQUIRED_AFTER(...) STEWARD_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) STEWARD_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))

// On a function: the caller must hold the capabilities (exclusively / at least shared).
#define REQUIRES(...) STEWARD_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) STEWARD_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))

// On a function: it acquires / releases the capabilities (no argument: `this`).
#define ACQUIRE(...) STEWARD_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) STEWARD_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) STEWARD_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) STEWARD_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// A release of a capability held either way.
#define RELEASE_GENERIC(...) STEWARD_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))

// On a function returning bool: it acquires the capability when it returns `__VA_ARGS__`'s
// first argument (true or false).
#define TRY_ACQUIRE(...) STEWARD_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TRY_ACQUIRE_SHARED(...) \
  STEWARD_THREAD_ANNOTATION(try_acquire_shared_capability(__VA_ARGS__))

// On a function: the caller must not hold the capabilities (the function takes them itself).
#define EXCLUDES(...) STEWARD_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

// On a function: it asserts (at run time) that the capability is held; the analysis trusts it.
#define ASSERT_CAPABILITY(x) STEWARD_THREAD_ANNOTATION(assert_capability(x))
#define ASSERT_SHARED_CAPABILITY(x) STEWARD_THREAD_ANNOTATION(assert_shared_capability(x))

// On a function: it returns a reference to the capability `x`.
#define RETURN_CAPABILITY(x) STEWARD_THREAD_ANNOTATION(lock_returned(x))

// On a class: its objects are capabilities (mutexes) / scoped holders of one (lock guards).
#define CAPABILITY(x) STEWARD_THREAD_ANNOTATION(capability(x))
#define LOCKABLE CAPABILITY("mutex")
#define SCOPED_CAPABILITY STEWARD_THREAD_ANNOTATION(scoped_lockable)
#define SCOPED_LOCKABLE SCOPED_CAPABILITY

// On a function: its body is not analysed (its annotations still bind its callers). Say why.
#define NO_THREAD_SAFETY_ANALYSIS STEWARD_THREAD_ANNOTATION(no_thread_safety_analysis)
