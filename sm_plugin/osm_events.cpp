#include "sm_plugin/osm_events.h"

#include <cstdint>
#include <string>

namespace railyard::sm_plugin {

namespace {

CounterPort port_of(const osm_epi_port_id_t& p) {
  // node_name is NUL-terminated by OpenSM (osm_epi_create_port_id); bounded anyway.
  return CounterPort{p.node_guid, p.port_num, std::string(p.node_name, strnlen(p.node_name, OSM_EPI_NODE_NAME_LEN))};
}

TrapEvent trap_of(const ib_mad_notice_attr_t& n) {
  TrapEvent t;
  t.generic = ib_notice_is_generic(&n);
  t.issuer_lid = cl_ntoh16(n.issuer_lid);
  if (t.generic) {
    t.trap_num = cl_ntoh16(n.g_or_v.generic.trap_num);
    t.producer_type = cl_ntoh32(ib_notice_get_prod_type(&n));
    if (t.trap_num == SM_LINK_STATE_CHANGED_TRAP) t.lid = cl_ntoh16(n.data_details.ntc_128.sw_lid);
  } else {
    t.trap_num = cl_ntoh16(n.g_or_v.vend.dev_id);
    t.producer_type = cl_ntoh32(ib_notice_get_vend_id(&n));
  }
  return t;
}

}  // namespace

std::optional<EventBody> event_from_osm(osm_epi_event_id_t id, const void* data) {
  switch (id) {
    case OSM_EVENT_ID_SUBNET_UP: return SimpleEvent{SimpleKind::kSubnetUp};
    case OSM_EVENT_ID_HEAVY_SWEEP_START: return SimpleEvent{SimpleKind::kHeavySweepStart};
    case OSM_EVENT_ID_HEAVY_SWEEP_DONE: return SimpleEvent{SimpleKind::kHeavySweepDone};
    case OSM_EVENT_ID_STATE_CHANGE: return SimpleEvent{SimpleKind::kStateChange};
    case OSM_EVENT_ID_SA_DB_DUMPED: return SimpleEvent{SimpleKind::kSaDbDumped};
    case OSM_EVENT_ID_UCAST_ROUTING_DONE: {
      // The data is the flag itself, cast to a pointer (osm_ucast_mgr.c, osm_state_mgr.c).
      const auto flag = static_cast<osm_epi_ucast_routing_flags_t>(reinterpret_cast<uintptr_t>(data));
      UcastRoutingDoneEvent e;
      e.reason = flag == UCAST_ROUTING_REROUTE      ? RoutingReason::kReroute
                 : flag == UCAST_ROUTING_HEAVY_SWEEP ? RoutingReason::kHeavySweep
                                                     : RoutingReason::kNone;
      return e;
    }
    default: break;
  }
  if (data == nullptr) return std::nullopt;
  switch (id) {
    case OSM_EVENT_ID_TRAP: return trap_of(*static_cast<const ib_mad_notice_attr_t*>(data));
    case OSM_EVENT_ID_LFT_CHANGE: {
      const auto& c = *static_cast<const osm_epi_lft_change_event_t*>(data);
      LftChangeEvent e;
      if (c.p_sw != nullptr && c.p_sw->p_node != nullptr) {
        e.switch_guid = cl_ntoh64(osm_node_get_node_guid(c.p_sw->p_node));
        e.switch_lid = cl_ntoh16(osm_node_get_base_lid(c.p_sw->p_node, 0));
      }
      e.block = (c.flags & LFT_CHANGED_BLOCK) ? static_cast<int32_t>(c.block_num) : -1;
      e.lft_top = c.lft_top;
      return e;
    }
    case OSM_EVENT_ID_PORT_DATA_COUNTERS: {
      const auto& c = *static_cast<const osm_epi_dc_event_t*>(data);
      return PortCountersEvent{port_of(c.port_id), c.xmit_data, c.rcv_data, c.xmit_pkts, c.rcv_pkts,
                               c.unicast_xmit_pkts, c.unicast_rcv_pkts, c.multicast_xmit_pkts,
                               c.multicast_rcv_pkts, static_cast<int64_t>(c.time_diff_s)};
    }
    case OSM_EVENT_ID_PORT_ERRORS: {
      const auto& c = *static_cast<const osm_epi_pe_event_t*>(data);
      return PortErrorsEvent{port_of(c.port_id), c.symbol_err_cnt, c.link_err_recover, c.link_downed,
                             c.rcv_err, c.rcv_rem_phys_err, c.rcv_switch_relay_err, c.xmit_discards,
                             c.xmit_constraint_err, c.rcv_constraint_err, c.link_integrity, c.buffer_overrun,
                             c.vl15_dropped, c.xmit_wait, static_cast<int64_t>(c.time_diff_s)};
    }
    case OSM_EVENT_ID_PORT_SELECT: {
      const auto& c = *static_cast<const osm_epi_ps_event_t*>(data);
      return PortSelectEvent{port_of(c.port_id), c.xmit_wait, static_cast<int64_t>(c.time_diff_s)};
    }
    default: return std::nullopt;
  }
}

}  // namespace railyard::sm_plugin
