// spec.credentials: the platform-issued credentials of an instance (write-only values, stored
// as a fingerprint).
#include <algorithm>
#include <array>

#include "common/sha256.h"
#include "engine/model/project.h"
#include "engine/model/value_rules.h"

namespace steward::engine {
namespace {

constexpr size_t kMaxValue = 4096;
constexpr size_t kFingerprintDigits = 16;

// Never quotes the value: these are secrets.
Status ReadSecretValue(const FieldReader& f, std::string_view name, bool required,
                       std::string* out) {
  const Json* v = f.Find(name);
  const std::string path = f.PathOf(name);
  if (v == nullptr) return required ? InvalidField(path, "is required") : Status::Ok();
  if (!v->is_string()) {
    return InvalidField(path, "must be a string, got " + std::string(JsonTypeName(*v)));
  }
  const std::string& s = v->get_ref<const std::string&>();
  if (s.empty()) return InvalidField(path, "must not be empty");
  if (s.size() > kMaxValue) {
    return InvalidField(path, "must be at most " + std::to_string(kMaxValue) + " characters (got " +
                                  std::to_string(s.size()) + ")");
  }
  for (unsigned char c : s) {
    if (c < 0x21 || c > 0x7e) {
      return InvalidField(path, "must be printable ASCII without spaces (the value is not shown)");
    }
  }
  *out = s;
  return Status::Ok();
}

Status CheckBrokerUrl(std::string_view url, std::string_view path) {
  constexpr std::array<std::string_view, 4> kSchemes = {"mqtt://", "mqtts://", "ws://", "wss://"};
  for (std::string_view scheme : kSchemes) {
    if (url.starts_with(scheme) && url.size() > scheme.size()) return Status::Ok();
  }
  return InvalidField(path, "must be an mqtt://, mqtts://, ws:// or wss:// URL");
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

constexpr std::array<std::string_view, 7> kKnownKeys = {
    "FORGE_BROKER_PASSWORD", "FORGE_BROKER_URL", "FORGE_BROKER_USERNAME", "FORGE_CLIENT_ID",
    "FORGE_CLIENT_SECRET",   "FORGE_NR_SECRET",  "FORGE_PROJECT_TOKEN"};

constexpr std::array<std::string_view, 1> kAgentKeys = {"FORGE_TEAM_TOKEN"};

template <size_t N>
Status ParseFingerprint(const FieldReader& f, const std::array<std::string_view, N>& known,
                        CredentialsRef* ref) {
  RETURN_IF_ERROR(f.OnlyKnown({"fingerprint", "keys"}));
  RETURN_IF_ERROR(f.String("fingerprint", &ref->fingerprint));
  if (ref->fingerprint.size() != kFingerprintDigits || !IsHex(ref->fingerprint)) {
    return InvalidField(f.PathOf("fingerprint"),
                        "must be the 16 hex digits a GET of the project shows");
  }
  const Json* keys = f.Find("keys");
  if (keys == nullptr) return InvalidField(f.PathOf("keys"), "is required with a fingerprint");
  if (!keys->is_array()) return InvalidField(f.PathOf("keys"), "must be an array of names");
  for (size_t i = 0; i < keys->size(); ++i) {
    const Json& k = (*keys)[i];
    const std::string p = IndexPath(f.PathOf("keys"), i);
    if (!k.is_string() ||
        std::find(known.begin(), known.end(), k.get_ref<const std::string&>()) == known.end()) {
      return InvalidField(p, "must be one of the FORGE_* names of supplied credentials");
    }
    ref->keys.push_back(k.get<std::string>());
  }
  std::sort(ref->keys.begin(), ref->keys.end());
  if (std::adjacent_find(ref->keys.begin(), ref->keys.end()) != ref->keys.end()) {
    return InvalidField(f.PathOf("keys"), "must not repeat a name");
  }
  return Status::Ok();
}

Status ParseValues(const FieldReader& f, SuppliedCredentials* out) {
  RETURN_IF_ERROR(f.OnlyKnown({"clientId", "clientSecret", "token", "broker", "nodeRedSecret"}));
  StringMap& env = out->env;
  RETURN_IF_ERROR(ReadSecretValue(f, "clientId", true, &env["FORGE_CLIENT_ID"]));
  RETURN_IF_ERROR(ReadSecretValue(f, "clientSecret", true, &env["FORGE_CLIENT_SECRET"]));
  RETURN_IF_ERROR(ReadSecretValue(f, "token", true, &env["FORGE_PROJECT_TOKEN"]));
  if (const Json* broker = f.Find("broker"); broker != nullptr) {
    ASSIGN_OR_RETURN(FieldReader b, FieldReader::Of(*broker, f.PathOf("broker")));
    RETURN_IF_ERROR(b.OnlyKnown({"url", "username", "password"}));
    RETURN_IF_ERROR(ReadSecretValue(b, "url", true, &env["FORGE_BROKER_URL"]));
    RETURN_IF_ERROR(CheckBrokerUrl(env["FORGE_BROKER_URL"], b.PathOf("url")));
    RETURN_IF_ERROR(ReadSecretValue(b, "username", true, &env["FORGE_BROKER_USERNAME"]));
    RETURN_IF_ERROR(ReadSecretValue(b, "password", true, &env["FORGE_BROKER_PASSWORD"]));
  }
  std::string nr_secret;
  RETURN_IF_ERROR(ReadSecretValue(f, "nodeRedSecret", false, &nr_secret));
  if (!nr_secret.empty()) env["FORGE_NR_SECRET"] = std::move(nr_secret);
  return Status::Ok();
}

}  // namespace

CredentialsRef SuppliedCredentials::Ref() const {
  CredentialsRef ref;
  std::string canonical;
  for (const auto& [k, v] : env) {  // sorted by name
    ref.keys.push_back(k);
    canonical += k + "=" + std::to_string(v.size()) + ":" + v + "\n";
  }
  ref.fingerprint = Sha256Hex(canonical).substr(0, kFingerprintDigits);
  return ref;
}

namespace internal {

Status ParseCredentials(const Json& j, std::string path, CredentialsInput* input,
                        std::optional<CredentialsRef>* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, path));
  const bool has_values = f.Find("clientId") != nullptr || f.Find("clientSecret") != nullptr ||
                          f.Find("token") != nullptr || f.Find("broker") != nullptr ||
                          f.Find("nodeRedSecret") != nullptr;
  if (f.Find("fingerprint") != nullptr || f.Find("keys") != nullptr) {
    if (has_values) {
      return InvalidField(path, "give either the values or the fingerprint, not both");
    }
    CredentialsRef ref;
    RETURN_IF_ERROR(ParseFingerprint(f, kKnownKeys, &ref));
    if (input != nullptr) {
      input->mode = CredentialsInput::Mode::kFingerprint;
      input->ref = ref;
    }
    *out = std::move(ref);
    return Status::Ok();
  }
  if (!has_values) {
    RETURN_IF_ERROR(f.OnlyKnown({}));
    if (input != nullptr) input->mode = CredentialsInput::Mode::kGenerated;
    *out = std::nullopt;
    return Status::Ok();
  }
  if (input == nullptr) {
    return InvalidField(path, "holds credential values, which are never stored");
  }
  input->mode = CredentialsInput::Mode::kSupplied;
  RETURN_IF_ERROR(ParseValues(f, &input->values));
  input->ref = input->values.Ref();
  *out = input->ref;
  return Status::Ok();
}

Status ParseAgentCredentials(const Json& j, std::string path, CredentialsInput* input,
                             std::optional<CredentialsRef>* out) {
  ASSIGN_OR_RETURN(FieldReader f, FieldReader::Of(j, path));
  if (f.Find("fingerprint") != nullptr || f.Find("keys") != nullptr) {
    if (f.Find("token") != nullptr) {
      return InvalidField(path, "give either the token or the fingerprint, not both");
    }
    CredentialsRef ref;
    RETURN_IF_ERROR(ParseFingerprint(f, kAgentKeys, &ref));
    if (input != nullptr) {
      input->mode = CredentialsInput::Mode::kFingerprint;
      input->ref = ref;
    }
    *out = std::move(ref);
    return Status::Ok();
  }
  RETURN_IF_ERROR(f.OnlyKnown({"token"}));
  if (f.Find("token") == nullptr) {
    return InvalidField(f.PathOf("token"),
                        "is required: an agent runs with the token its platform issues");
  }
  if (input == nullptr) return InvalidField(path, "holds a token, which is never stored");
  input->mode = CredentialsInput::Mode::kSupplied;
  RETURN_IF_ERROR(ReadSecretValue(f, "token", true, &input->values.env["FORGE_TEAM_TOKEN"]));
  input->ref = input->values.Ref();
  *out = input->ref;
  return Status::Ok();
}

}  // namespace internal
}  // namespace steward::engine
