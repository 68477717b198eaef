#include "cluster/apiserver/protobuf_decode.h"

#include <bit>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/base64.h"
#include "common/time_util.h"

namespace steward::cluster {

namespace {

using kube::schema::Field;
using kube::schema::Message;
using kube::schema::ValueKind;

constexpr std::string_view kMagic("k8s\0", 4);
// Deeper nesting than any Kubernetes object has; bounds the recursion on hostile input.
constexpr int kMaxDepth = 64;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Reads protobuf wire primitives from a byte range.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool done() const { return pos_ >= bytes_.size(); }

  bool Varint(uint64_t* out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= bytes_.size()) return false;
      auto byte = static_cast<uint8_t>(bytes_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) {
        *out = value;
        return true;
      }
    }
    return false;
  }
  bool Fixed(size_t size, uint64_t* out) {
    if (bytes_.size() - pos_ < size) return false;
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) {
      value |= static_cast<uint64_t>(static_cast<uint8_t>(bytes_[pos_ + i])) << (8 * i);
    }
    pos_ += size;
    *out = value;
    return true;
  }
  bool Bytes(std::string_view* out) {
    uint64_t size = 0;
    if (!Varint(&size) || size > bytes_.size() - pos_) return false;
    *out = bytes_.substr(pos_, size);
    pos_ += size;
    return true;
  }
  // Reads one field's tag; false at a malformed tag.
  bool Tag(uint32_t* number, uint32_t* wire_type) {
    uint64_t key = 0;
    if (!Varint(&key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) return false;
    *number = static_cast<uint32_t>(key >> 3);
    *wire_type = static_cast<uint32_t>(key & 7);
    return true;
  }
  bool Skip(uint32_t wire_type) {
    uint64_t ignored = 0;
    std::string_view ignored_bytes;
    switch (wire_type) {
      case kVarint:
        return Varint(&ignored);
      case kFixed64:
        return Fixed(8, &ignored);
      case kLengthDelimited:
        return Bytes(&ignored_bytes);
      case kFixed32:
        return Fixed(4, &ignored);
      default:
        return false;  // groups are not used by Kubernetes
    }
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

Status Malformed(std::string_view where) {
  return InvalidArgument("malformed protobuf data in " + std::string(where));
}

bool IsVarintKind(ValueKind k) {
  return k == ValueKind::kBool || k == ValueKind::kInt32 || k == ValueKind::kInt64 ||
         k == ValueKind::kUint32;
}

Json ScalarFromVarint(ValueKind kind, uint64_t v) {
  switch (kind) {
    case ValueKind::kBool:
      return v != 0;
    case ValueKind::kInt32:
      return static_cast<int32_t>(static_cast<uint32_t>(v));
    case ValueKind::kUint32:
      return static_cast<uint32_t>(v);
    default:
      return static_cast<int64_t>(v);
  }
}

bool IsZero(const Json& v) {
  if (v.is_string()) return v.get_ref<const std::string&>().empty();
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>() == 0;
  if (v.is_number_unsigned()) return v.get<uint64_t>() == 0;
  if (v.is_number_float()) return v.get<double>() == 0;
  return false;
}

// meta/v1 Time and MicroTime: {1: seconds, 2: nanos}.
StatusOr<Json> DecodeTime(std::string_view bytes, bool micro) {
  Reader r(bytes);
  int64_t seconds = 0;
  int64_t nanos = 0;
  while (!r.done()) {
    uint32_t number = 0;
    uint32_t wire = 0;
    if (!r.Tag(&number, &wire)) return Malformed("Time");
    uint64_t v = 0;
    if ((number == 1 || number == 2) && wire == kVarint) {
      if (!r.Varint(&v)) return Malformed("Time");
      if (number == 1) {
        seconds = static_cast<int64_t>(v);
      } else {
        nanos = static_cast<int32_t>(static_cast<uint32_t>(v));
      }
    } else if (!r.Skip(wire)) {
      return Malformed("Time");
    }
  }
  SystemTime t = SystemTime(std::chrono::seconds(seconds));
  if (!micro) return Json(FormatRfc3339(t));
  t += std::chrono::duration_cast<SystemTime::duration>(std::chrono::nanoseconds(nanos));
  return Json(FormatRfc3339Micro(t));
}

// A message with one string or bytes field 1 (Quantity {string}, RawExtension {raw},
// FieldsV1 {Raw}).
StatusOr<std::string> DecodeField1Bytes(std::string_view bytes, std::string_view where) {
  Reader r(bytes);
  std::string out;
  while (!r.done()) {
    uint32_t number = 0;
    uint32_t wire = 0;
    if (!r.Tag(&number, &wire)) return Malformed(where);
    if (number == 1 && wire == kLengthDelimited) {
      std::string_view v;
      if (!r.Bytes(&v)) return Malformed(where);
      out = std::string(v);
    } else if (!r.Skip(wire)) {
      return Malformed(where);
    }
  }
  return out;
}

// intstr.IntOrString: {1: type (0 int, 1 string), 2: intVal, 3: strVal}.
StatusOr<Json> DecodeIntOrString(std::string_view bytes) {
  Reader r(bytes);
  int64_t type = 0;
  int32_t int_val = 0;
  std::string str_val;
  while (!r.done()) {
    uint32_t number = 0;
    uint32_t wire = 0;
    if (!r.Tag(&number, &wire)) return Malformed("IntOrString");
    uint64_t v = 0;
    std::string_view s;
    if ((number == 1 || number == 2) && wire == kVarint) {
      if (!r.Varint(&v)) return Malformed("IntOrString");
      if (number == 1) {
        type = static_cast<int64_t>(v);
      } else {
        int_val = static_cast<int32_t>(static_cast<uint32_t>(v));
      }
    } else if (number == 3 && wire == kLengthDelimited) {
      if (!r.Bytes(&s)) return Malformed("IntOrString");
      str_val = std::string(s);
    } else if (!r.Skip(wire)) {
      return Malformed("IntOrString");
    }
  }
  if (type == 1) return Json(str_val);
  return Json(int_val);
}

StatusOr<Json> EmbeddedJson(std::string_view bytes, std::string_view where) {
  auto raw = DecodeField1Bytes(bytes, where);
  if (!raw.ok()) return raw.status();
  if (raw->empty()) return Json();
  // As Go decodes a RawExtension: the last of duplicate keys wins.
  auto parsed = ParseJson(*raw, ParseOptions{.duplicate_keys = DuplicateKeys::kLastWins});
  if (!parsed.ok()) {
    return InvalidArgument("the " + std::string(where) + " in the protobuf data is not JSON");
  }
  return std::move(parsed).value();
}

Status DecodeInto(const Message& message, std::string_view bytes, Json& out, int depth);

// The JSON of one length-delimited element of a non-scalar kind; nullopt means "leave unset"
// (an empty Time).
StatusOr<std::optional<Json>> DecodeLengthDelimited(const Field& f, std::string_view bytes,
                                                    int depth) {
  switch (f.kind) {
    case ValueKind::kString:
      return std::optional<Json>(std::string(bytes));
    case ValueKind::kBytes:
      return std::optional<Json>(Base64Encode(bytes));
    case ValueKind::kMessage: {
      Json obj = Json::object();
      Status s = DecodeInto(*f.message, bytes, obj, depth + 1);
      if (!s.ok()) return s;
      return std::optional<Json>(std::move(obj));
    }
    case ValueKind::kTime:
    case ValueKind::kMicroTime: {
      // Go encodes the zero Time as an empty message and decodes it back to zero (null).
      if (bytes.empty()) return std::optional<Json>();
      auto t = DecodeTime(bytes, f.kind == ValueKind::kMicroTime);
      if (!t.ok()) return t.status();
      return std::optional<Json>(std::move(t).value());
    }
    case ValueKind::kQuantity: {
      auto q = DecodeField1Bytes(bytes, "Quantity");
      if (!q.ok()) return q.status();
      return std::optional<Json>(q->empty() ? std::string("0") : std::move(q).value());
    }
    case ValueKind::kIntOrString: {
      auto v = DecodeIntOrString(bytes);
      if (!v.ok()) return v.status();
      return std::optional<Json>(std::move(v).value());
    }
    case ValueKind::kRawExtension:
    case ValueKind::kFieldsV1: {
      auto v = EmbeddedJson(bytes, f.kind == ValueKind::kFieldsV1 ? "FieldsV1" : "RawExtension");
      if (!v.ok()) return v.status();
      if (v->is_null()) return std::optional<Json>();
      return std::optional<Json>(std::move(v).value());
    }
    default:
      return InvalidArgument("field " + f.name + " is not length-delimited");
  }
}

// Reads a scalar of `f.kind` with the given wire type (not packed).
StatusOr<Json> DecodeScalar(const Field& f, uint32_t wire, Reader& r) {
  if (IsVarintKind(f.kind) && wire == kVarint) {
    uint64_t v = 0;
    if (!r.Varint(&v)) return Malformed(f.name);
    return ScalarFromVarint(f.kind, v);
  }
  if (f.kind == ValueKind::kDouble && wire == kFixed64) {
    uint64_t v = 0;
    if (!r.Fixed(8, &v)) return Malformed(f.name);
    return Json(std::bit_cast<double>(v));
  }
  return InvalidArgument("field " + f.name + " has wire type " + std::to_string(wire));
}

// A map entry {1: key, 2: value}.
Status DecodeMapEntry(const Field& f, std::string_view bytes, Json& map, int depth) {
  Reader r(bytes);
  std::string key;
  std::optional<Json> value;
  while (!r.done()) {
    uint32_t number = 0;
    uint32_t wire = 0;
    if (!r.Tag(&number, &wire)) return Malformed(f.name);
    if (number == 1 && wire == kLengthDelimited) {
      std::string_view k;
      if (!r.Bytes(&k)) return Malformed(f.name);
      key = std::string(k);
    } else if (number == 2 && wire == kLengthDelimited) {
      std::string_view v;
      if (!r.Bytes(&v)) return Malformed(f.name);
      auto decoded = DecodeLengthDelimited(f, v, depth);
      if (!decoded.ok()) return decoded.status();
      value = std::move(decoded).value();
    } else if (number == 2) {
      auto scalar = DecodeScalar(f, wire, r);
      if (!scalar.ok()) return scalar.status();
      value = std::move(scalar).value();
    } else if (!r.Skip(wire)) {
      return Malformed(f.name);
    }
  }
  if (!value) {
    // An absent value is the zero value of the map's value type.
    switch (f.kind) {
      case ValueKind::kString:
      case ValueKind::kBytes:
        value = std::string();
        break;
      case ValueKind::kQuantity:
        value = std::string("0");
        break;
      case ValueKind::kBool:
        value = false;
        break;
      case ValueKind::kMessage:
        value = Json::object();
        break;
      default:
        value = 0;
    }
  }
  map[key] = std::move(*value);
  return Status::Ok();
}

Status DecodeField(const Field& f, uint32_t wire, Reader& r, Json& out, int depth) {
  if (f.map) {
    std::string_view entry;
    if (wire != kLengthDelimited || !r.Bytes(&entry)) return Malformed(f.name);
    Json& map = out[f.name];
    if (!map.is_object()) map = Json::object();
    return DecodeMapEntry(f, entry, map, depth);
  }
  bool scalar = IsVarintKind(f.kind) || f.kind == ValueKind::kDouble;
  if (f.repeated) {
    Json& list = out[f.name];
    if (!list.is_array()) list = Json::array();
    if (scalar && wire == kLengthDelimited) {
      // Packed repeated scalars.
      std::string_view packed;
      if (!r.Bytes(&packed)) return Malformed(f.name);
      Reader p(packed);
      while (!p.done()) {
        auto v = DecodeScalar(f, f.kind == ValueKind::kDouble ? kFixed64 : kVarint, p);
        if (!v.ok()) return v.status();
        list.push_back(std::move(v).value());
      }
      return Status::Ok();
    }
    if (scalar) {
      auto v = DecodeScalar(f, wire, r);
      if (!v.ok()) return v.status();
      list.push_back(std::move(v).value());
      return Status::Ok();
    }
    std::string_view element;
    if (wire != kLengthDelimited || !r.Bytes(&element)) return Malformed(f.name);
    auto v = DecodeLengthDelimited(f, element, depth);
    if (!v.ok()) return v.status();
    list.push_back(v->has_value() ? std::move(**v) : Json());
    return Status::Ok();
  }
  if (scalar) {
    auto v = DecodeScalar(f, wire, r);
    if (!v.ok()) return v.status();
    // encoding/json omitempty: a value field at its zero value is not written.
    if (!f.pointer && IsZero(*v)) {
      out.erase(f.name);
    } else {
      out[f.name] = std::move(v).value();
    }
    return Status::Ok();
  }
  std::string_view bytes;
  if (wire != kLengthDelimited || !r.Bytes(&bytes)) return Malformed(f.name);
  if (f.kind == ValueKind::kMessage) {
    // A message seen twice is merged (protobuf semantics); an inline one fills the parent.
    if (f.inlined) return DecodeInto(*f.message, bytes, out, depth + 1);
    Json& target = out[f.name];
    if (!target.is_object()) target = Json::object();
    return DecodeInto(*f.message, bytes, target, depth + 1);
  }
  auto v = DecodeLengthDelimited(f, bytes, depth);
  if (!v.ok()) return v.status();
  bool zero = !v->has_value() || IsZero(**v) ||
              (f.kind == ValueKind::kIntOrString && (**v == Json(0) || **v == Json("")));
  if (!v->has_value() || (!f.pointer && zero)) {
    out.erase(f.name);
  } else {
    out[f.name] = std::move(**v);
  }
  return Status::Ok();
}

Status DecodeInto(const Message& message, std::string_view bytes, Json& out, int depth) {
  if (depth > kMaxDepth) return InvalidArgument("protobuf data nested too deeply");
  Reader r(bytes);
  while (!r.done()) {
    uint32_t number = 0;
    uint32_t wire = 0;
    if (!r.Tag(&number, &wire)) return Malformed(message.name);
    const Field* f = message.ByNumber(static_cast<int>(number));
    if (f == nullptr) {
      if (!r.Skip(wire)) return Malformed(message.name);
      continue;
    }
    Status s = DecodeField(*f, wire, r, out, depth);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Json> DecodeProtobufMessage(const kube::schema::Message& message, std::string_view bytes) {
  Json out = Json::object();
  Status s = DecodeInto(message, bytes, out, 0);
  if (!s.ok()) return s;
  return out;
}

StatusOr<Json> DecodeKubernetesProtobuf(std::string_view body) {
  if (body.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgument("the protobuf body does not start with the Kubernetes magic number");
  }
  // runtime.Unknown {1: typeMeta {1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding,
  // 4: contentType}.
  Reader r(body.substr(kMagic.size()));
  std::string api_version;
  std::string kind;
  std::string encoding;
  std::string_view raw;
  while (!r.done()) {
    uint32_t number = 0;
    uint32_t wire = 0;
    if (!r.Tag(&number, &wire)) return Malformed("runtime.Unknown");
    std::string_view v;
    if (number >= 1 && number <= 4 && wire == kLengthDelimited) {
      if (!r.Bytes(&v)) return Malformed("runtime.Unknown");
    } else {
      if (!r.Skip(wire)) return Malformed("runtime.Unknown");
      continue;
    }
    if (number == 1) {
      Reader t(v);
      while (!t.done()) {
        uint32_t n = 0;
        uint32_t w = 0;
        std::string_view s;
        if (!t.Tag(&n, &w)) return Malformed("runtime.TypeMeta");
        if ((n == 1 || n == 2) && w == kLengthDelimited) {
          if (!t.Bytes(&s)) return Malformed("runtime.TypeMeta");
          (n == 1 ? api_version : kind) = std::string(s);
        } else if (!t.Skip(w)) {
          return Malformed("runtime.TypeMeta");
        }
      }
    } else if (number == 2) {
      raw = v;
    } else if (number == 3) {
      encoding = std::string(v);
    }
  }
  if (!encoding.empty()) {
    return InvalidArgument("unsupported protobuf content encoding \"" + encoding + "\"");
  }
  const kube::schema::Message* message = kube::schema::MessageForKind(api_version, kind);
  if (message == nullptr && kind == "DeleteOptions")
    message = kube::schema::FindMessage("meta.DeleteOptions");
  if (message == nullptr) {
    return InvalidArgument("no kind \"" + kind + "\" is registered for version \"" + api_version +
                           "\"");
  }
  auto object = DecodeProtobufMessage(*message, raw);
  if (!object.ok()) return object.status();
  (*object)["apiVersion"] = api_version;
  (*object)["kind"] = kind;
  return object;
}

}  // namespace steward::cluster
