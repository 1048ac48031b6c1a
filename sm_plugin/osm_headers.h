// The one place railyard includes OpenSM's headers (OpenSM 3.3.23, Debian's
// libopensm-dev, include path /usr/include/infiniband).
//
// Two traps, both silent (docs OPENSM_NOTES.md):
//  - <opensm/osm_config.h> must come first: it defines ENABLE_OSM_PERF_MGR and
//    HAVE_LIBPTHREAD, which change the layout of osm_opensm_t / osm_subn_t.
//    Without it the plugin reads OpenSM's structs at the wrong offsets.
//  - osm_event_plugin.h has a struct member named `delete`, a C++ keyword: the
//    standard headers are included first (so the macro cannot touch them) and
//    the member is renamed `delete_` while OpenSM's headers are parsed. The
//    layout is unchanged; only the spelling differs on our side.
#pragma once

// Standard headers that OpenSM's headers pull in, included before the macro.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <new>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

extern "C" {
#define delete delete_
#include <opensm/osm_config.h>  // must stay first of the OpenSM headers
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_file_ids.h>
#include <opensm/osm_log.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>
#undef delete
}
