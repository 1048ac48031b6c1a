#include "cli/railyardctl/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace railyard::ctl {

Table::Table(std::vector<std::string> header) : header_(std::move(header)), right_(header_.size(), false) {}

Table& Table::align_right(size_t column) {
  if (column < right_.size()) right_[column] = true;
  return *this;
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void Table::print(std::ostream& out) const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& row : rows_) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& row) {
    std::string text;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      const std::string pad(width[c] - row[c].size(), ' ');
      if (right_[c]) {
        text += pad + row[c];
      } else {
        text += row[c];
        if (!last) text += pad;
      }
      if (!last) text += "  ";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out << text << "\n";
  };
  line(header_);
  for (const auto& row : rows_) line(row);
}

std::string cell(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", value.get<double>());
    return buf;
  }
  return value.dump();
}

std::string cell(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "-";
  return cell(j[key]);
}

std::string format_time(const nlohmann::json& unix_seconds) {
  if (!unix_seconds.is_number()) return "-";
  const double t = unix_seconds.get<double>();
  if (!std::isfinite(t) || t < 0) return "-";
  const std::time_t secs = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%SZ", &tm);
  return buf;
}

std::string format_ms(const nlohmann::json& ms) {
  if (!ms.is_number()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", ms.get<double>());
  return buf;
}

}  // namespace railyard::ctl
