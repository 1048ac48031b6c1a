// Output for people: aligned text tables and the cell formats they use
// (times, missing values). Machine output is --json, never a table.
#pragma once

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace railyard::ctl {

class Table {
 public:
  explicit Table(std::vector<std::string> header);

  // Right-aligns a column (counts, LIDs).
  Table& align_right(size_t column);
  void add_row(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }
  // Columns two spaces apart, the last one unpadded; nothing but the header
  // when there are no rows.
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

// A JSON value as a cell: strings bare, null or absent as "-".
std::string cell(const nlohmann::json& value);
// j[key] as a cell, "-" when j has no such key.
std::string cell(const nlohmann::json& j, const char* key);
// A Unix time as "2024-05-01 12:34:56Z" (UTC); "-" for null.
std::string format_time(const nlohmann::json& unix_seconds);
// Milliseconds with one decimal: "12.3 ms"; "-" for null.
std::string format_ms(const nlohmann::json& ms);

}  // namespace railyard::ctl
