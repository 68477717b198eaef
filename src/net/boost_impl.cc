// The one translation unit that compiles Boost.Asio, Asio SSL and Boost.Beast
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are set for every target).
//
// GCC 12 reports false -Wmaybe-uninitialized positives inside Beast's parser when sanitizers
// change inlining; this file holds only library code, so that warning is off here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
