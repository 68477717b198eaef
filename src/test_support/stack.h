// Test support: run a function on a thread with a stack of a given size, to show that recursive
// code on the deepest accepted input fits the stack a server thread has (8 MiB by default on
// Linux; frames under AddressSanitizer are several times larger, so the sanitizer builds running
// the same tests are the real check). Header-only; for tests only.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <functional>

namespace steward::test_support {

// The stack a thread gets by default (ulimit -s 8192): what the server's threads run on.
inline constexpr size_t kDefaultThreadStack = 8 * 1024 * 1024;

// Runs `fn` on a new thread with a `stack_bytes` stack and waits for it. Returns false if the
// thread could not be started. A stack overflow in `fn` crashes the test binary (the failure).
inline bool RunWithStack(size_t stack_bytes, const std::function<void()>& fn) {
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0) return false;
  bool ok = pthread_attr_setstacksize(&attr, stack_bytes) == 0;
  pthread_t thread;
  auto trampoline = [](void* arg) -> void* {
    (*static_cast<const std::function<void()>*>(arg))();
    return nullptr;
  };
  ok = ok &&
       pthread_create(&thread, &attr, trampoline, const_cast<std::function<void()>*>(&fn)) == 0;
  pthread_attr_destroy(&attr);
  if (!ok) return false;
  return pthread_join(thread, nullptr) == 0;
}

}  // namespace steward::test_support
