// The self-contained HTML report of `railyard verify --html`: one file, no
// network, readable without railyardd. Tables (summary, credit loops,
// congestion per pattern, worst links, problem examples) are plain HTML, each
// row carrying its key in data-key so scripts can read them; the fabric
// picture is the console's canvas (web/grid.js inlined) coloured by the
// predicted all-to-all load.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace railyard::console {

// `verify` is the document `railyard verify --json` prints; `grid` the
// fabric picture (grid.h) with loads.
std::string verify_report_html(const nlohmann::json& verify, const nlohmann::json& grid);

// Text made safe inside HTML elements and quoted attributes.
std::string html_escape(std::string_view text);

}  // namespace railyard::console
