#include "api/protocol/decode_error.h"

namespace railyard::protocol {

std::string DecodeError::message() const {
  std::string out = type.empty() ? std::string() : type + ": ";
  if (!field.empty()) out += field + " ";
  return out + reason;
}

}  // namespace railyard::protocol
