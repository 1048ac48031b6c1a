// PluginLink: the lines of its connections, which one is *the* plugin, and
// what is sent to whom (controller/plugin_link.h).
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "api/protocol/command_codec.h"
#include "controller/bounded_json.h"
#include "controller/plugin_link.h"
#include "controller/plugin_link/session.h"

namespace railyard::controller {

namespace {

// Equal tokens, in time that does not depend on where they differ (nor on
// their lengths: both are hashed first).
bool same_token(const std::string& a, const std::string& b) {
  unsigned char da[SHA256_DIGEST_LENGTH], db[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(a.data()), a.size(), da);
  SHA256(reinterpret_cast<const unsigned char*>(b.data()), b.size(), db);
  return CRYPTO_memcmp(da, db, sizeof da) == 0;
}

// `"type":"<t>"` can only be the structure of a line (inside a JSON string
// the quotes are escaped): a cheap look before parsing a line that may be
// a 9 MB fabric.
bool may_be_type(const std::string& line, std::string_view type) {
  return line.find("\"type\":\"" + std::string(type) + "\"") != std::string::npos;
}

// FNV-1a: the id of a policy line names its YAML (the same on every member).
std::string policy_id(const std::string& yaml) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : yaml) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "policy-%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

void PluginLink::end_session(const std::shared_ptr<Session>& s, const std::string& why) {
  const bool was_plugin = current_ == s;
  if (was_plugin) {
    current_.reset();
    connected_ = false;
  }
  s->closed = true;
  s->close();
  open_.erase(s);
  connections_ = open_.size();
  if (!why.empty()) {
    log(LogLevel::kInfo, (s->tls ? "plugin_listen" : options_.path) + ": connection from " + s->who() +
                             " ended: " + why);
  }
  if (!was_plugin) return;
  elect(nullptr);
  if (!current_) on_connection_(false);
}

void PluginLink::read(std::shared_ptr<Session> s) {
  asio::streambuf& into = s->hello_buffer ? *s->hello_buffer : s->buffer;
  s->with_stream([&](auto& stream) {
    asio::async_read_until(
        stream, into, '\n', asio::bind_executor(strand_, [this, s, &into](boost::system::error_code ec, size_t n) {
          if (ec == asio::error::not_found) {
            // The buffer is full and holds no newline: the peer broke the protocol.
            log(LogLevel::kWarn, (s->tls ? "plugin_listen" : options_.path) + ": " + s->who() +
                                     " sent a line longer than " +
                                     std::to_string(s->hello_buffer ? kMaxHelloBytes : options_.max_line_bytes) +
                                     " bytes; closing its connection");
            end_session(s, "line too long");
            return;
          }
          if (ec) {
            if (s->closed) return;  // ended here (end_session, elect, close_all): said there
            // Every other end is said, with its reason: a connection never
            // vanishes from the log.
            end_session(s, ec == asio::error::eof || ec == asio::ssl::error::stream_truncated ? "closed by the peer"
                                                                                               : ec.message());
            return;
          }
          std::string line(n - 1, '\0');
          asio::buffer_copy(asio::buffer(line), into.data(), n - 1);
          into.consume(n);
          if (s->closed) return;  // replaced or stopped while this line was read
          on_line(s, std::move(line));
          if (s->confirm_due && !s->writing && !s->closed) {
            s->writing = true;
            write_next(s);
          }
          if (s->hello_buffer && s->authenticated && !s->closed) {
            // The hello was accepted: what came after it moves to the full-size buffer.
            const size_t rest = s->hello_buffer->size();
            s->buffer.commit(asio::buffer_copy(s->buffer.prepare(rest), s->hello_buffer->data()));
            s->hello_buffer.reset();
          }
          if (!s->closed) read(s);
        }));
  });
}

void PluginLink::on_line(const std::shared_ptr<Session>& s, std::string line) {
  // Told not_leader (it may have sent its hello before it read that): nothing
  // it says counts, and nothing more is written to it.
  if (s->leaving) return;
  const bool hello = may_be_type(line, "hello");
  const bool sm_state = !hello && may_be_type(line, "sm_state");
  const bool ack = !hello && !sm_state && may_be_type(line, "ack");
  nlohmann::json j;
  std::string type;
  if (hello || sm_state) {
    std::string error;
    j = parse_bounded_json(line, &error);
    if (j.is_object() && j.contains("type") && j["type"].is_string()) type = j["type"].get<std::string>();
  }
  if (!s->authenticated) {
    // TLS: the first line must be a hello with the right token.
    const bool good = type == "hello" && j.contains("token") && j["token"].is_string() &&
                      same_token(j["token"].get<std::string>(), options_.token);
    if (!good) {
      const uint64_t refused = ++peers_refused_;
      log(LogLevel::kWarn, "plugin_listen: refused " + s->who() +
                               ": its first line is not a hello with the right token (" + std::to_string(refused) +
                               " refused so far)");
      end_session(s, "");
      return;
    }
    const size_t served = static_cast<size_t>(std::count_if(
        open_.begin(), open_.end(), [](const std::shared_ptr<Session>& o) { return o->authenticated; }));
    if (served >= options_.max_connections) {
      ++peers_refused_;
      log(LogLevel::kWarn, "plugin_listen: refused " + s->who() + ": already " + std::to_string(served) +
                               " plugins connected (the most)");
      end_session(s, "");
      return;
    }
    s->authenticated = true;
    s->hello_timer.cancel();
  }
  ++s->lines_read;
  if (type == "hello") {
    // Hellos are stored by the controller: never with the secret in them.
    if (j.contains("token")) {
      j.erase("token");
      line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    s->hello_line = line;
    if (j.contains("sm_state") && j["sm_state"].is_string()) s->sm_state = j["sm_state"].get<std::string>();
  } else if (type == "sm_state" && j.contains("state") && j["state"].is_string()) {
    s->sm_state = j["state"].get<std::string>();
  }
  if ((type == "hello" || type == "sm_state") && s->sm_state == "master") s->master_order = ++order_;
  bool first = false;
  if (!s->spoke) {
    s->spoke = true;
    s->spoke_order = ++order_;
    first = true;
    // Not the leader: say who is, and close.
    LeaderHook hook;
    {
      std::lock_guard lock(leader_mu_);
      hook = leader_hook_;
    }
    if (hook) {
      if (std::optional<std::string> leader = hook()) {
        log(LogLevel::kInfo, "not the leader: " + s->who() + " sent to " + (leader->empty() ? "(unknown)" : *leader));
        s->leaving = true;
        queue(s, protocol::encode_command({protocol::CommandKind::kNotLeader, "", *leader}) + "\n");
        return;
      }
    }
    if (!policy_line_.empty()) queue(s, policy_line_);
  }
  if (s->leaving) return;
  // Handled once this returns, whoever it is from (another plugin's lines
  // are ignored by rule): confirmed with the next write (write_next).
  s->confirm_due = true;
  elect(first ? s : nullptr);
  if (current_ != s) {
    if (!hello && !sm_state && !ack) ++lines_ignored_;
    return;
  }
  try {
    on_line_(line);
  } catch (const std::exception& e) {
    // A bad line never ends the session.
    log(LogLevel::kError, "a line from " + s->who() + " failed: " + e.what());
  } catch (...) {
    log(LogLevel::kError, "a line from " + s->who() + " failed");
  }
}

// On the strand: the `received` for what s has sent so far, when this member
// leads (a member that lost the lease records nothing: the plugin sends the
// lines again to the leader).
std::optional<std::string> PluginLink::confirmation(const std::shared_ptr<Session>& s) {
  s->confirm_due = false;
  if (s->leaving) return std::nullopt;
  LeaderHook hook;
  {
    std::lock_guard lock(leader_mu_);
    hook = leader_hook_;
  }
  if (hook && hook()) return std::nullopt;
  protocol::Command c{protocol::CommandKind::kReceived};
  c.lines = s->lines_read;
  return protocol::encode_command(c) + "\n";
}

void PluginLink::elect(const std::shared_ptr<Session>& first_line_of) {
  std::shared_ptr<Session> master;
  for (const std::shared_ptr<Session>& s : open_) {
    if (s->closed || s->leaving || !s->spoke || s->sm_state != "master") continue;
    if (!master || s->master_order > master->master_order) master = s;
  }
  std::shared_ptr<Session> next = current_;
  if (master) {
    next = master;
  } else if (first_line_of) {
    next = first_line_of;  // today's rule: a plugin that speaks takes over
  } else if (!current_) {
    for (const std::shared_ptr<Session>& s : open_) {
      if (s->closed || s->leaving || !s->spoke) continue;
      if (!next || s->spoke_order > next->spoke_order) next = s;
    }
  }
  if (next == current_) return;
  const std::shared_ptr<Session> old = current_;
  current_ = next;
  connected_ = next != nullptr;
  if (old && old->sm_state.empty() && next == first_line_of) {
    // An older plugin (no SM state): replaced and closed, as always.
    log(LogLevel::kInfo, "the connection from " + next->who() + " replaces the one from " + old->who());
    old->closed = true;
    old->close();
    open_.erase(old);
    connections_ = open_.size();
  } else {
    log(LogLevel::kInfo, "the plugin is now " + next->who() + " (sm_state " +
                             (next->sm_state.empty() ? "unknown" : next->sm_state) + ")");
  }
  on_connection_(true);
  if (next != first_line_of && !next->hello_line.empty()) {
    // Its earlier lines were not read: its hello (a new seq baseline), then
    // its whole fabric.
    try {
      on_line_(next->hello_line);
    } catch (...) {
    }
    queue(next, protocol::encode_command({protocol::CommandKind::kSendFabric, ""}) + "\n");
  }
}

bool PluginLink::send(const std::string& line) {
  if (!connected_.load()) return false;
  asio::post(strand_, [this, text = line + "\n"]() mutable {
    const std::shared_ptr<Session> s = current_;
    if (!s || s->closed) return;  // gone meanwhile: as if the write had failed
    queue(s, std::move(text));
  });
  return true;
}

void PluginLink::broadcast_policy(const std::string& yaml) {
  asio::post(strand_, [this, yaml] {
    if (yaml == policy_yaml_) return;
    policy_yaml_ = yaml;
    policy_line_ = protocol::encode_command({protocol::CommandKind::kPolicy, policy_id(yaml), "", yaml}) + "\n";
    for (const std::shared_ptr<Session>& s : open_) {
      if (!s->closed && !s->leaving && s->spoke) queue(s, policy_line_);
    }
  });
}

void PluginLink::drop_all_not_leader(const std::string& leader) {
  asio::post(strand_, [this, leader] {
    const std::string line = protocol::encode_command({protocol::CommandKind::kNotLeader, "", leader}) + "\n";
    for (const std::shared_ptr<Session>& s : open_) {
      if (s->closed || s->leaving) continue;
      s->leaving = true;
      queue(s, line);
    }
    const bool had = current_ != nullptr;
    current_.reset();
    connected_ = false;
    if (had) on_connection_(false);
    log(LogLevel::kInfo, "stepped down: every plugin told the leader is " + (leader.empty() ? "(unknown)" : leader));
  });
}

// On the strand.
void PluginLink::queue(const std::shared_ptr<Session>& s, std::string text) {
  if (s->closed) return;
  s->outbox.push_back(std::move(text));
  if (s->writing) return;
  s->writing = true;
  write_next(s);
}

// On the strand; one write at a time per connection.
void PluginLink::write_next(std::shared_ptr<Session> s) {
  if (s->closed) {
    s->writing = false;
    return;
  }
  if (s->outbox.empty() && s->confirm_due) {
    // One `received` for every line read while the last write was out.
    if (std::optional<std::string> line = confirmation(s)) s->outbox.push_back(std::move(*line));
  }
  if (s->outbox.empty()) {
    s->writing = false;
    // Told not_leader: once it is written, our side is shut for sending and
    // the connection closes when the peer closes it (or in 2 s). Closing at
    // once, with the peer's hello and fabric still unread here, would send a
    // reset, which can destroy the not_leader line before the plugin reads
    // it: the plugin would then retry this member instead of the leader.
    if (s->leaving) {
      boost::system::error_code ignored;
      if (s->tls) {
        s->tls->lowest_layer().shutdown(plugin_tcp::socket::shutdown_send, ignored);
      } else {
        s->unix_socket->shutdown(plugin_stream::socket::shutdown_send, ignored);
      }
      s->hello_timer.expires_after(std::chrono::seconds(2));
      s->hello_timer.async_wait(asio::bind_executor(strand_, [this, s](boost::system::error_code ec) {
        if (!ec && open_.count(s) != 0) end_session(s, "told not_leader, it had not closed within 2 s");
      }));
    }
    return;
  }
  s->with_stream([&](auto& stream) {
    asio::async_write(stream, asio::buffer(s->outbox.front()),
                      asio::bind_executor(strand_, [this, s](boost::system::error_code ec, size_t) {
                        s->outbox.pop_front();
                        if (ec) {
                          // Ended here: the pending read sees it closed and
                          // says nothing more (a session only marked closed
                          // would stay among the open ones).
                          s->writing = false;
                          end_session(s, std::string(s->leaving ? "told not_leader, then a write failed: "
                                                                : "write failed: ") +
                                             ec.message());
                          return;
                        }
                        write_next(s);
                      }));
  });
}

}  // namespace railyard::controller
