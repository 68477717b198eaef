# The one place for compiler flags. Every target gets them through steward_flags.
add_library(steward_flags INTERFACE)
target_compile_features(steward_flags INTERFACE cxx_std_20)
target_compile_options(steward_flags INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-qual -Wno-missing-field-initializers
  $<$<BOOL:${STEWARD_WERROR}>:-Werror>)
# clang checks the thread-safety annotations (common/thread_annotations.h, common/mutex.h): a
# GUARDED_BY member touched without its lock fails every clang build (CI's ASan+UBSan build,
# scripts/fuzz.sh) under STEWARD_WERROR. GCC has no such analysis; the macros are empty there.
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(steward_flags INTERFACE -Wthread-safety -Wthread-safety-beta)
endif()
# Boost.Asio/Beast are compiled once (src/net/boost_impl.cc), not in every translation unit.
target_compile_definitions(steward_flags INTERFACE
  BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION BOOST_ASIO_NO_DEPRECATED
  BOOST_BEAST_USE_STD_STRING_VIEW)

set(STEWARD_SANITIZE "" CACHE STRING "Sanitizers: '' | address,undefined | thread")
# The libFuzzer build (STEWARD_FUZZ, fuzz/) needs a sanitizer: ASan+UBSan unless one is chosen.
set(steward_sanitize "${STEWARD_SANITIZE}")
if(STEWARD_FUZZ AND NOT steward_sanitize)
  set(steward_sanitize address,undefined)
endif()
if(steward_sanitize)
  target_compile_options(steward_flags INTERFACE -fsanitize=${steward_sanitize}
    -fno-omit-frame-pointer -fno-sanitize-recover=all)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    if(steward_sanitize STREQUAL "thread")
      # GCC 12 warns that TSan does not model atomic_thread_fence (used inside Asio).
      target_compile_options(steward_flags INTERFACE -Wno-tsan)
    endif()
    # GCC 12 reports maybe-uninitialized false positives inside libstdc++ (std::regex,
    # std::function) once sanitizer instrumentation is on; the release build keeps the warning.
    target_compile_options(steward_flags INTERFACE -Wno-maybe-uninitialized)
  endif()
  target_link_options(steward_flags INTERFACE -fsanitize=${steward_sanitize})
endif()

# STEWARD_FUZZ: every target gets libFuzzer's coverage instrumentation (so the libraries, tests
# and fuzzers share one build); only the fuzzer executables link libFuzzer itself
# (-fsanitize=fuzzer in fuzz/CMakeLists.txt).
if(STEWARD_FUZZ)
  target_compile_options(steward_flags INTERFACE -fsanitize=fuzzer-no-link)
endif()

# steward_library(NAME SRCS ... DEPS ...): a module library with its sources.
function(steward_library name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SRCS} ${PROJECT_SOURCE_DIR}/cmake/empty.cc)
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC steward_flags ${A_DEPS})
endfunction()

# steward_test(NAME SRCS ... DEPS ... [LABELS ...]): a GoogleTest binary registered with CTest.
function(steward_test name)
  cmake_parse_arguments(A "" "" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${A_SRCS})
  target_link_libraries(${name} PRIVATE steward_flags ${A_DEPS} GTest::gmock GTest::gtest_main)
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  if(A_LABELS STREQUAL "torture")
    # Torture runs start the steward binary and take minutes, mostly waiting: a high COST makes
    # ctest start them first, so they overlap the CPU-bound tests instead of trailing them.
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${A_LABELS}"
      ENVIRONMENT "STEWARD_BINARY=$<TARGET_FILE:steward>" COST 100000 TIMEOUT 1500)
  elseif(A_LABELS STREQUAL "e2e")
    # End-to-end tests start the steward binary.
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${A_LABELS}"
      ENVIRONMENT "STEWARD_BINARY=$<TARGET_FILE:steward>")
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${A_LABELS}")
  endif()
endfunction()

# steward_module(NAME DIR DEPS ... TEST_DEPS ... [TEST_LABELS ...]): a library from every .cc in
# DIR except *_test.cc, and (with tests on) one test binary NAME_test from the *_test.cc files.
function(steward_module name)
  cmake_parse_arguments(A "" "DIR" "DEPS;TEST_DEPS;TEST_LABELS" ${ARGN})
  file(GLOB all_srcs CONFIGURE_DEPENDS ${A_DIR}/*.cc)
  file(GLOB test_srcs CONFIGURE_DEPENDS ${A_DIR}/*_test.cc)
  set(srcs ${all_srcs})
  if(test_srcs)
    list(REMOVE_ITEM srcs ${test_srcs})
  endif()
  if(NOT srcs)
    message(WARNING "steward_module(${name}): no sources in ${A_DIR} yet; skipped")
    return()
  endif()
  steward_library(${name} SRCS ${srcs} DEPS ${A_DEPS})
  if(STEWARD_TESTS AND test_srcs)
    steward_test(${name}_test SRCS ${test_srcs} DEPS ${name} ${A_TEST_DEPS} LABELS ${A_TEST_LABELS})
  endif()
endfunction()

# steward_forbid_deps(TARGET PATTERN...): fails the configure step when TARGET links, directly or
# through its dependencies, a library whose name matches one of the regular expressions. This is
# how the build graph keeps docs/design.md §2's one-way dependencies (say, the API never linking
# Kubernetes): a new dependency that breaks them is an error, not a reviewer's catch.
function(_steward_collect_deps target out)
  set(seen ${${out}})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  else()
    get_target_property(deps ${target} LINK_LIBRARIES)
  endif()
  foreach(dep IN LISTS deps)
    if(TARGET ${dep} AND NOT dep IN_LIST seen)
      list(APPEND seen ${dep})
      _steward_collect_deps(${dep} seen)
    endif()
  endforeach()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(steward_forbid_deps target)
  set(all "")
  _steward_collect_deps(${target} all)
  foreach(pattern IN LISTS ARGN)
    foreach(dep IN LISTS all)
      if(dep MATCHES "${pattern}")
        message(FATAL_ERROR "${target} must not depend on ${dep} (docs/design.md §2); it does")
      endif()
    endforeach()
  endforeach()
endfunction()
