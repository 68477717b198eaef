#include "net/tls_certs.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace steward::net {
namespace {

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;

X509Ptr ParseCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return cert;
}

PkeyPtr ParseKey(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return key;
}

// X509_verify_cert of `leaf` against `ca` as the only trust anchor, for TLS server use.
int Verify(X509* leaf, X509* ca) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
  int result = X509_verify_cert(ctx);
  if (result != 1) result = -X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return result;
}

TEST(TlsCertsTest, CaIsASelfSignedCertificateAuthority) {
  auto ca = GenerateCa("steward-ca", 30);
  ASSERT_TRUE(ca.ok()) << ca.error().ToString();
  X509Ptr cert = ParseCert(ca->cert_pem);
  PkeyPtr key = ParseKey(ca->key_pem);
  ASSERT_TRUE(cert && key);
  EXPECT_EQ(X509_check_private_key(cert.get(), key.get()), 1);
  EXPECT_EQ(EVP_PKEY_get_base_id(key.get()), EVP_PKEY_EC);
  EXPECT_EQ(EVP_PKEY_get_bits(key.get()), 256);
  EXPECT_EQ(X509_verify(cert.get(), key.get()), 1);  // self-signed
  EXPECT_GT(X509_check_ca(cert.get()), 0);
  uint32_t usage = X509_get_key_usage(cert.get());
  EXPECT_TRUE(usage & KU_KEY_CERT_SIGN);
  EXPECT_TRUE(usage & KU_CRL_SIGN);
  int crit = 0;
  auto* bc = static_cast<BASIC_CONSTRAINTS*>(
      X509_get_ext_d2i(cert.get(), NID_basic_constraints, &crit, nullptr));
  ASSERT_NE(bc, nullptr);
  EXPECT_TRUE(bc->ca);
  EXPECT_EQ(crit, 1);
  BASIC_CONSTRAINTS_free(bc);
  EXPECT_NE(X509_get0_subject_key_id(cert.get()), nullptr);
  char cn[64] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn, sizeof cn);
  EXPECT_STREQ(cn, "steward-ca");
  // Valid now and for about 30 days.
  EXPECT_LT(X509_cmp_current_time(X509_get0_notBefore(cert.get())), 0);
  EXPECT_GT(X509_cmp_current_time(X509_get0_notAfter(cert.get())), 0);
  int days = 0, secs = 0;
  ASSERT_EQ(ASN1_TIME_diff(&days, &secs, nullptr, X509_get0_notAfter(cert.get())), 1);
  EXPECT_GE(days, 29);
  EXPECT_LE(days, 30);
}

TEST(TlsCertsTest, ServingCertVerifiesAgainstItsCaWithSans) {
  auto ca = GenerateCa("steward-ca");
  ASSERT_TRUE(ca.ok());
  auto serving =
      GenerateServingCert(*ca, "steward", {"localhost", "steward.local"}, {"127.0.0.1", "::1"});
  ASSERT_TRUE(serving.ok()) << serving.error().ToString();
  X509Ptr ca_cert = ParseCert(ca->cert_pem);
  X509Ptr cert = ParseCert(serving->cert_pem);
  PkeyPtr key = ParseKey(serving->key_pem);
  ASSERT_TRUE(ca_cert && cert && key);
  EXPECT_EQ(X509_check_private_key(cert.get(), key.get()), 1);
  EXPECT_EQ(Verify(cert.get(), ca_cert.get()), 1);

  EXPECT_EQ(X509_check_host(cert.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(cert.get(), "steward.local", 0, 0, nullptr), 1);
  EXPECT_NE(X509_check_host(cert.get(), "other.example", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(cert.get(), "::1", 0), 1);
  EXPECT_NE(X509_check_ip_asc(cert.get(), "10.0.0.1", 0), 1);

  EXPECT_EQ(X509_check_ca(cert.get()), 0);
  EXPECT_TRUE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER);
  uint32_t usage = X509_get_key_usage(cert.get());
  EXPECT_TRUE(usage & KU_DIGITAL_SIGNATURE);
  EXPECT_TRUE(usage & KU_KEY_ENCIPHERMENT);
  EXPECT_FALSE(usage & KU_KEY_CERT_SIGN);
  // The authority key identifier names the CA's key.
  const ASN1_OCTET_STRING* akid = X509_get0_authority_key_id(cert.get());
  const ASN1_OCTET_STRING* skid = X509_get0_subject_key_id(ca_cert.get());
  ASSERT_TRUE(akid && skid);
  EXPECT_EQ(ASN1_OCTET_STRING_cmp(akid, skid), 0);
}

TEST(TlsCertsTest, ServingCertFailsAgainstAnotherCa) {
  auto ca = GenerateCa("ca-one");
  auto other = GenerateCa("ca-two");
  ASSERT_TRUE(ca.ok() && other.ok());
  auto serving = GenerateServingCert(*ca, "steward", {"localhost"}, {});
  ASSERT_TRUE(serving.ok());
  X509Ptr cert = ParseCert(serving->cert_pem);
  X509Ptr other_cert = ParseCert(other->cert_pem);
  EXPECT_EQ(Verify(cert.get(), other_cert.get()), -X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
}

TEST(TlsCertsTest, SerialsAreRandom) {
  auto ca = GenerateCa("ca");
  ASSERT_TRUE(ca.ok());
  auto a = GenerateServingCert(*ca, "a", {"a"}, {});
  auto b = GenerateServingCert(*ca, "a", {"a"}, {});
  ASSERT_TRUE(a.ok() && b.ok());
  X509Ptr ca_cert = ParseCert(a->cert_pem);
  X509Ptr cb = ParseCert(b->cert_pem);
  EXPECT_NE(
      ASN1_INTEGER_cmp(X509_get0_serialNumber(ca_cert.get()), X509_get0_serialNumber(cb.get())), 0);
  EXPECT_NE(a->key_pem, b->key_pem);
}

TEST(TlsCertsTest, RejectsBadInput) {
  auto ca = GenerateCa("ca");
  auto other = GenerateCa("other");
  ASSERT_TRUE(ca.ok() && other.ok());
  auto bad_ip = GenerateServingCert(*ca, "x", {}, {"not-an-ip"});
  ASSERT_FALSE(bad_ip.ok());
  EXPECT_EQ(bad_ip.error().code(), StatusCode::kInvalidArgument);

  CertAndKey mismatched{ca->cert_pem, other->key_pem};
  auto wrong_key = GenerateServingCert(mismatched, "x", {"x"}, {});
  ASSERT_FALSE(wrong_key.ok());
  EXPECT_EQ(wrong_key.error().code(), StatusCode::kInvalidArgument);

  auto garbage = GenerateServingCert(CertAndKey{"garbage", "garbage"}, "x", {"x"}, {});
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace steward::net
