// PluginLink: the TLS listener (plugin_listen), its handshake and the token
// a plugin's first line must carry (controller/plugin_link.h).
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>

#include "controller/plugin_link.h"
#include "controller/plugin_link/session.h"

namespace railyard::controller {

Result<std::unique_ptr<asio::ssl::context>> make_plugin_tls_context(const std::string& cert_file,
                                                                     const std::string& key_file) {
  boost::system::error_code ec;
  auto ctx = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                   ec);
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec) return Error{"plugin_tls_cert " + cert_file + ": cannot load: " + ec.message()};
  ctx->use_private_key_file(key_file, asio::ssl::context::pem, ec);
  // OpenSSL checks the key against the certificate as it loads it.
  if (ec && ec.message().find("key values mismatch") == std::string::npos) {
    return Error{"plugin_tls_key " + key_file + ": cannot load: " + ec.message()};
  }
  if (ec || SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return Error{"plugin_tls_key " + key_file + " does not match plugin_tls_cert " + cert_file};
  }
  return ctx;
}

Status PluginLink::start_tls() {
  const std::string where = "plugin_listen " + options_.tls_host + ":" + std::to_string(options_.tls_port);
  if (options_.token.empty()) return Error{where + ": TLS needs a token (plugin_token_file)"};
  if (options_.tls_cert_file.empty() || options_.tls_key_file.empty()) {
    return Error{where + ": TLS needs plugin_tls_cert and plugin_tls_key"};
  }
  Result<std::unique_ptr<asio::ssl::context>> ctx =
      make_plugin_tls_context(options_.tls_cert_file, options_.tls_key_file);
  if (!ctx) return ctx.error();
  boost::system::error_code ec;
  tls_context_ = std::move(*ctx);
  plugin_tcp::resolver resolver(io_);
  const std::string host = options_.tls_host.empty() ? "127.0.0.1" : options_.tls_host;
  auto found = resolver.resolve(host, std::to_string(options_.tls_port), plugin_tcp::resolver::numeric_service, ec);
  if (ec || found.empty()) return Error{where + ": cannot resolve " + host + ": " + ec.message()};
  const plugin_tcp::endpoint endpoint = found.begin()->endpoint();
  tls_acceptor_.open(endpoint.protocol(), ec);
  if (!ec) tls_acceptor_.set_option(plugin_tcp::acceptor::reuse_address(true), ec);
  if (!ec) tls_acceptor_.bind(endpoint, ec);
  if (!ec) tls_acceptor_.listen(16, ec);
  if (ec) {
    boost::system::error_code ignored;
    tls_acceptor_.close(ignored);
    return Error{where + ": cannot listen: " + ec.message()};
  }
  tls_port_ = tls_acceptor_.local_endpoint(ec).port();
  return {};
}

void PluginLink::accept_tls() {
  tls_acceptor_.async_accept(strand_, [this](boost::system::error_code ec, plugin_tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !tls_acceptor_.is_open()) return;
    const std::string where = "plugin_listen :" + std::to_string(tls_port_.load());
    if (ec) {
      log(LogLevel::kWarn, where + ": accept failed: " + ec.message());
      // Out of descriptors and the like: again shortly, not in a busy loop.
      auto retry = std::make_shared<asio::steady_timer>(strand_, std::chrono::milliseconds(200));
      retry->async_wait([this, retry](boost::system::error_code wait_ec) {
        if (!wait_ec && tls_acceptor_.is_open()) accept_tls();
      });
      return;
    }
    boost::system::error_code ignored;
    const plugin_tcp::endpoint remote = socket.remote_endpoint(ignored);
    std::string peer = remote.address().to_string() + ":" + std::to_string(remote.port());
    const size_t waiting = static_cast<size_t>(std::count_if(
        open_.begin(), open_.end(), [](const std::shared_ptr<Session>& o) { return !o->authenticated; }));
    if (waiting >= options_.max_connections) {
      ++peers_refused_;
      log(LogLevel::kWarn, where + ": refused a connection from " + peer + ": already " + std::to_string(waiting) +
                               " connections waiting for their hello (the most)");
      socket.close(ignored);
      accept_tls();
      return;
    }
    // A controller host that vanished (power, partition) ends the
    // connection within ~11 s rather than never.
    socket.set_option(plugin_tcp::no_delay(true), ignored);
    socket.set_option(asio::socket_base::keep_alive(true), ignored);
    const int idle = 5, interval = 2, count = 3;
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    auto s = std::make_shared<Session>(std::move(socket), *tls_context_, options_.max_line_bytes + 1, strand_);
    s->peer = std::move(peer);
    log(LogLevel::kInfo, where + ": connection from " + s->who());
    open_.insert(s);
    connections_ = open_.size();
    // The handshake and a hello with the token, within hello_timeout.
    s->hello_timer.expires_after(options_.hello_timeout);
    s->hello_timer.async_wait([this, s](boost::system::error_code wait_ec) {
      if (wait_ec || s->closed || s->authenticated) return;
      const uint64_t refused = ++peers_refused_;
      log(LogLevel::kWarn, "plugin_listen: refused " + s->who() +
                               ": no TLS handshake and hello with the token within " +
                               std::to_string(options_.hello_timeout.count()) + " ms (" + std::to_string(refused) +
                               " refused so far)");
      end_session(s, "");
    });
    s->tls->async_handshake(asio::ssl::stream_base::server,
                            asio::bind_executor(strand_, [this, s](boost::system::error_code hs_ec) {
                              if (s->closed) return;
                              if (hs_ec) {
                                const uint64_t refused = ++peers_refused_;
                                log(LogLevel::kWarn, "plugin_listen: refused " + s->who() + ": TLS handshake: " +
                                                         hs_ec.message() + " (" + std::to_string(refused) +
                                                         " refused so far)");
                                end_session(s, "");
                                return;
                              }
                              read(s);
                            }));
    accept_tls();
  });
}

}  // namespace railyard::controller
