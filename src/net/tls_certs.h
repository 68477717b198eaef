// Generation of a private CA and a serving certificate signed by it (OpenSSL, EC P-256).
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace steward::net {

struct CertAndKey {
  std::string cert_pem;
  std::string key_pem;
};

// A self-signed CA certificate valid for `days`.
StatusOr<CertAndKey> GenerateCa(const std::string& common_name, int days = 3650);

// A serving certificate signed by `ca` for the given DNS names and IP addresses (subjectAltName),
// with serverAuth extended key usage, valid for `days`.
StatusOr<CertAndKey> GenerateServingCert(const CertAndKey& ca, const std::string& common_name,
                                         const std::vector<std::string>& dns_names,
                                         const std::vector<std::string>& ip_addresses,
                                         int days = 3650);

}  // namespace steward::net
