// UTF-8, the one check for the whole code base (policies/yaml_doc.cpp checks
// YAML text and what YAML gave it, routing/ writes JSON names, api/ checks
// what clients send).
#pragma once

#include <cstddef>
#include <string_view>

namespace railyard {

// Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF) at the front of s; 0 if there is none
// (or s is empty).
size_t utf8_sequence(std::string_view s);

}  // namespace railyard
