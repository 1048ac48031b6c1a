// Sub-command registration for the `railyard` tool. Each group lives in its
// own file and adds itself to the top-level app.
#pragma once

namespace CLI {
class App;
}

namespace railyard::cli {

void add_topo_commands(CLI::App& app);    // topo gen, topo show  (topo_cmd.cpp)
void add_route_commands(CLI::App& app);   // route, lids          (route_cmd.cpp)
void add_verify_commands(CLI::App& app);  // verify, compare      (verify_cmd.cpp)
void add_lfts_commands(CLI::App& app);    // lfts diff            (lfts_cmd.cpp)
void add_ar_commands(CLI::App& app);      // ar                   (ar_cmd.cpp)
void add_sharp_commands(CLI::App& app);   // sharp                (sharp_cmd.cpp)

}  // namespace railyard::cli
