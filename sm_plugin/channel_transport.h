// ChannelConnection: one connection of the plugin's channel to a controller,
// over a Unix stream socket or TCP with TLS (OpenSSL), non-blocking either way
// (controller_address.h).
//
// Where TLS lives: here, and only on the channel's own thread. OpenSM's
// threads never touch a socket or OpenSSL (event_channel.h). Bounds:
//  - connecting (TCP) and the TLS handshake end after `timeout`, or at once
//    when `wake_fd` becomes readable (stop());
//  - the TLS peer must present a certificate that chains to `ca_file` and
//    names the host of the address (DNS name, or IP address);
//  - TCP keepalive (5 s idle, 2 s apart, 3 probes) and TCP_USER_TIMEOUT (15 s)
//    end a connection to a controller that vanished without a FIN (host down,
//    partition), so the channel moves on to the next address;
//  - SSL_write may raise SIGPIPE (it writes with write(2), not send's
//    MSG_NOSIGNAL): the channel's thread blocks SIGPIPE for itself
//    (block_sigpipe_on_this_thread) and takes the pending one after an EPIPE.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

#include "sm_plugin/controller_address.h"

namespace railyard::sm_plugin {

class ChannelConnection {
 public:
  // What send() and recv() return besides a byte count (> 0) or 0 (recv: the
  // peer closed).
  static constexpr ssize_t kWouldBlock = -1;
  static constexpr ssize_t kFailed = -2;

  virtual ~ChannelConnection() = default;
  virtual int fd() const = 0;
  virtual ssize_t send(const char* data, size_t size, std::string& why) = 0;
  virtual ssize_t recv(char* data, size_t size, std::string& why) = 0;
  // The poll events to wait for besides POLLIN (TLS: a write that wants the
  // socket readable first, and the reverse, are rare but possible).
  virtual bool wants_write() const { return false; }
};

struct TlsClientOptions {
  std::string ca_file;  // PEM; the controller's certificate must chain to it
  std::chrono::milliseconds timeout{5000};
};

// Connects to `address`; null with `why` on failure.
std::unique_ptr<ChannelConnection> connect_controller(const ControllerAddress& address, const TlsClientOptions& tls,
                                                      int wake_fd, std::string& why);

// Blocks SIGPIPE on the calling thread (see above).
void block_sigpipe_on_this_thread();

}  // namespace railyard::sm_plugin
