#include "net/tls_certs.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

namespace steward::net {
namespace {

template <auto Fn>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Fn(p);
  }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using NamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;

// The OpenSSL error queue as text, cleared.
std::string OpenSslError(std::string_view what) {
  std::string out(what);
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += ": ";
    out += buf;
  }
  return out;
}

StatusOr<PkeyPtr> NewKey() {
  PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return Internal(OpenSslError("generating an EC P-256 key"));
  return key;
}

Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  ExtPtr ext(X509V3_EXT_nconf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return Internal(OpenSslError(std::string("adding extension ") + OBJ_nid2sn(nid)));
  }
  return Status::Ok();
}

// A certificate with a random positive serial, the validity window, `subject_cn` and `key`.
StatusOr<X509Ptr> NewCert(const std::string& common_name, EVP_PKEY* key, int days) {
  if (days <= 0) return InvalidArgument("certificate validity must be positive");
  X509Ptr cert(X509_new());
  BnPtr serial(BN_new());
  if (!cert || !serial) return Internal(OpenSslError("allocating a certificate"));
  // 159 random bits: positive and within the 20 octets RFC 5280 allows.
  if (X509_set_version(cert.get(), X509_VERSION_3) != 1 ||
      BN_rand(serial.get(), 159, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return Internal(OpenSslError("setting the serial number"));
  }
  // Back-dated a little so that peers with a slightly late clock accept it at once.
  if (X509_gmtime_adj(X509_getm_notBefore(cert.get()), -5 * 60) == nullptr ||
      X509_time_adj_ex(X509_getm_notAfter(cert.get()), days, 0, nullptr) == nullptr) {
    return Internal(OpenSslError("setting the validity"));
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                                 -1, 0) != 1) {
    return Internal(OpenSslError("setting the subject"));
  }
  if (X509_set_pubkey(cert.get(), key) != 1) return Internal(OpenSslError("setting the key"));
  return cert;
}

StatusOr<CertAndKey> ToPem(X509* cert, EVP_PKEY* key) {
  CertAndKey out;
  for (int i = 0; i < 2; ++i) {
    BioPtr bio(BIO_new(BIO_s_mem()));
    if (!bio) return Internal(OpenSslError("allocating a BIO"));
    int ok = i == 0
                 ? PEM_write_bio_X509(bio.get(), cert)
                 : PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
    if (ok != 1) return Internal(OpenSslError("writing PEM"));
    char* data = nullptr;
    long len = BIO_get_mem_data(bio.get(), &data);
    (i == 0 ? out.cert_pem : out.key_pem).assign(data, static_cast<size_t>(len));
  }
  return out;
}

Status Sign(X509* cert, EVP_PKEY* key) {
  if (X509_sign(cert, key, EVP_sha256()) <= 0) return Internal(OpenSslError("signing"));
  return Status::Ok();
}

}  // namespace

StatusOr<CertAndKey> GenerateCa(const std::string& common_name, int days) {
  ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  ASSIGN_OR_RETURN(X509Ptr cert, NewCert(common_name, key.get(), days));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get())) != 1) {
    return Internal(OpenSslError("setting the issuer"));
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(Sign(cert.get(), key.get()));
  return ToPem(cert.get(), key.get());
}

StatusOr<CertAndKey> GenerateServingCert(const CertAndKey& ca, const std::string& common_name,
                                         const std::vector<std::string>& dns_names,
                                         const std::vector<std::string>& ip_addresses, int days) {
  BioPtr cert_bio(BIO_new_mem_buf(ca.cert_pem.data(), static_cast<int>(ca.cert_pem.size())));
  BioPtr key_bio(BIO_new_mem_buf(ca.key_pem.data(), static_cast<int>(ca.key_pem.size())));
  if (!cert_bio || !key_bio) return Internal(OpenSslError("allocating a BIO"));
  X509Ptr ca_cert(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!ca_cert) return InvalidArgument(OpenSslError("parsing the CA certificate"));
  PkeyPtr ca_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca_key) return InvalidArgument(OpenSslError("parsing the CA key"));
  if (X509_check_private_key(ca_cert.get(), ca_key.get()) != 1) {
    return InvalidArgument(OpenSslError("the CA key does not match the CA certificate"));
  }

  NamesPtr names(sk_GENERAL_NAME_new_null());
  if (!names) return Internal(OpenSslError("allocating names"));
  for (const std::string& dns : dns_names) {
    if (dns.empty()) return InvalidArgument("empty DNS name");
    GENERAL_NAME* gn = GENERAL_NAME_new();
    ASN1_IA5STRING* ia5 = ASN1_IA5STRING_new();
    if (gn == nullptr || ia5 == nullptr ||
        ASN1_STRING_set(ia5, dns.data(), static_cast<int>(dns.size())) != 1) {
      GENERAL_NAME_free(gn);
      ASN1_IA5STRING_free(ia5);
      return Internal(OpenSslError("building a DNS name"));
    }
    GENERAL_NAME_set0_value(gn, GEN_DNS, ia5);
    if (sk_GENERAL_NAME_push(names.get(), gn) == 0) {
      GENERAL_NAME_free(gn);
      return Internal(OpenSslError("building names"));
    }
  }
  for (const std::string& ip : ip_addresses) {
    ASN1_OCTET_STRING* octets = a2i_IPADDRESS(ip.c_str());
    if (octets == nullptr) {
      ERR_clear_error();
      return InvalidArgument("not an IP address: " + ip);
    }
    GENERAL_NAME* gn = GENERAL_NAME_new();
    if (gn == nullptr) {
      ASN1_OCTET_STRING_free(octets);
      return Internal(OpenSslError("building an IP name"));
    }
    GENERAL_NAME_set0_value(gn, GEN_IPADD, octets);
    if (sk_GENERAL_NAME_push(names.get(), gn) == 0) {
      GENERAL_NAME_free(gn);
      return Internal(OpenSslError("building names"));
    }
  }

  ASSIGN_OR_RETURN(PkeyPtr key, NewKey());
  ASSIGN_OR_RETURN(X509Ptr cert, NewCert(common_name, key.get(), days));
  if (X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get())) != 1) {
    return Internal(OpenSslError("setting the issuer"));
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, ca_cert.get(), cert.get(), nullptr, nullptr, 0);
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE"));
  RETURN_IF_ERROR(
      AddExtension(cert.get(), &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_ext_key_usage, "serverAuth"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always"));
  if (sk_GENERAL_NAME_num(names.get()) > 0 &&
      X509_add1_ext_i2d(cert.get(), NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) !=
          1) {
    return Internal(OpenSslError("adding subjectAltName"));
  }
  RETURN_IF_ERROR(Sign(cert.get(), ca_key.get()));
  return ToPem(cert.get(), key.get());
}

}  // namespace steward::net
